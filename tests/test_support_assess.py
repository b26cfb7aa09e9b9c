"""``exampp support assess`` end to end: the real ``openai`` backend against a loopback OpenAI-compatible
server (exampp/testing/openai_server.py) with canned, partly hostile replies; the grades kept in the store, so
that a second run sends nothing; segments the corpus lacks and sentences without text left unjudged."""
from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

pytest.importorskip("openai")

from click.testing import CliRunner

from exampp.cli import main
from exampp.generation.asking import Unusable
from exampp.grading.methods.citation_support import CITATION_SUPPORT, CORRECTIVE, UNREAD, parse_support
from exampp.stores.grade_store import GradeStore
from exampp.testing.openai_server import OpenAIServer, Seen

NAME = "judge"
SEGMENTS = {
    "seg1": "Corals expel their algae and bleach when the water is too warm.",
    "seg2": "A reef knot is a binding knot.",
    "seg3": "Ammonia and bleach must never be mixed.",
}
# What the judge says to each statement, attempt by attempt (a corrective turn after an unreadable answer).
REPLIES = {
    "Corals bleach in warm water.": ["Full Support"],
    "Reef knots join ropes.": ['Answer: "partial   SUPPORT" (the citation names the knot only).'],
    "Bleach whitens laundry.": ["Not Full Support, but Partial Support.", "No Support"],  # two labels: asked again
    "Sailors like knots.": ["I cannot tell.", "Maybe?", "<think>" + "no idea " * 50 + "</think>"],  # never a label
}


def cite(reference: str, support: str = "0", cid: int = 0) -> dict:
    return {"citationId": cid, "reference": reference, "support": support}


def sentence(sid: int, text: str, *citations: dict) -> dict:
    return {"sentenceId": sid, "text": text, "citations": list(citations)}


JUDGMENTS = [  # the assessors' spelling; the support they give is ignored
    {"topic_id": "t1", "run_id": "team.a", "sentences": [
        sentence(0, "Corals bleach in warm water.", cite("seg1"), cite("seg9", "2", 1)),  # seg9: not in the corpus
        sentence(1, "Reef knots join ropes.", cite("seg2", "2")),
        sentence(2, "", cite("seg1", "1"))]},  # no text: not judged
    {"topic_id": "t1", "run_id": "team.b", "sentences": [
        sentence(0, "Corals bleach in warm water.", cite("seg1")),  # the same pair as team.a's: judged once
        sentence(1, "Bleach whitens laundry.", cite("seg3", "2")),
        sentence(2, "Sailors like knots.", cite("seg2", "2")),
        sentence(3, "No citation here.")]},
]


