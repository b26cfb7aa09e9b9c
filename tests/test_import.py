"""Reference graded-passages files: reading, writing, and `exampp import` into a workspace."""
from __future__ import annotations

import dataclasses
import gzip
import json
from collections import defaultdict
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import shared_path
from exampp.cli import main
from exampp.collection.grades import Grade, Method, text_hash
from exampp.collection.runs import from_scores
from exampp.errors import InputError
from exampp.formats.reference_grades import (
    paragraph_grades,
    read_reference_grades,
    reference_queries,
    write_reference_grades,
)
from exampp.formats.trec_qrels import read_qrels
from exampp.formats.trec_run import read_run
from exampp.importer import ImportedRun, import_reference
from exampp.stores.grade_store import GradeStore
from exampp.stores.layout import Workspace

T5 = "google/flan-t5-large"
RATED = "self-rating|google/flan-t5-large|QuestionSelfRatedUnanswerablePromptWithChoices"
QA = "qa|google/flan-t5-large|QuestionCompleteConcisePromptWithAnswerKey2"
DIRECT = "direct:fagb|google/flan-t5-large|FagB"


def rated(ratings: dict[str, int]) -> dict:
    """A self-rated exam_grades entry as the reference tool writes it (correct = rating >= 1)."""
    return {
        "correctAnswered": [q for q, r in ratings.items() if r >= 1],
        "wrongAnswered": [q for q, r in ratings.items() if r < 1],
        "answers": [[q, str(r)] for q, r in ratings.items()],
        "llm": T5,
        "llm_options": {},
        "exam_ratio": sum(r >= 1 for r in ratings.values()) / len(ratings),
        "prompt_info": {"prompt_class": "QuestionSelfRatedUnanswerablePromptWithChoices", "is_self_rated": True},
        "self_ratings": [{"question_id": q, "self_rating": r} for q, r in ratings.items()],
    }


QA_GRADES = {
    "correctAnswered": ["q1/a"],
    "wrongAnswered": ["q1/b"],
    "answers": [["q1/a", "alpha"], ["q1/b", "unanswerable"]],
    "llm": T5,
    "llm_options": {},
    "exam_ratio": 0.5,
    "prompt_info": {"prompt_class": "QuestionCompleteConcisePromptWithAnswerKey2", "is_self_rated": False},
}
DIRECT_GRADE = {
    "correctAnswered": True, "answer": "Yes", "llm": T5, "llm_options": {},
    "prompt_info": {"prompt_class": "FagB", "is_self_rated": False}, "self_ratings": None,
}


def paragraph(pid, text, qid, relevance, rankings, exam_grades, grades=None) -> dict:
    p = {
        "paragraph_id": pid,
        "text": text,
        "paragraph": {},
        "paragraph_data": {
            "judgments": [{"paragraphId": pid, "query": qid, "relevance": relevance, "titleQuery": qid}],
            "rankings": [
                {"method": m, "paragraphId": pid, "queryId": qid, "rank": r, "score": s} for m, r, s in rankings
            ],
        },
        "exam_grades": exam_grades,
    }
    if grades:
        p["grades"] = grades
    return p


# Two queries, three paragraphs (p1 under both), two runs: runA 1-based with usable scores,
# runB 0-based with tied scores in q1 (trec_eval would put p2 first), so its ranks become scores.
LINES = [
    ["q1", [
        paragraph("p1", "Alpha text", "q1", 2, [("runA", 2, 3.0), ("runB", 0, 1.0)],
                  [rated({"q1/a": 5, "q1/b": 0}), QA_GRADES]),
        paragraph("p2", "Beta text", "q1", 0, [("runA", 1, 5.0), ("runB", 1, 1.0)], [rated({"q1/a": 1, "q1/b": 3})]),
    ]],
    ["q2", [
        paragraph("p1", "Alpha text", "q2", 1, [("runA", 1, 7.5), ("runB", 0, 0.5)], [rated({"q2/c": 4})],
                  [DIRECT_GRADE]),
    ]],
]

