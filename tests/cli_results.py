"""What a failed command printed: the one ``Error:`` line the user is told, apart from the lines
that said, while it ran, that a request was being retried (exampp.progress.Tally)."""
from __future__ import annotations

import re
from typing import Any

RETRYING = re.compile(r"^\S+: retrying [\d,]+ requests?( in the last \S+)? \(.*\)$")


def one_line_error(result: Any) -> str:
    """The single ``Error: ...`` line of a click result that failed without a traceback."""
    assert result.exit_code != 0 and "Traceback" not in result.output, result.output
    lines = [line for line in result.output.strip().splitlines() if not RETRYING.match(line)]
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    return lines[0]