def judge(seen: Seen) -> str:
    statement = re.search(r"Statement: (.*)\n\nCitation:", seen.messages[0]["content"]).group(1)
    return REPLIES[statement][len(seen.messages) // 2]


@pytest.fixture
def server():
    with OpenAIServer(name=NAME, reply=judge) as running:
        yield running


@pytest.fixture
def inputs(tmp_path) -> tuple[Path, Path]:
    judgments = tmp_path / "judgments.jsonl"
    judgments.write_text("".join(json.dumps(r) + "\n" for r in JUDGMENTS), encoding="utf-8")
    corpus = tmp_path / "segments.jsonl"
    corpus.write_text("".join(json.dumps({"docid": d, "text": t}) + "\n" for d, t in SEGMENTS.items()),
                      encoding="utf-8")
    return judgments, corpus


def assess(server: OpenAIServer, judgments: Path, corpus: Path, out: Path, workspace: Path):
    return CliRunner().invoke(main, [
        "support", "assess", str(judgments), "--corpus", str(corpus), "-o", str(out), "-w", str(workspace),
        "--backend", "openai", "--base-url", server.url, "--model", NAME, "--no-progress"])


def supports(path: Path) -> list[list[list[tuple[str, str]]]]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [[[(c["reference"], c["support"]) for c in s["citations"]] for s in json.loads(line)["sentences"]]
                for line in fh]


EXPECTED = [
    [[("seg1", "2"), ("seg9", "-1")], [("seg2", "1")], [("seg1", "-1")]],
    [[("seg1", "2")], [("seg3", "0")], [("seg2", "0")], []],
]


@pytest.mark.parametrize(("text", "grade"), [
    ("Full Support", 2), ("  'partial\tsupport'.", 1), ("No Support", 0), ("FULL SUPPORT. Full support!", 2),
    ("There is no support for this claim.", 0)])
def test_labels_are_read_wherever_they_stand(text, grade):
    assert parse_support(text) == grade


@pytest.mark.parametrize(("text", "problem"), [
    ("", "no label"), ("Supported.", "no label"), ("fully supported", "no label"),
    ("Not Full Support but Partial Support", "more than one label")])
def test_unreadable_texts(text, problem):
    with pytest.raises(Unusable, match=f"^{problem}$"):
        parse_support(text)


@pytest.mark.slow
def test_assess_end_to_end_then_resumes_without_a_request(server, inputs, tmp_path):
    judgments, corpus = inputs
    out = tmp_path / "llm.jsonl.gz"
    result = assess(server, judgments, corpus, out, tmp_path)
    assert result.exit_code == 0, result.output
    assert supports(out) == EXPECTED
    lines = result.output.splitlines()
    assert lines[0] == ("warning: 1 cited segments are not in the corpus (seg9): their citations are left "
                        "unjudged (-1)")
    assert lines[1] == "warning: 1 citations of sentences without text are left unjudged (-1)"
    assert re.fullmatch(r"5 pairs: 4 new pairs graded in [\d.]+ s \([\d.]+ pairs/s\), 0 reused from the store, "
                        r"1 shared a grade with an identical pair", lines[2])
    assert lines[3] == "1 pairs gave no label after every attempt: graded No Support (0)"
    assert lines[4].startswith("judge: 7 requests")
    assert lines[5] == f"wrote 2 answers (7 citations) to {out}"
    # Each pair's prompt once (the statement, then the segment); then the corrective turns.
    requests = server.completions()
    firsts = sorted(seen.messages[0]["content"] for seen in requests if len(seen.messages) == 1)
    assert firsts == sorted(CITATION_SUPPORT.render(context=SEGMENTS[seg], question=text) for seg, text in [
        ("seg1", "Corals bleach in warm water."), ("seg2", "Reef knots join ropes."),
        ("seg3", "Bleach whitens laundry."), ("seg2", "Sailors like knots.")])
    again = [seen.messages for seen in requests if "Bleach whitens" in seen.messages[0]["content"]]
    assert [m["content"] for m in max(again, key=len)[1:]] == [
        "Not Full Support, but Partial Support.", CORRECTIVE.format(problem="more than one label")]
    assert len(requests) == 7
    with GradeStore(tmp_path / "grades.sqlite") as store:
        answers = {(g.passage_id, g.grade): g.answer for g in store.records()}
    assert answers[("seg2", 0.0)].startswith(UNREAD + "<think>no idea")

    server.reset()
    again_out = tmp_path / "again.jsonl.gz"
    result = assess(server, judgments, corpus, again_out, tmp_path)
    assert result.exit_code == 0, result.output
    assert server.completions() == []  # everything came from the store
    assert "5 pairs: 0 new pairs graded, 5 reused from the store" in result.output
    assert supports(again_out) == EXPECTED


def test_a_corpus_without_the_cited_segments_is_one_line_and_asks_nothing(server, inputs, tmp_path):
    judgments, _ = inputs
    empty = tmp_path / "other.jsonl"
    empty.write_text(json.dumps({"docid": "other", "text": "x"}) + "\n", encoding="utf-8")
    result = assess(server, judgments, empty, tmp_path / "out.jsonl", tmp_path)
    assert result.exit_code == 1
    assert result.output == (f"Error: nothing to judge in {judgments}: no cited segment has a text in the corpus "
                             "(4 segments cited)\n")
    assert server.requests == []
    assert not (tmp_path / "out.jsonl").exists()
