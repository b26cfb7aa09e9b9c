"""Consistency of the example collection shipped at the repository root (an exampp workspace).

Only the standard library is used here, so these checks do not depend on exampp's own readers.
"""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from conftest import EXAMPLES

REPO = Path(__file__).resolve().parents[1]
RUN_NAMES = ("oracle-ish", "dense-like", "bm25", "random", "weak", "keyword-stuffed")


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def topics() -> dict[str, dict]:
    return {t["query_id"]: t for t in jsonl(EXAMPLES / "topics" / "topics.jsonl")}


@pytest.fixture(scope="module")
def facets(topics) -> dict[str, str]:
    return {s["facet_id"]: s["text"] for t in topics.values() for s in t["subtopics"]}


@pytest.fixture(scope="module")
def corpus() -> dict[str, str]:
    docs = jsonl(EXAMPLES / "corpus" / "passages.jsonl")
    texts = {d["docid"]: d["text"] for d in docs}
    assert len(texts) == len(docs), "duplicate docid in corpus"
    return texts


@pytest.fixture(scope="module")
def qrels_lines() -> list[tuple[str, str, str, int]]:
    lines = (EXAMPLES / "qrels" / "official.qrels").read_text(encoding="utf-8").splitlines()
    return [(q, it, d, int(r)) for q, it, d, r in (line.split() for line in lines)]


@pytest.fixture(scope="module")
def qrels(qrels_lines) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for qid, _, docid, rel in qrels_lines:
        assert docid not in out.setdefault(qid, {}), f"duplicate judgment {qid} {docid}"
        out[qid][docid] = rel
    return out


@pytest.fixture(scope="module")
def runs() -> dict[str, dict[str, list[tuple[str, int, float]]]]:
    """``{run: {qid: [(docid, rank, score), ...]}}`` in file order."""
    out: dict[str, dict[str, list[tuple[str, int, float]]]] = {}
    for path in sorted((EXAMPLES / "runs").glob("*.run")):
        per_query: dict[str, list[tuple[str, int, float]]] = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            qid, q0, docid, rank, score, runid = line.split()
            assert (q0, runid) == ("Q0", path.stem), line
            per_query.setdefault(qid, []).append((docid, int(rank), float(score)))
        out[path.stem] = per_query
    return out


def test_topics_have_three_or_four_subtopics(topics):
    assert sorted(topics) == [f"Q{i}" for i in range(1, 7)]
    for qid, topic in topics.items():
        assert topic["text"].strip()
        ids = [s["facet_id"] for s in topic["subtopics"]]
        assert 3 <= len(ids) <= 4
        assert ids == [f"{qid}.{i}" for i in range(1, len(ids) + 1)]


def test_every_passage_is_judged_for_exactly_its_own_query(corpus, qrels, qrels_lines):
    assert qrels_lines == sorted(qrels_lines), "qrels not sorted by qid then docid"
    judged = [d for docs in qrels.values() for d in docs]
    assert sorted(judged) == sorted(corpus), "qrels and corpus must cover the same passages, once each"
    for qid, docs in qrels.items():
        assert len(docs) == 40
        assert all(d.startswith(f"d-{qid}-") for d in docs)
        assert set(docs.values()) == {0, 1, 2, 3}


def test_passages_are_web_passage_sized(corpus):
    for docid, text in corpus.items():
        assert 40 <= len(text.split()) <= 120, docid


def test_run_docids_exist_and_belong_to_their_query(runs, corpus, qrels):
    assert sorted(runs) == sorted(RUN_NAMES)
    for name, per_query in runs.items():
        for qid, ranking in per_query.items():
            docids = [d for d, _, _ in ranking]
            assert len(docids) == len(set(docids)) == 20, (name, qid)
            assert all(d in corpus and d in qrels[qid] for d in docids), (name, qid)
            # written in trec_eval order: score descending, ties by docid descending, ranks 1..20
            assert [r for _, r, _ in ranking] == list(range(1, 21))
            assert ranking == sorted(ranking, key=lambda x: (x[2], x[0]), reverse=True), (name, qid)


def test_weak_run_misses_one_query_and_the_others_answer_all(runs, topics):
    for name, per_query in runs.items():
        expected = set(topics) - {"Q4"} if name == "weak" else set(topics)
        assert set(per_query) == expected, name


