"""A workspace of the example collection (the repository's corpus/ and topics/) for the assessors'
tests, with a hostile passage and hostile topic guidance, and a sample of its pairs."""
from __future__ import annotations

from pathlib import Path

from conftest import EXAMPLES
from exampp.collection.corpus import Passage
from exampp.collection.topics import Topic
from exampp.formats.assessment_sample import SamplePair, write_sample
from exampp.formats.corpus_sources import read_passages, write_corpus
from exampp.formats.topic_files import read_topics, write_topics

# Texts are input nobody vetted: each of these must be shown as text, never run or rendered as HTML.
HOSTILE = "<script>window.pwned = 1</script><img src=x onerror=\"window.pwned = 2\"> & <b>bold</b>"
DESCRIPTION = "What makes coral reefs turn white, and do they recover?"
NARRATIVE = f"Relevant passages explain coral bleaching. {HOSTILE}"
# Strings of the design that no assessor may see: a stratum named after the judge's grade, and a
# probability that tells the strata apart.
STRATUM = "judge-grade-3"
PROBABILITY = 0.123456789
SAMPLE_DOCS = [("Q1", "d-Q1-001"), ("Q1", "d-evil"), ("Q1", "d-Q1-002"), ("Q2", "d-Q2-001"), ("Q2", "d-Q2-002"),
               ("Q3", "d-Q3-001")]


def make_workspace(ws: Path, docs: list[tuple[str, str]] = SAMPLE_DOCS) -> tuple[Path, Path]:
    """The example collection's corpus and topics in ``ws`` (Q1 with a description and a hostile
    narrative, a hostile passage ``d-evil``) and a sample of ``docs`` in that order: (ws, sample)."""
    (ws / "corpus").mkdir(parents=True)
    (ws / "topics").mkdir()
    passages = {**read_passages(EXAMPLES / "corpus" / "passages.jsonl"), "d-evil": f"Coral bleaching. {HOSTILE}"}
    write_corpus([Passage(docid, text) for docid, text in passages.items()], ws / "corpus" / "passages.jsonl")
    topics = read_topics(EXAMPLES / "topics" / "topics.jsonl")
    topics["Q1"] = Topic("Q1", topics["Q1"].text, topics["Q1"].subtopics, DESCRIPTION, NARRATIVE)
    write_topics(topics, ws / "topics" / "topics.jsonl")
    sample = ws / "sample.tsv"
    write_sample([SamplePair(q, d, PROBABILITY, STRATUM, float(i)) for i, (q, d) in enumerate(docs)], sample)
    return ws, sample
