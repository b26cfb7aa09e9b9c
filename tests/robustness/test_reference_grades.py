"""Graded-passage files of the reference tool: read_reference_grades, write_reference_grades
(and reference_queries), and import_reference into a workspace folder."""
from __future__ import annotations

import math

import pytest
from hypothesis import example, strategies as st

from exampp.collection.grades import Grade, Method
from exampp.errors import InputError
from exampp.formats.corpus_sources import read_passages
from exampp.formats.reference_grades import (
    ExamGrades,
    Paragraph,
    QueryParagraphs,
    Ranking,
    RelevanceJudgment,
    SelfRating,
    read_reference_grades,
    reference_queries,
    write_reference_grades,
)
from exampp.formats.trec_qrels import read_qrels
from exampp.formats.trec_run import read_run
from exampp.importer import collect, import_reference
from exampp.stores.layout import Workspace

from .checks import assert_ids, assert_located, can_write, parse, put, read_file, scratch, tries, written_or_refused
from .strategies import DOCS, QUERIES, QUESTIONS, RUNS, bank_text, graded_text, hostile, hostile_ids, pool_ids, texts


def _ids(queries: list[QueryParagraphs]) -> tuple[list[str], list[str]]:
    """Ids the records carry that go into line formats: first-column (query) ids and the others."""
    first, other = [], []
    for q in queries:
        first.append(q.query_id)
        for p in q.paragraphs:
            other.append(p.paragraph_id)
            first += [j.query for j in p.judgments] + [r.query_id for r in p.rankings]
            other += [j.paragraph_id for j in p.judgments] + [r.method for r in p.rankings]
            other += [r.paragraph_id for r in p.rankings]
            for e in p.exam_grades:
                other += [a for a, _ in e.answers] + list(e.correct_answered) + list(e.wrong_answered)
                other += [r.question_id for r in e.self_ratings or ()]
    return first, other


def _graded(judgment: str = '{"paragraphId": "p", "query": "q", "relevance": 1}', score: str = "1.5") -> bytes:
    ranking = f'{{"method": "run", "paragraphId": "p", "queryId": "q", "rank": 1, "score": {score}}}'
    return (f'["q", [{{"paragraph_id": "p", "text": "t", "paragraph_data": {{"judgments": [{judgment}], '
            f'"rankings": [{ranking}]}}}}]]\n').encode()


@pytest.mark.slow
@tries(150, data=hostile(graded_text))
# Each raised a traceback (OverflowError, ValueError) or passed NaN on to a run file no reader takes.
@example(data=_graded(judgment='{"paragraphId": "p", "query": "q", "relevance": 1e400}'))
@example(data=_graded(judgment='{"paragraphId": "p", "query": "q", "relevance": NaN}'))
@example(data=_graded(score="NaN"))
@example(data=_graded(score="1" * 400))
def test_read_reference_grades_gives_records_or_a_located_error(data):
    queries = read_file(read_reference_grades, "graded.jsonl", data)
    if queries is not None:
        first, other = _ids(queries)
        assert_ids(first, first_column=True)
        assert_ids(other)


@pytest.mark.slow
@tries(60, data=hostile(graded_text), bank=st.none() | hostile(bank_text))
@example(data=b'["q1", []]\n', bank=None)  # imported, leaving an empty corpus file that no reader takes
@example(data=_graded(score="NaN"), bank=None)  # write_run refused the NaN score: a traceback
@example(data=_graded().replace(b'"text": "t"', b'"text": "t", "exam_grades": [{"llm": "a|b", "answers": []}]'),
         bank=None)  # the method id 'qa|a|b|...' cannot be parsed: a traceback
def test_import_fills_a_workspace_or_says_where_the_input_is_wrong(data, bank):
    with scratch() as folder:
        graded = put(folder / "graded.jsonl", data)
        questions = None if bank is None else put(folder / "bank.jsonl", bank)
        ws = Workspace.at(folder / "ws")
        try:
            summary = import_reference(graded, ws, questions)
        except InputError as exc:
            assert_located(exc, exc.path, data if exc.path == str(graded) else bank)
            assert exc.path in (str(graded), str(questions))
            assert not ws.root.exists(), "a failed import left a workspace behind"
            return
        _assert_workspace_holds(ws, collect(read_reference_grades(graded)), summary)


def _assert_workspace_holds(ws: Workspace, collected, summary) -> None:
    """Every file the import wrote reads back, with exactly the records of the graded file."""
    assert read_passages(ws.corpus).keys() == {p for texts in collected.passages.values() for p in texts}
    if collected.qrels:
        assert read_qrels(ws.official_qrels) == collected.qrels
    assert {path.stem for path in ws.runs.glob("*.run")} == set(collected.rankings) == {r.name for r in summary.runs}
    for name, by_query in collected.rankings.items():
        run = read_run(ws.runs / f"{name}.run")
        assert run.name == name
        assert {q: sorted(d.docid for d in docs) for q, docs in run.rankings.items()} == {
            q: sorted(r.paragraph_id for r in entries) for q, entries in by_query.items()}


