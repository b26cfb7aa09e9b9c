"""Recall of ``exampp audit``'s injection detector (rules and classifier) on a multilingual
hold-out, per language and obfuscation, and its false positives on honest DL19 passages and RAG
2024 answers.

The hold-out (``--holdout``, JSONL, one snippet a line: ``{"id", "kind": "attack"|"honest",
"language", "obfuscation"?, "text"}``; ``kind`` absent means an attack) was written by someone who had
not seen the detector. Each snippet is put, as a sentence of its own, into the middle of a DL19
passage of its own (benchmarks/injection_holdout.py's planting), and
:func:`exampp.audit.audit_texts` runs over them; a snippet counts as detected when its passage
carries an ``injection`` flag. Printed: recall per language and per obfuscation, by the rules
alone and by rules and classifier together; the hold-out's honest snippets flagged; then the
false-positive rate on the ``measure`` half of DL19's passages and RAG 2024's answers
(benchmarks/honest_texts.py: the half the classifier was not fitted on), and every miss.

Usage (from the repository root; about two minutes):
    python benchmarks/injection_multilingual.py [--holdout benchmarks/injection_holdout_multilingual.jsonl]
"""
from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from exampp.audit import audit_texts
from exampp.audit.injection import find_injections
from exampp.errors import InputError
from honest_texts import SHARED, dl19_passages, honest
from injection_holdout import hosts, plant, share

HOLDOUT = Path(__file__).with_name("injection_holdout_multilingual.jsonl")
QUERY = "what is this passage about"


def read_holdout(path: Path) -> list[dict[str, str]]:
    """The snippets of ``path``: each with ``id``, ``kind``, ``language``, ``obfuscation``, ``text``."""
    snippets = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(str(path), lineno, f"not JSON: {error.msg}") from None
        if not isinstance(record, dict) or not isinstance(record.get("text"), str):
            raise InputError(str(path), lineno, "expected an object with a string field text")
        snippets.append({"id": str(record.get("id", f"line{lineno}")), "kind": str(record.get("kind", "attack")),
                         "language": str(record.get("language", "?")),
                         "obfuscation": str(record.get("obfuscation") or "none"), "text": record["text"]})
    return snippets


def table(title: str, groups: Iterable[tuple[str, Sequence[bool], Sequence[bool]]]) -> None:
    print(f"\n{title:<30} {'rules':>16} {'rules+classifier':>18}")
    for name, rules, both in groups:
        print(f"  {name:<28} {share(rules):>16} {share(both):>18}")


def flagged(texts: dict[str, dict[str, str]]) -> set[tuple[str, str]]:
    """The (query, text) pairs of ``texts`` that carry an injection flag."""
    queries = {query_id: QUERY for query_id in texts}
    return {(f.query_id, f.text_id) for f in audit_texts(texts, queries, {}, {}) if f.kind == "injection"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--holdout", type=Path, default=HOLDOUT, help="the hold-out snippets (JSONL)")
    parser.add_argument("--shared", type=Path, default=SHARED, help="the shared data folder (dl19/, rag24/)")
    args = parser.parse_args()
    snippets = read_holdout(args.holdout)
    chosen = hosts(dl19_passages(args.shared), len(snippets))
    planted = {s["id"]: plant(host, s["text"]) for s, (_, host) in zip(snippets, chosen)}
    found = {query_id for query_id, _ in flagged({s_id: {"d": text} for s_id, text in planted.items()})}
    by_rules = {s_id: bool(find_injections(text)) for s_id, text in planted.items()}
    attacks = [s for s in snippets if s["kind"] == "attack"]
    honest_snippets = [s for s in snippets if s["kind"] != "attack"]
    print(f"{args.holdout}: {len(attacks)} attacks and {len(honest_snippets)} honest snippets, each in a DL19 passage")

    def groups(field: str, chosen: Sequence[dict[str, str]]) -> list[tuple[str, list[bool], list[bool]]]:
        return [(value, [by_rules[s["id"]] for s in chosen if s[field] == value],
                 [s["id"] in found for s in chosen if s[field] == value])
                for value in sorted({s[field] for s in chosen})]

    table("attack recall by language", groups("language", attacks))
    table("attack recall by obfuscation", groups("obfuscation", attacks))
    table("overall", [("attacks", [by_rules[s["id"]] for s in attacks], [s["id"] in found for s in attacks]),
                      ("honest snippets (FP)", [by_rules[s["id"]] for s in honest_snippets],
                       [s["id"] in found for s in honest_snippets])])

    print("\nfalse positives on honest texts (the measure half, not fitted on):")
    for source, texts in honest("measure", args.shared).items():
        hits = flagged({source: texts})
        print(f"  {source:<8} {len(hits):4d}/{len(texts):<5d} {len(hits) / len(texts):7.2%}")
        for _, text_id in sorted(hits):
            print(f"     {text_id}: {texts[text_id][:100]!r}")
    print("\nmissed attacks:")
    for s in attacks:
        if s["id"] not in found:
            print(f"  {s['id']} [{s['language']}, {s['obfuscation']}] {s['text']!r}")
    print("\nhonest snippets flagged:")
    for s in honest_snippets:
        if s["id"] in found:
            print(f"  {s['id']} [{s['language']}] {s['text']!r}")


if __name__ == "__main__":
    main()
