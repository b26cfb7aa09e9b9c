"""exampp validate on hostile submissions: whatever the bytes, findings (a line that cannot be read is a
``format`` finding), never an exception."""
from __future__ import annotations

from hypothesis import strategies as st

from exampp.api.validate import validate
from exampp.intake.checks import CHECKS

from .checks import put, scratch, tries
from .strategies import hostile, reports_text, responses_text, run_text


@tries(150, data=hostile(st.one_of(run_text, responses_text, reports_text)), name=st.sampled_from(["a.run", "r.jsonl"]))
def test_any_submission_gives_findings(data, name):
    with scratch() as folder:
        path = put(folder / name, data)
        result = validate([path], spec="rag24")
    for run in result.runs:
        assert {f.check for f in run.findings} <= set(CHECKS)
        assert {f.severity for f in run.findings} <= {"error", "warning"}
        assert all(f.where is not None for f in run.findings if f.check == "format")