EXPECTED_GRADES = [  # query, passage, question, method, grade, answer
    ["q1", "p1", "q1/a", QA, 1.0, "alpha"],
    ["q1", "p1", "q1/a", RATED, 5.0, "5"],
    ["q1", "p1", "q1/b", QA, 0.0, "unanswerable"],
    ["q1", "p1", "q1/b", RATED, 0.0, "0"],
    ["q1", "p2", "q1/a", RATED, 1.0, "1"],
    ["q1", "p2", "q1/b", RATED, 3.0, "3"],
    ["q2", "p1", "direct", DIRECT, 1.0, "Yes"],
    ["q2", "p1", "q2/c", RATED, 4.0, "4"],
]

SUMMARY = """\
imported {file} into {ws}
  queries          2
  passages         3 (2 distinct ids)
  judged passages  3
  questions        4
  grades           8 (8 distinct in the store)
           1  direct:fagb|google/flan-t5-large|FagB
           2  qa|google/flan-t5-large|QuestionCompleteConcisePromptWithAnswerKey2
           5  self-rating|google/flan-t5-large|QuestionSelfRatedUnanswerablePromptWithChoices
  runs             2 (1 with 0-based ranks)
    runA                        2 queries
    runB                        2 queries  0-based ranks, scores = -rank
"""


def write_gz_lines(path: Path, lines: list) -> Path:
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for line in lines:
            fh.write(json.dumps(line) + "\n")
    return path


@pytest.fixture
def graded(tmp_path: Path) -> Path:
    return write_gz_lines(tmp_path / "graded.jsonl.gz", LINES)