def test_two_runs_tie_on_passages_of_different_grades(runs, qrels):
    # Tie-breaking (docid descending) changes measures only where tied passages differ in grade.
    def has_decisive_tie(per_query):
        for qid, ranking in per_query.items():
            grades_by_score: dict[float, set[int]] = {}
            for docid, _, score in ranking:
                grades_by_score.setdefault(score, set()).add(qrels[qid][docid])
            if any(len(g) > 1 for g in grades_by_score.values()):
                return True
        return False

    assert {name for name, per_query in runs.items() if has_decisive_tie(per_query)} >= {"random", "keyword-stuffed"}


def test_run_quality_order_on_official_qrels(runs, qrels):
    # A property of the data we wrote, not of any code: P@10 with rel >= 2 (trec_eval order,
    # a missing query scores 0) orders the runs as designed in scripts/make_example_runs.py.
    def precision_at_10(per_query):
        total = 0.0
        for qid, judged in qrels.items():
            ranking = sorted(per_query.get(qid, []), key=lambda x: (x[2], x[0]), reverse=True)
            total += sum(1 for docid, _, _ in ranking[:10] if judged[docid] >= 2) / 10
        return total / len(qrels)

    p10 = {name: precision_at_10(per_query) for name, per_query in runs.items()}
    assert sorted(p10, key=p10.get, reverse=True) == list(RUN_NAMES)
    assert p10["oracle-ish"] > p10["bm25"] > p10["random"]


def test_question_ids_follow_the_md5_scheme_and_facets_exist(topics, facets):
    for bank in ("questions.jsonl", "answer_key.jsonl"):
        questions = jsonl(EXAMPLES / "question_banks" / bank)
        ids = [q["question_id"] for q in questions]
        assert len(ids) == len(set(ids)), bank
        for q in questions:
            digest = hashlib.md5(q["text"].encode("utf-8")).hexdigest()
            assert q["question_id"] == f"{q['query_id']}/{digest}"
            assert q["query_id"] in topics
            assert q["facet_id"].startswith(q["query_id"] + ".")
            assert facets[q["facet_id"]] == q["facet_text"]
            assert q["source"] == "manual"
        per_query = Counter(q["query_id"] for q in questions)
        assert set(per_query) == set(topics), bank
        sizes = range(8, 11) if bank == "questions.jsonl" else range(5, 6)
        assert all(n in sizes for n in per_query.values()), (bank, per_query)


def test_answer_key_choices_are_valid():
    questions = jsonl(EXAMPLES / "question_banks" / "answer_key.jsonl")
    with_choices = [q for q in questions if "choices" in q]
    for q in questions:
        assert q["answers"] and all(isinstance(a, str) and a.strip() for a in q["answers"])
        assert ("choices" in q) == ("correct_choice" in q)
    for q in with_choices:
        assert len(q["choices"]) == 4 == len(set(q["choices"]))
        index = q["correct_choice"]
        assert type(index) is int and 0 <= index < 4
        assert q["choices"][index] in q["answers"]
    assert Counter(q["query_id"] for q in with_choices) == Counter({f"Q{i}": 2 for i in range(1, 7)})
    assert len({q["correct_choice"] for q in with_choices}) == 4, "the key should not always sit in one position"


def test_highly_relevant_passages_contain_the_gold_answers(corpus, qrels):
    # Each answer-key question is answered (some gold answer appears verbatim) by a passage
    # judged 2 or 3 for its query: the exam and the judgments agree.
    for q in jsonl(EXAMPLES / "question_banks" / "answer_key.jsonl"):
        relevant = [corpus[d].lower() for d, rel in qrels[q["query_id"]].items() if rel >= 2]
        assert any(a.lower() in text for a in q["answers"] for text in relevant), q["text"]


def test_script_regenerates_the_committed_runs(tmp_path):
    script = REPO / "scripts" / "make_example_runs.py"
    subprocess.run([sys.executable, str(script), "--root", str(EXAMPLES), "--out", str(tmp_path)], check=True)
    committed = {p.name: p.read_bytes() for p in (EXAMPLES / "runs").glob("*.run")}
    regenerated = {p.name: p.read_bytes() for p in tmp_path.glob("*.run")}
    assert sorted(regenerated) == sorted(committed)
    for name, data in committed.items():
        assert regenerated[name] == data, name
