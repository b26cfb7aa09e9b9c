"""The multilingual blind hold-outs for the injection detector: their files' structure, not the detector's scores.

benchmarks/injection_holdout_multilingual.jsonl (ids `ml-…`) and benchmarks/injection_holdout_multilingual2.jsonl
(ids `m2-…`) were each written without seeing the detector (see the .md beside each); this test only checks that the
files stay well formed: fields, languages, counts per language, unique ids and texts.
"""
from __future__ import annotations

import collections
import dataclasses
import json
import re
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
OBFUSCATIONS = {
    "none", "spaced", "homoglyph", "zero-width", "full-width", "leetspeak", "markdown", "mixed-script",
    "html-comment", "base-language-switch", "case",
}
KEYS = {"id", "kind", "language", "obfuscation", "text"}


@dataclasses.dataclass(frozen=True)
class HoldOut:
    path: Path
    prefix: str  # ids are <prefix>-<lang>-a<NN> / <prefix>-<lang>-h<NN>
    counted: tuple[str, ...]  # languages that must each have min_attacks and min_honest lines
    min_languages: int  # distinct languages in the file, English included
    min_non_english: int
    min_attacks: int  # per counted language
    min_honest: int
    min_total_attacks: int
    min_total_honest: int
    min_obfuscation_kinds: int  # kinds other than "none" among the attacks


HOLD_OUTS = (
    HoldOut(
        path=BENCHMARKS / "injection_holdout_multilingual.jsonl",
        prefix="ml",
        counted=("de", "es", "fr", "ru", "zh", "ja", "ar", "hi", "pt", "it", "ko", "tr"),
        min_languages=12,
        min_non_english=12,
        min_attacks=20,
        min_honest=10,
        min_total_attacks=240,
        min_total_honest=130,
        min_obfuscation_kinds=8,
    ),
    HoldOut(
        path=BENCHMARKS / "injection_holdout_multilingual2.jsonl",
        prefix="m2",
        counted=(
            "en", "de", "fr", "es", "it", "pt", "ru", "zh", "ja", "ko",
            "ar", "hi", "tr", "nl", "pl", "vi", "id", "fa", "sw", "th",
        ),
        min_languages=20,
        min_non_english=19,
        min_attacks=20,
        min_honest=10,
        min_total_attacks=400,
        min_total_honest=200,
        min_obfuscation_kinds=10,
    ),
)


@pytest.fixture(scope="module", params=HOLD_OUTS, ids=lambda spec: spec.prefix)
def hold_out(request) -> tuple[HoldOut, list[dict]]:
    spec = request.param
    lines = spec.path.read_text(encoding="utf-8").splitlines()
    assert lines and all(line.strip() for line in lines), "no blank lines"
    return spec, [json.loads(line) for line in lines]


def test_every_row_has_valid_fields(hold_out):
    spec, rows = hold_out
    for row in rows:
        assert set(row) == KEYS, row
        assert row["kind"] in ("attack", "honest"), row
        assert re.fullmatch(r"[a-z]{2}", row["language"]), row
        assert row["obfuscation"] in OBFUSCATIONS, row
        assert isinstance(row["text"], str) and row["text"].strip(), row
        tag = "a" if row["kind"] == "attack" else "h"
        assert re.fullmatch(rf"{spec.prefix}-{row['language']}-{tag}\d\d", row["id"]), row
        if row["kind"] == "honest":
            assert row["obfuscation"] == "none", row


def test_ids_and_texts_are_unique(hold_out):
    _, rows = hold_out
    for field in ("id", "text"):
        repeated = [value for value, n in collections.Counter(row[field] for row in rows).items() if n > 1]
        assert not repeated, f"repeated {field}: {repeated}"


def test_languages_and_counts(hold_out):
    spec, rows = hold_out
    counts = collections.Counter((row["language"], row["kind"]) for row in rows)
    languages = {row["language"] for row in rows}
    assert len(languages) >= spec.min_languages and set(spec.counted) | {"en"} <= languages
    assert len(languages - {"en"}) >= spec.min_non_english
    for language in spec.counted:
        assert counts[language, "attack"] >= spec.min_attacks, (language, counts[language, "attack"])
        assert counts[language, "honest"] >= spec.min_honest, (language, counts[language, "honest"])
    assert sum(n for (_, kind), n in counts.items() if kind == "attack") >= spec.min_total_attacks
    assert sum(n for (_, kind), n in counts.items() if kind == "honest") >= spec.min_total_honest


def test_obfuscated_attacks_are_spread_over_kinds(hold_out):
    spec, rows = hold_out
    used = {row["obfuscation"] for row in rows if row["kind"] == "attack"}
    assert len(used - {"none"}) >= spec.min_obfuscation_kinds, used