def workspace_files(root: Path) -> dict[str, bytes]:
    """Every file of a workspace but the grade store, by relative path."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.name.startswith("grades.sqlite")}


def test_reader_records(graded: Path):
    queries = list(read_reference_grades(graded))
    assert [(q.query_id, [p.paragraph_id for p in q.paragraphs], q.line) for q in queries] == [
        ("q1", ["p1", "p2"], 1), ("q2", ["p1"], 2)]
    p1 = queries[0].paragraphs[0]
    assert [(r.method, r.rank, r.score) for r in p1.rankings] == [("runA", 2, 3.0), ("runB", 0, 1.0)]
    assert [j.relevance for j in p1.judgments] == [2]
    rated_grades, qa = p1.exam_grades
    assert rated_grades.is_self_rated and not qa.is_self_rated
    assert [(r.question_id, r.self_rating) for r in rated_grades.self_ratings] == [("q1/a", 5), ("q1/b", 0)]
    assert qa.correct_answered == ("q1/a",) and qa.answers == (("q1/a", "alpha"), ("q1/b", "unanswerable"))
    direct = queries[1].paragraphs[0].grades[0]
    assert (direct.correct_answered, direct.answer, direct.prompt_class, direct.self_ratings) == (
        True, "Yes", "FagB", None)


def test_writer_round_trips_records_and_grades(graded: Path, tmp_path: Path):
    queries = list(read_reference_grades(graded))
    write_reference_grades(queries, tmp_path / "again.jsonl.gz")
    assert list(read_reference_grades(tmp_path / "again.jsonl.gz")) == queries

    grades = [g for q in queries for p in q.paragraphs for g in paragraph_grades(q.query_id, p)]
    passages = {q.query_id: {p.paragraph_id: p.text for p in q.paragraphs} for q in queries}
    qrels = {"q1": {"p1": 2, "p2": 0}, "q2": {"p1": 1}}
    run_a = from_scores("runA", {"q1": {"p2": 5.0, "p1": 3.0}, "q2": {"p1": 7.5}})
    write_reference_grades(reference_queries(passages, grades, qrels, [run_a]), tmp_path / "exported.jsonl.gz")
    exported = list(read_reference_grades(tmp_path / "exported.jsonl.gz"))
    regraded = [g for q in exported for p in q.paragraphs for g in paragraph_grades(q.query_id, p)]
    assert sorted(regraded, key=repr) == sorted(grades, key=repr)
    assert [j.relevance for q in exported for p in q.paragraphs for j in p.judgments] == [2, 0, 1]
    assert [p.rankings for q in exported for p in q.paragraphs] == [
        tuple(r for r in p.rankings if r.method == "runA") for q in queries for p in q.paragraphs]
    # Self-rated grades are written the way the reference tool writes them (correct = rating >= 1),
    # with exampp's name of the method in prompt_info.
    original = queries[0].paragraphs[1].exam_grades[0]
    assert exported[0].paragraphs[1].exam_grades[0] == dataclasses.replace(
        original, prompt_info={**original.prompt_info, "exampp_method": "self-rating"})


@pytest.mark.parametrize("line, message", [
    ('{"q1": []}', "expected a 2-element list [query_id, [paragraph, ...]]"),
    ('["q1", [{"text": "t"}]]', "query 'q1', paragraph 1: missing 'paragraph_id'"),
    ('["q1", [{"paragraph_id": "p", "text": "t", "paragraph_data": {"judgments": [], "rankings": '
     '[{"method": "r", "paragraphId": "p", "queryId": "q1", "rank": "x", "score": 1}]}}]]',
     "query 'q1', paragraph 1 (p).rankings[0].rank: expected an integer, found 'x'"),
    ('["q1", [{"paragraph_id": "p", "text": "t", "exam_grades": [{"llm": "m", "answers": [["a"]]}]}]]',
     "query 'q1', paragraph 1 (p).exam_grades[0].answers[0]: expected [question_id, answer_text]"),
    ('["q1", [{"paragraph_id": "p", "text": "t", "paragraph_data": {"judgments": [{"paragraphId": "p", '
     '"query": "q1", "relevance": 20000}]}}]]',
     "query 'q1', paragraph 1 (p).judgments[0].relevance: 20000 is out of range (-10000 to 10000)"),
    ('["q1", [{"paragraph_id": "p", "text": "t", "paragraph_data": {"judgments": [], "rankings": '
     '[{"method": "r", "paragraphId": "p", "queryId": "q1", "rank": 1' + "0" * 400 + ', "score": 1}]}}]]',
     "query 'q1', paragraph 1 (p).rankings[0].rank: 1" + "0" * 39 + " is out of range (-1000000000 to 1000000000)"),
])
def test_bad_input_names_file_and_line(write, line: str, message: str):
    path = write("bad.jsonl", '["q0", []]\n' + line + "\n")
    with pytest.raises(InputError) as err:
        list(read_reference_grades(path))
    assert str(err.value) == f"{path}:2: {message}"


def _rated_line(rating: str, prompt_info: str = "null") -> str:
    return ('["q1", [{"paragraph_id": "p", "text": "t", "exam_grades": [{"llm": "m", "answers": [], '
            f'"prompt_info": {prompt_info}, '
            f'"self_ratings": [{{"question_id": "q1/a", "self_rating": {rating}}}]}}]}}]]')


RATING_AT = "query 'q1', paragraph 1 (p).exam_grades[0].self_ratings[0].self_rating"


@pytest.mark.parametrize("line, message", [
    (_rated_line("1e300"), f"{RATING_AT}: 1e+300 is outside the grade scale of 'self-rating' (0 to 5)"),
    (_rated_line("-1"), f"{RATING_AT}: -1 is outside the grade scale of 'self-rating' (0 to 5)"),
    (_rated_line("6"), f"{RATING_AT}: 6 is outside the grade scale of 'self-rating' (0 to 5)"),
    (_rated_line("2.5"), f"{RATING_AT}: expected an integer, found '2.5'"),
    (_rated_line("NaN"), f"{RATING_AT}: expected an integer, found 'nan'"),
    (_rated_line("-Infinity"), f"{RATING_AT}: expected an integer, found '-inf'"),
    (_rated_line("2", '{"exampp_method": "qa"}'), f"{RATING_AT}: 2 is outside the grade scale of 'qa' (0 to 1)"),
    ('["q1", [{"paragraph_id": "p", "text": "t", "grades": [{"llm": "m", "correctAnswered": true, '
     '"prompt_info": {"prompt_class": "Thomas"}, "self_ratings": 3}]}]]',
     "query 'q1', paragraph 1 (p).grades[0].self_ratings: 3 is outside the grade scale of 'direct:thomas' (0 to 2)"),
])
def test_a_grade_off_its_methods_scale_is_refused_with_file_and_line(write, tmp_path: Path, line: str, message: str):
    path = write("bad.jsonl", '["q0", []]\n' + line + "\n")
    result = CliRunner().invoke(main, ["import", str(path), "--workspace", str(tmp_path / "ws")])
    assert (result.exit_code, result.stderr) == (1, f"Error: {path}:2: {message}\n")
    assert not (tmp_path / "ws").exists()  # nothing stored


def test_import_writes_every_file_exactly(graded: Path, tmp_path: Path):
    ws = Workspace.at(tmp_path / "ws")
    summary = import_reference(graded, ws)
    assert (summary.queries, summary.passages, summary.distinct_passages, summary.questions, summary.judged) == (
        2, 3, 2, 4, 3)
    assert summary.grades == {DIRECT: 1, QA: 2, RATED: 5}
    assert summary.runs == (ImportedRun("runA", 2, False, False), ImportedRun("runB", 2, True, True))
    assert (ws.runs / "runA.run").read_text() == (
        "q1 Q0 p2 1 5.0 runA\n"
        "q1 Q0 p1 2 3.0 runA\n"
        "q2 Q0 p1 1 7.5 runA\n"
    )
    assert (ws.runs / "runB.run").read_text() == (
        "q1 Q0 p1 1 0.0 runB\n"
        "q1 Q0 p2 2 -1.0 runB\n"
        "q2 Q0 p1 1 0.0 runB\n"
    )
    assert ws.official_qrels.read_text() == "q1 0 p1 2\nq1 0 p2 0\nq2 0 p1 1\n"
    with gzip.open(ws.corpus, "rt", encoding="utf-8") as fh:
        assert [json.loads(line) for line in fh] == [
            {"docid": "p1", "text": "Alpha text"}, {"docid": "p2", "text": "Beta text"}]
    assert not ws.question_bank.exists()
    with GradeStore(ws.store) as store:
        assert store.grades().values.tolist() == EXPECTED_GRADES
        # Without a bank the question id stands in for the question text.
        assert store.missing(RATED, [(text_hash("Alpha text"), text_hash("q1/a"))]) == []
    assert any("no question bank" in w for w in summary.warnings)


def test_import_is_idempotent(graded: Path, tmp_path: Path):
    ws = Workspace.at(tmp_path / "ws")
    import_reference(graded, ws)
    files = workspace_files(ws.root)
    with GradeStore(ws.store) as store:
        before = (store.grades(), store.counts())
    import_reference(graded, ws)
    assert workspace_files(ws.root) == files
    with GradeStore(ws.store) as store:
        assert store.grades().equals(before[0]) and store.counts() == before[1]


def test_import_takes_question_texts_from_bank(graded: Path, tmp_path: Path, write):
    bank = write("bank.jsonl", "".join(json.dumps({"query_id": q, "question_id": i, "text": t}) + "\n" for q, i, t in [
        ("q1", "q1/a", "What is alpha?"), ("q1", "q1/b", "What is beta?"), ("q1", "q1/unused", "Why?"),
        ("q2", "q2/c", "What is gamma?")]))
    ws = Workspace.at(tmp_path / "ws")
    summary = import_reference(graded, ws, bank)
    assert summary.questions == 5  # four from the bank and q2's direct question
    assert ws.question_bank.exists()
    with GradeStore(ws.store) as store:
        assert store.missing(RATED, [(text_hash("Beta text"), text_hash("What is beta?"))]) == []
        assert store.grades(RATED).values.tolist() == [row for row in EXPECTED_GRADES if row[3] == RATED]


def test_import_rejects_graded_question_missing_from_bank(graded: Path, tmp_path: Path, write):
    bank = write("bank.jsonl", json.dumps({"query_id": "q1", "question_id": "q1/a", "text": "What is alpha?"}) + "\n"
                 + json.dumps({"query_id": "q1", "question_id": "q1/b", "text": "What is beta?"}) + "\n")
    ws = Workspace.at(tmp_path / "ws")
    # q2/c is graded on line 2 of the graded file (query q2) but the bank lacks it
    with pytest.raises(InputError, match=r"graded\.jsonl\.gz:2: unknown question id 'q2/c': "
                                         r"not in the question bank .*bank\.jsonl"):
        import_reference(graded, ws, bank)
    assert not ws.store.exists()


def test_import_rejects_duplicate_paragraph_and_bad_run_name(tmp_path: Path):
    twice = write_gz_lines(tmp_path / "twice.jsonl.gz", [["q1", [LINES[0][1][0], LINES[0][1][0]]]])
    with pytest.raises(InputError, match=r"twice.jsonl.gz:1: paragraph 'p1' appears twice in query 'q1'"):
        import_reference(twice, tmp_path / "ws")
    spaced = write_gz_lines(tmp_path / "spaced.jsonl.gz",
                            [["q1", [paragraph("p1", "t", "q1", 0, [("my run", 1, 1.0)], [])]]])
    with pytest.raises(InputError, match=r"spaced.jsonl.gz:1: .*rankings\[0\]: id 'my run' contains whitespace"):
        import_reference(spaced, tmp_path / "ws")


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("name, message", [
    ("r\u0000un", r"id 'r\\x00un' contains a control character"),
    ("r" * 300, r"run name 'r+'\.\.\. cannot name a run file: file name 'r+'\.\.\. is too long"),
    ("../up", r"run name '\.\./up' cannot name a run file"),
])
def test_a_failed_import_leaves_the_workspace_as_it_was(graded: Path, tmp_path: Path, name: str, message: str):
    ws = tmp_path / "ws"
    import_reference(graded, ws)
    before = _snapshot(ws)
    bad = write_gz_lines(tmp_path / "bad.jsonl.gz", [["q9", [paragraph("p9", "t", "q9", 1, [(name, 1, 1.0)], [])]]])
    with pytest.raises(InputError, match=message):
        import_reference(bad, ws)
    assert _snapshot(ws) == before
    fresh = tmp_path / "fresh"
    with pytest.raises(InputError):
        import_reference(bad, fresh)
    assert not fresh.exists()


def test_an_import_failing_in_the_store_writes_no_file_and_no_store(graded: Path, tmp_path: Path, monkeypatch):
    def full(self, grades):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(GradeStore, "put_many", full)
    ws = tmp_path / "ws"
    with pytest.raises(OSError):
        import_reference(graded, ws)
    assert not ws.exists()  # no staged file left, the new store and folders removed
    monkeypatch.undo()
    import_reference(graded, ws)
    kept = _snapshot(ws)
    monkeypatch.setattr(GradeStore, "put_many", full)
    other = write_gz_lines(tmp_path / "other.jsonl.gz", [["q9", [paragraph("p9", "t", "q9", 1, [("r9", 1, 1.0)], [])]]])
    with pytest.raises(OSError):
        import_reference(other, ws)
    assert _snapshot(ws) == kept


def test_cli_prints_summary(graded: Path, tmp_path: Path):
    ws = tmp_path / "ws"
    result = CliRunner().invoke(main, ["import", str(graded), "--workspace", str(ws)])
    assert result.exit_code == 0, result.output
    assert result.stdout == SUMMARY.format(file=graded, ws=ws)
    assert "warning: no question bank given" in result.stderr


def test_cli_bad_input_is_one_line(write, tmp_path: Path):
    path = write("bad.jsonl", "[1, 2, 3]\n")
    result = CliRunner().invoke(main, ["import", str(path), "--workspace", str(tmp_path / "ws")])
    assert result.exit_code == 1
    assert result.stderr == f"Error: {path}:1: expected a 2-element list [query_id, [paragraph, ...]]\n"


def test_cli_help_has_example():
    result = CliRunner().invoke(main, ["import", "--help"])
    assert result.exit_code == 0 and "Example:\n    exampp import DL19-graded" in result.output


DL19 = ("data", "dl19", "DL19-graded-t5-rating-genq-exam-qrels-runs-with-text.jsonl.gz")


@pytest.mark.slow
@pytest.mark.shared
def test_import_real_dl19(tmp_path: Path):
    path = shared_path(*DL19)
    raw = _raw_paragraphs(path)
    ws = Workspace.at(tmp_path / "dl19")
    summary = import_reference(path, ws)
    assert (summary.queries, summary.passages, summary.distinct_passages, summary.judged) == (43, 9260, 9139, 9260)
    ratings = sum(len(e["self_ratings"]) for ps in raw.values() for p in ps for e in p["exam_grades"])
    assert summary.grades == {RATED: ratings} and ratings == 92600
    assert len(summary.runs) == 37 and len(list(ws.runs.iterdir())) == 37
    assert sorted(r.name for r in summary.runs if r.zero_based) == [
        f"TUW19-p{i}-{v}" for i in (1, 2, 3) for v in ("f", "re")]
    qrels = read_qrels(ws.official_qrels)
    assert sum(map(len, qrels.values())) == 9260 and len(qrels["19335"]) == len(raw["19335"])
    with GradeStore(ws.store) as store:
        assert len(store.grades(RATED)) == 92600

    # Top-20 of one query recomputed from the raw JSON: a 0-based run and a run with tied scores.
    for run_name in ("TUW19-p1-f", "UNH_bm25"):
        ranked = sorted((r["rank"], p["paragraph_id"]) for p in raw["19335"] for r in p["paragraph_data"]["rankings"]
                        if r["method"] == run_name)
        expected = [pid for _, pid in ranked]
        assert [d.docid for d in read_run(ws.runs / f"{run_name}.run").top("19335", 20)] == expected


def _raw_paragraphs(path: Path) -> dict[str, list[dict]]:
    paragraphs: dict[str, list[dict]] = defaultdict(list)
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            qid, ps = json.loads(line)
            paragraphs[qid].extend(ps)
    return paragraphs


@pytest.mark.shared
def test_writer_reproduces_real_lines(tmp_path: Path):
    with gzip.open(shared_path(*DL19), "rt", encoding="utf-8") as fh:
        lines = [json.loads(next(fh)) for _ in range(3)]
    source = write_gz_lines(tmp_path / "three.jsonl.gz", lines)
    write_reference_grades(read_reference_grades(source), tmp_path / "written.jsonl.gz")
    with gzip.open(tmp_path / "written.jsonl.gz", "rt", encoding="utf-8") as fh:
        assert [json.loads(line) for line in fh] == lines


def test_embedding_ratings_export_as_self_ratings():
    from exampp.formats.reference_grades import paragraph_grades

    method = Method("embedding", "sentence-transformers/all-MiniLM-L6-v2", "cosine@v1:0.5,0.6,0.7,0.8,0.9").method_id
    grades = [Grade("q1", "p1", "q1/a", 4.0, method, answer="0.8123"), Grade("q1", "p1", "q1/b", 0.0, method)]
    [query] = reference_queries({"q1": {"p1": "text"}}, grades)
    [exam] = query.paragraphs[0].exam_grades
    assert exam.prompt_info["is_self_rated"] is True
    assert [(r.question_id, r.self_rating) for r in exam.self_ratings] == [("q1/a", 4), ("q1/b", 0)]
    # read back, the 0-5 ratings survive, filed under the method that made them
    back = paragraph_grades("q1", query.paragraphs[0])
    assert sorted((g.question_id, g.grade) for g in back) == [("q1/a", 4.0), ("q1/b", 0.0)]
    assert {g.method_id for g in back} == {method}


def test_direct_grades_keep_their_method_through_export():
    from exampp.formats.reference_grades import paragraph_grades

    method = Method("direct:thomas", "google/flan-t5-large", "thomas@v1").method_id
    [query] = reference_queries({"q1": {"p1": "text"}}, [Grade("q1", "p1", "direct", 2.0, method, answer="2")])
    assert [(g.method_id, g.grade) for g in paragraph_grades("q1", query.paragraphs[0])] == [(method, 2.0)]


def test_a_method_is_self_rated_in_every_paragraph_or_in_none():
    """Without a scale from the caller, a method's grades decide for the whole export: a paragraph
    whose self-ratings happen to be 0 and 1 is no question-answering paragraph."""
    method = Method("self-rating", "google/flan-t5-large", "self-rating@v1").method_id
    grades = [Grade("q1", "p1", "q1/a", 5.0, method), Grade("q1", "p2", "q1/a", 1.0, method)]
    [query] = reference_queries({"q1": {"p1": "one", "p2": "two"}}, grades)
    assert [p.exam_grades[0].prompt_info["is_self_rated"] for p in query.paragraphs] == [True, True]
    [query] = reference_queries({"q1": {"p1": "one", "p2": "two"}}, grades, self_rated={method: False})
    assert [p.exam_grades[0].self_ratings for p in query.paragraphs] == [None, None]
