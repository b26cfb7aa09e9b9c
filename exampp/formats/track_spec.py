"""Track specs: what a track holds submitted runs to (``exampp validate --spec``), as TOML.

Every key is optional; a check whose limit is not set is not made::

    track = "rag24"                      # the name shown in the findings
    docid_pattern = 'msmarco_v2\\.1_doc_\\d\\d_\\d+#\\d+_\\d+'  # every doc id matches it (from its start)
    depth = 100                          # ranked runs: at most this many documents per topic
    length_unit = "words"                # "words" (whitespace tokens) or "chars" (NFKC characters)
    length_limit = 400                   # answers: at most this long
    max_citations_per_sentence = 3
    references_max = 100                 # reports: at most this many references
    references_required = false          # reports: a references list is required
    mandatory_metadata = ["team_id", "run_id"]  # reports: metadata fields that must be set
    citation_top_k = 20                  # citations point into the top-k of the run's own ranking
    same_answer_topics = 3               # smell: one answer given to this many topics or more

    [severity]                           # per check: "error", "warning" or "off"
    missing_topics = "warning"

The checks and their default severities are :data:`exampp.intake.checks.CHECKS`; the reader
takes the names it is given, and the caller checks them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from exampp.errors import InputError
from exampp.files.io import PathLike
from exampp.formats.exampp_toml import key_line, read_toml

SEVERITIES = ("error", "warning", "off")
LENGTH_UNITS = ("words", "chars")
REQUEST_LIMITS = ("limit", "word_limit")  # the fields of a request that hold a length limit
_INT_KEYS = ("depth", "length_limit", "max_citations_per_sentence", "references_max", "citation_top_k",
             "same_answer_topics")


@dataclass(frozen=True)
class TrackSpec:
    """A track's limits and the severity of each check (see the module docstring).

    :param track: The track's name.
    :param docid_pattern: A regular expression doc ids match from their start, or None.
    :param depth: The most documents a ranked run may give a topic, or None.
    :param length_unit: ``words`` or ``chars``.
    :param length_limit: The longest an answer may be, in ``length_unit``, or None.
    :param length_limit_request_field: The field of each topic's AutoJudge request that holds its limit
        (``limit``, ``word_limit``), where ``length_limit`` is not set.
    :param max_citations_per_sentence: The most citations one sentence may have, or None.
    :param references_max: The most references a report may list, or None.
    :param references_required: Whether a report must list its references.
    :param mandatory_metadata: The metadata fields a report must set.
    :param citation_top_k: Citations must point into this many top documents of the run's own ranking
        (None: anywhere in it).
    :param same_answer_topics: One answer given to this many topics is a smell.
    :param severity: Check name -> ``error``, ``warning`` or ``off``, where the spec sets it.
    :param path: The file it was read from, if any.
    """

    track: str = "exampp"
    docid_pattern: str | None = None
    depth: int | None = None
    length_unit: str = "words"
    length_limit: int | None = None
    length_limit_request_field: str | None = None
    max_citations_per_sentence: int | None = None
    references_max: int | None = None
    references_required: bool = False
    mandatory_metadata: tuple[str, ...] = ()
    citation_top_k: int | None = None
    same_answer_topics: int = 3
    severity: dict[str, str] = field(default_factory=dict)
    path: str | None = None


def read_track_spec(path: PathLike) -> TrackSpec:
    """A track spec from its TOML file.

    :param path: The file.
    :raises InputError: Invalid TOML, an unknown key or a bad value, naming its line.
    """
    data, text = read_toml(path, "track spec")
    name = str(path)

    def bad(key: str, message: str) -> InputError:
        return InputError(name, key_line(text, key), f"{key!r} {message}")

    known = {f for f in TrackSpec.__dataclass_fields__ if f != "path"}
    values: dict[str, Any] = {}
    for key, value in data.items():
        if key not in known:
            raise bad(key, f"is not a track spec key; known keys: {', '.join(sorted(known))}")
        if key in _INT_KEYS:
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise bad(key, f"must be a positive integer, found {value!r}")
        elif key == "references_required":
            if not isinstance(value, bool):
                raise bad(key, f"must be true or false, found {value!r}")
        elif key == "mandatory_metadata":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise bad(key, "must be a list of strings")
            value = tuple(value)
        elif key == "severity":
            if not isinstance(value, dict) or not all(v in SEVERITIES for v in value.values()):
                raise bad(key, f"must be a table of check = {' | '.join(map(repr, SEVERITIES))}")
        elif not isinstance(value, str):
            raise bad(key, f"must be a string, found {value!r}")
        elif key == "length_limit_request_field" and value not in REQUEST_LIMITS:
            raise bad(key, f"must be one of {', '.join(map(repr, REQUEST_LIMITS))}, found {value!r}")
        elif key == "length_unit" and value not in LENGTH_UNITS:
            raise bad(key, f"must be one of {', '.join(map(repr, LENGTH_UNITS))}, found {value!r}")
        elif key == "docid_pattern":
            try:
                re.compile(value)
            except re.error as exc:
                raise bad(key, f"is not a regular expression: {exc}") from None
        values[key] = value
    if "length_limit" in values and "length_limit_request_field" in values:
        raise bad("length_limit_request_field", "and 'length_limit' exclude each other: one limit for all topics, "
                                                "or each topic's from its request")
    return TrackSpec(**values, path=str(Path(path)))
