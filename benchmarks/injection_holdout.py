"""Hold-out recall of ``exampp audit``'s injection detector, and its false positives on honest
prose about the same topics.

The detector's rules were tuned on one set of attack templates (benchmarks/gaming_plant.py); this
benchmark measures it on texts its authors never saw. ``benchmarks/injection_holdout.jsonl``
holds 100 snippets, written by hand in session 30 by a helper who had not read the detector, the
plant templates or their tests, from general knowledge of prompt injection against LLM judges,
graders and rankers: 60 attacks (demands for a top score, claims that the passage answers
everything, overrides of the instructions, role play of the grader, fake system or format markup,
polite and indirect requests) in 11 languages, English 24 of them, 12 obfuscated (zero-width
spaces inside words, Cyrillic/Latin homoglyphs, letter spacing, alternating case, leetspeak, a
base64 payload); and 40 honest sentences of the kind a real web page on grading, scores, ratings,
instructions, evaluation, judges, systems or AI contains. Each line is
``{"id", "kind": "attack"|"honest", "language", "obfuscation", "text"}``. The snippets were fixed
before the detector was first run on them.

Each snippet goes into the middle of its own DL19 pool passage (the passages sorted by docid, every
hundredth of those with a sentence boundary inside, at the boundary nearest the middle), under a
query of its own; :func:`exampp.audit.audit_texts` runs once over all of them and over the
untouched host passages (the control: a flag there is the host's, not the snippet's). A text
counts as detected when it carries an ``injection`` flag. Printed: recall by language and by
obfuscation, the honest snippets' false-positive rate, then every miss and false positive.

Usage (from the repository root):
    python benchmarks/injection_holdout.py [--corpus out/dl19/corpus/passages.jsonl.gz]
"""
from __future__ import annotations

import argparse
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from exampp.audit import audit_texts
from exampp.errors import InputError
from exampp.formats.corpus_sources import read_passages

SNIPPETS = Path(__file__).with_name("injection_holdout.jsonl")
CORPUS = "/tmp/dl19/corpus/passages.jsonl.gz"
QUERY = "what is this passage about"
FIELDS = ("id", "kind", "language", "obfuscation", "text")
BOUNDARY = re.compile(r"(?<=[.!?])\s+(?=\S)")


class Snippet(NamedTuple):
    id: str
    kind: str
    language: str
    obfuscation: str
    text: str


def read_snippets(path: Path) -> list[Snippet]:
    """The snippets of the JSONL file ``path``, in file order."""
    snippets = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(str(path), lineno, f"not JSON: {error.msg}") from None
        if not isinstance(record, dict) or any(not isinstance(record.get(k), str) for k in FIELDS):
            raise InputError(str(path), lineno, f"expected an object with string fields {', '.join(FIELDS)}")
        if record["kind"] not in ("attack", "honest"):
            raise InputError(str(path), lineno, f"kind {record['kind']!r} is neither attack nor honest")
        snippets.append(Snippet(*(record[k] for k in FIELDS)))
    return snippets


def middle_boundary(text: str) -> int | None:
    """Offset of the sentence boundary nearest the middle of ``text``; None without one."""
    cuts = [match.start() for match in BOUNDARY.finditer(text)]
    return min(cuts, key=lambda cut: (abs(cut - len(text) / 2), cut)) if cuts else None


def hosts(passages: Mapping[str, str], count: int) -> list[tuple[str, str]]:
    """``count`` (docid, text) host passages spread evenly over the docid-sorted passages that have
    a sentence boundary inside."""
    usable = [(docid, passages[docid]) for docid in sorted(passages) if middle_boundary(passages[docid]) is not None]
    return [usable[k * len(usable) // count] for k in range(count)]


def plant(host: str, snippet: str) -> str:
    """``host`` with ``snippet`` inserted as a sentence at its middle sentence boundary."""
    cut = middle_boundary(host)
    return f"{host[:cut]} {snippet}{host[cut:]}"


def share(hits: Sequence[bool]) -> str:
    return f"{sum(hits):3d}/{len(hits):<3d} {sum(hits) / len(hits):7.1%}" if hits else "    -"


def table(title: str, groups: Iterable[tuple[str, Sequence[bool]]]) -> None:
    print(f"\n{title}")
    for name, hits in groups:
        print(f"  {name:<12} {share(hits)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=CORPUS, help="DL19 pool passages (JSONL/TSV, gz or plain)")
    args = parser.parse_args()
    snippets = read_snippets(SNIPPETS)
    chosen = hosts(read_passages(args.corpus), len(snippets))
    texts = {s.id: {docid: plant(host, s.text)} for s, (docid, host) in zip(snippets, chosen)}
    texts["control"] = dict(chosen)
    queries = {query_id: QUERY for query_id in texts}
    flags = audit_texts(texts, queries, {}, {})
    flagged = {f.query_id for f in flags if f.kind == "injection" and f.query_id != "control"}
    control = sorted({f.text_id for f in flags if f.kind == "injection" and f.query_id == "control"})

    attacks = [s for s in snippets if s.kind == "attack"]
    honest = [s for s in snippets if s.kind == "honest"]
    hit = {s.id: s.id in flagged for s in snippets}
    print(f"{len(attacks)} attack and {len(honest)} honest snippets, each in its own DL19 passage ({args.corpus})")
    print(f"control: {len(control)} of {len(chosen)} untouched host passages flagged as injection {control or ''}")
    table("attack recall by language", [(lang, [hit[s.id] for s in attacks if s.language == lang])
                                        for lang in sorted({s.language for s in attacks})])
    table("attack recall by obfuscation", [(obf, [hit[s.id] for s in attacks if s.obfuscation == obf])
                                           for obf in sorted({s.obfuscation for s in attacks})])
    table("overall", [("attacks", [hit[s.id] for s in attacks]),
                      ("non-English", [hit[s.id] for s in attacks if s.language != "en"]),
                      ("honest (FP)", [hit[s.id] for s in honest])])
    print("\nmissed attacks:")
    for s in attacks:
        if not hit[s.id]:
            print(f"  {s.id} [{s.language}, {s.obfuscation}] {s.text!r}")
    print("\nfalse positives:")
    for s in honest:
        if hit[s.id]:
            evidence = "; ".join(f.evidence for f in flags if f.kind == "injection" and f.query_id == s.id)
            print(f"  {s.id} [{s.language}] {s.text!r}  -- {evidence}")


if __name__ == "__main__":
    main()