# -- writing ------------------------------------------------------------------------------------

llms = st.sampled_from(["google/flan-t5-large", "t5"]) | hostile_ids()
question_ids = pool_ids(QUESTIONS)


@st.composite
def exam_grades(draw) -> ExamGrades:
    ratings = draw(st.lists(st.tuples(question_ids, st.integers(0, 5)), max_size=3, unique_by=lambda r: r[0]))
    rated = draw(st.booleans())
    return ExamGrades(
        llm=draw(llms),
        answers=tuple((q, draw(texts)) for q, _ in ratings),
        correct_answered=tuple(q for q, r in ratings if r >= 1),
        wrong_answered=tuple(q for q, r in ratings if r < 1),
        self_ratings=tuple(SelfRating(q, r) for q, r in ratings) if rated else None,
        prompt_info={"prompt_class": draw(st.just("P") | hostile_ids()), "is_self_rated": rated},
    )


@st.composite
def graded_queries(draw) -> list[QueryParagraphs]:
    queries = []
    for query_id in draw(st.lists(pool_ids(QUERIES, first_column=True), min_size=1, max_size=2, unique=True)):
        paragraphs = []
        for pid in draw(st.lists(pool_ids(DOCS), max_size=3, unique=True)):
            judged = draw(st.lists(st.integers(0, 3), max_size=1))
            ranked = draw(st.lists(st.tuples(pool_ids(RUNS), st.integers(0, 9), st.floats()), max_size=2,
                                   unique_by=lambda r: r[0]))
            paragraphs.append(Paragraph(
                pid, draw(texts), tuple(RelevanceJudgment(pid, query_id, rel, query_id) for rel in judged),
                tuple(Ranking(method, pid, query_id, rank, score) for method, rank, score in ranked),
                tuple(draw(st.lists(exam_grades(), max_size=2)))))
        queries.append(QueryParagraphs(query_id, tuple(paragraphs)))
    return queries


@pytest.mark.slow
@tries(100, queries=graded_queries())
def test_written_grades_read_back_as_written_or_are_refused_where_they_are(queries):
    first, other = _ids(queries)
    with scratch() as folder:
        path = folder / "graded.jsonl"
        if not written_or_refused(lambda p: write_reference_grades(queries, p), path):
            return  # a text that is not UTF-8 (a lone surrogate)
        back = parse(read_reference_grades, path)
        if back is None:
            assert not can_write(*other, first_column=first) or not _methods_ok(queries) or _nan(queries)
            return
        assert back == queries and can_write(*other, first_column=first) and _methods_ok(queries)
        summary = parse(lambda p: import_reference(p, folder / "ws"), path)
        if summary is not None:
            _assert_workspace_holds(Workspace.at(folder / "ws"), collect(back), summary)


def _methods_ok(queries: list[QueryParagraphs]) -> bool:
    """Whether every grade's method can be named (model and prompt: non-empty, no '|')."""
    try:
        for q in queries:
            for p in q.paragraphs:
                for e in p.exam_grades:
                    Method("x", e.llm, e.prompt_class)
    except ValueError:
        return False
    return True


def _nan(queries: list[QueryParagraphs]) -> bool:
    return any(math.isnan(r.score) for q in queries for p in q.paragraphs for r in p.rankings)


@pytest.mark.slow
@tries(60, grades=st.lists(st.tuples(pool_ids(QUERIES, first_column=True), pool_ids(DOCS), question_ids,
                                     st.integers(0, 5)), min_size=1, max_size=5, unique_by=lambda g: g[:3]))
def test_reference_queries_of_exampp_grades_read_back_to_the_same_grades(grades):
    method = "self-rating|t5|P"
    records = [Grade(q, p, question, float(value), method, str(value)) for q, p, question, value in grades]
    passages: dict[str, dict[str, str]] = {}
    for g in records:
        passages.setdefault(g.query_id, {})[g.passage_id] = f"text of {g.passage_id}"
    queries = reference_queries(passages, records)
    first, other = _ids(queries)
    with scratch() as folder:
        path = folder / "graded.jsonl"
        if not written_or_refused(lambda p: write_reference_grades(queries, p), path):
            return
        back = parse(read_reference_grades, path)
    assert (back is None) == (not can_write(*other, first_column=first))
    if back is not None:
        assert sorted(collect(back).grades, key=_key) == sorted(records, key=_key)


def _key(grade: Grade) -> tuple:
    return grade.query_id, grade.passage_id, grade.question_id
