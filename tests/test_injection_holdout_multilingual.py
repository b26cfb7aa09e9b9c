"""The multilingual blind hold-out for the injection detector: its file's structure, not the detector's scores.

benchmarks/injection_holdout_multilingual.jsonl was written without seeing the detector (see the .md beside it);
this test only checks that the file stays well formed: fields, languages, counts per language, unique ids and texts.
"""
from __future__ import annotations

import collections
import json
import re
from pathlib import Path

import pytest

PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "injection_holdout_multilingual.jsonl"
NON_ENGLISH = ("de", "es", "fr", "ru", "zh", "ja", "ar", "hi", "pt", "it", "ko", "tr")
OBFUSCATIONS = {
    "none", "spaced", "homoglyph", "zero-width", "full-width", "leetspeak", "markdown", "mixed-script",
    "html-comment", "base-language-switch", "case",
}
KEYS = {"id", "kind", "language", "obfuscation", "text"}


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    lines = PATH.read_text(encoding="utf-8").splitlines()
    assert lines and all(line.strip() for line in lines), "no blank lines"
    return [json.loads(line) for line in lines]


def test_every_row_has_valid_fields(rows):
    for row in rows:
        assert set(row) == KEYS, row
        assert row["kind"] in ("attack", "honest"), row
        assert re.fullmatch(r"[a-z]{2}", row["language"]), row
        assert row["obfuscation"] in OBFUSCATIONS, row
        assert isinstance(row["text"], str) and row["text"].strip(), row
        tag = "a" if row["kind"] == "attack" else "h"
        assert re.fullmatch(rf"ml-{row['language']}-{tag}\d\d", row["id"]), row
        if row["kind"] == "honest":
            assert row["obfuscation"] == "none", row


def test_ids_and_texts_are_unique(rows):
    for field in ("id", "text"):
        repeated = [value for value, n in collections.Counter(row[field] for row in rows).items() if n > 1]
        assert not repeated, f"repeated {field}: {repeated}"


def test_languages_and_counts(rows):
    counts = collections.Counter((row["language"], row["kind"]) for row in rows)
    languages = {row["language"] for row in rows}
    assert len(languages) >= 12 and set(NON_ENGLISH) | {"en"} <= languages
    for language in NON_ENGLISH:
        assert counts[language, "attack"] >= 20, (language, counts[language, "attack"])
        assert counts[language, "honest"] >= 10, (language, counts[language, "honest"])
    assert sum(n for (_, kind), n in counts.items() if kind == "attack") >= 240
    assert sum(n for (_, kind), n in counts.items() if kind == "honest") >= 130


def test_obfuscated_attacks_are_spread_over_kinds(rows):
    used = {row["obfuscation"] for row in rows if row["kind"] == "attack"}
    assert len(used - {"none"}) >= 8, used
