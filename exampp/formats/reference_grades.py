"""Graded-passage files of the reference EXAM++ tool ("autograding workbench"), read and written.

A gzipped JSONL file, one line per query: ``[query_id, [paragraph, ...]]``, where a paragraph
carries its text, official judgments, the rankings of runs that retrieved it, and the LLM
grades (``exam_grades`` against exam questions, ``grades`` for direct grading without
questions). The records below mirror that structure with Python names; unknown keys are
ignored. :func:`paragraph_grades` and :func:`reference_queries` translate between these
records and exampp :class:`~exampp.collection.grades.Grade` records.
"""
from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from exampp.collection.grades import DIRECT_PREFIX, DIRECT_QUESTION_ID, QA, SELF_RATING, Grade, Method
from exampp.collection.ids import id_problem
from exampp.collection.qrels import MAX_GRADE, Qrels, as_label
from exampp.collection.runs import Run
from exampp.errors import InputError
from exampp.files.io import PathLike, atomic_write, display_name, iter_json_lines

# The reference tool's default when a grade predates prompt_info.
DEFAULT_PROMPT_CLASS = "QuestionPromptWithChoices"
SELF_RATING_TOP = 5  # the reference tool's self-rating scale, 0-5
TopGrade = Callable[[str], int]
"""The top of the grade scale of the method grades are filed under (a method name)."""


@dataclass(frozen=True)
class RelevanceJudgment:
    paragraph_id: str
    query: str
    relevance: int
    title_query: str


@dataclass(frozen=True)
class Ranking:
    method: str
    paragraph_id: str
    query_id: str
    rank: int
    score: float


@dataclass(frozen=True)
class SelfRating:
    question_id: str
    self_rating: int


@dataclass(frozen=True)
class ExamGrades:
    """One model's grades of a paragraph against a query's exam questions."""

    llm: str
    answers: tuple[tuple[str, str], ...]  # (question_id, answer text)
    correct_answered: tuple[str, ...]
    wrong_answered: tuple[str, ...]
    self_ratings: tuple[SelfRating, ...] | None = None
    prompt_info: Mapping[str, Any] | None = None
    llm_options: Mapping[str, Any] = field(default_factory=dict)
    exam_ratio: float | None = None
    prompt_type: str | None = None

    @property
    def prompt_class(self) -> str:
        return _prompt_class(self.prompt_info)

    @property
    def is_self_rated(self) -> bool:
        return self.self_ratings is not None


@dataclass(frozen=True)
class DirectGrade:
    """A direct (question-free) relevance grade of a paragraph (the reference tool's ``Grades``)."""

    llm: str
    correct_answered: bool
    answer: str
    self_ratings: int | None = None
    prompt_info: Mapping[str, Any] | None = None
    llm_options: Mapping[str, Any] = field(default_factory=dict)
    prompt_type: str | None = None

    @property
    def prompt_class(self) -> str:
        return _prompt_class(self.prompt_info)


@dataclass(frozen=True)
class Paragraph:
    paragraph_id: str
    text: str
    judgments: tuple[RelevanceJudgment, ...] = ()
    rankings: tuple[Ranking, ...] = ()
    exam_grades: tuple[ExamGrades, ...] = ()
    grades: tuple[DirectGrade, ...] = ()


@dataclass(frozen=True)
class QueryParagraphs:
    """One line of the file: a query and its paragraphs; ``line`` is where it was read from."""

    query_id: str
    paragraphs: tuple[Paragraph, ...]
    line: int | None = field(default=None, compare=False)


def _prompt_class(prompt_info: Mapping[str, Any] | None) -> str:
    return str((prompt_info or {}).get("prompt_class") or DEFAULT_PROMPT_CLASS)


# -- reading -------------------------------------------------------------------------------


class _Bad(Exception):
    """A problem inside one line; turned into an InputError carrying file and line."""


_MISSING = object()


def _get(obj: Mapping[str, Any], key: str, where: str, default: Any = _MISSING) -> Any:
    if key in obj and obj[key] is not None:
        return obj[key]
    if default is _MISSING:
        raise _Bad(f"{where}: missing {key!r}")
    return default


def _dict(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise _Bad(f"{where}: expected a JSON object, found {type(value).__name__}")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise _Bad(f"{where}: expected a JSON list, found {type(value).__name__}")
    return value


def _id(value: Any, where: str) -> str:
    # The reference tool (pydantic) accepts numeric ids and reads them as strings.
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise _Bad(f"{where}: expected a string id, found {value!r}")


def _line_id(value: Any, where: str, *, first_column: bool = False) -> str:
    """An id that exampp writes into runs and qrels (query, paragraph, run and question ids)."""
    text = _id(value, where)
    problem = id_problem(text, first_column=first_column)
    if problem is not None:
        raise _Bad(f"{where}: id {text!r} {problem}")
    return text


def _int(value: Any, where: str, limit: int | None = None) -> int:
    """An integer (``limit``: at most that far from 0)."""
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or (isinstance(value, float) and not (math.isfinite(value) and value.is_integer()))):
        raise _Bad(f"{where}: expected an integer, found {str(value)[:40]!r}")
    if limit is not None and abs(value) > limit:
        raise _Bad(f"{where}: {str(value)[:40]} is out of range (-{limit} to {limit})")
    return int(value)


_MAX_RANK = 10**9  # ranks become -rank scores: far beyond any ranking, well within a float


def _reference_scale(method_name: str) -> int:
    """Without the method registry: the reference tool's self-rating scale for every method."""
    return SELF_RATING_TOP


def _rating(value: Any, where: str, method_name: str, top_grade: TopGrade) -> int:
    """A self-rating: an integer on the grade scale of the method it is filed under (stored as a
    grade, it must be one that method can give)."""
    rating = _int(value, where)
    top = top_grade(method_name)
    if not 0 <= rating <= top:
        raise _Bad(f"{where}: {str(value)[:40]} is outside the grade scale of {method_name!r} (0 to {top})")
    return rating


def _float(value: Any, where: str) -> float:
    # NaN has no place in a ranking (trec_eval's order is undefined; run files refuse it).
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise _Bad(f"{where}: expected a number, found {value!r}")
    try:
        return float(value)
    except OverflowError:  # an integer with hundreds of digits
        raise _Bad(f"{where}: number out of range") from None


def _judgment(obj: Any, where: str) -> RelevanceJudgment:
    obj = _dict(obj, where)
    return RelevanceJudgment(
        paragraph_id=_line_id(_get(obj, "paragraphId", where), where),
        query=_line_id(_get(obj, "query", where), where, first_column=True),
        relevance=_int(_get(obj, "relevance", where), f"{where}.relevance", MAX_GRADE),
        title_query=_id(_get(obj, "titleQuery", where, ""), where),
    )


def _ranking(obj: Any, where: str) -> Ranking:
    obj = _dict(obj, where)
    return Ranking(
        method=_line_id(_get(obj, "method", where), where),
        paragraph_id=_line_id(_get(obj, "paragraphId", where), where),
        query_id=_line_id(_get(obj, "queryId", where), where, first_column=True),
        rank=_int(_get(obj, "rank", where), f"{where}.rank", _MAX_RANK),
        score=_float(_get(obj, "score", where), f"{where}.score"),
    )


def _exam_grades(obj: Any, where: str, top_grade: TopGrade) -> ExamGrades:
    obj = _dict(obj, where)
    answers = []
    for j, pair in enumerate(_list(_get(obj, "answers", where), f"{where}.answers")):
        if not isinstance(pair, list) or len(pair) != 2:
            raise _Bad(f"{where}.answers[{j}]: expected [question_id, answer_text]")
        answers.append((_line_id(pair[0], f"{where}.answers[{j}]"), "" if pair[1] is None else str(pair[1])))
    prompt_info = obj.get("prompt_info")
    prompt_info = None if prompt_info is None else _dict(prompt_info, f"{where}.prompt_info")
    self_ratings: tuple[SelfRating, ...] | None = None
    if obj.get("self_ratings") is not None:
        method_name = _exam_method_name(prompt_info, self_rated=True)
        rated: list[SelfRating] = []
        for j, rating in enumerate(_list(obj["self_ratings"], f"{where}.self_ratings")):
            at = f"{where}.self_ratings[{j}]"
            rating = _dict(rating, at)
            # Newer reference files rate nuggets instead of questions.
            qid = rating.get("question_id") if rating.get("question_id") is not None else _get(rating, "nugget_id", at)
            rated.append(SelfRating(_line_id(qid, at),
                                    _rating(_get(rating, "self_rating", at), f"{at}.self_rating", method_name,
                                            top_grade)))
        self_ratings = tuple(rated)
    return _named(exam_method, where, ExamGrades(
        llm=_id(_get(obj, "llm", where), where),
        answers=tuple(answers),
        correct_answered=tuple(_line_id(q, where) for q in _list(_get(obj, "correctAnswered", where, []), where)),
        wrong_answered=tuple(_line_id(q, where) for q in _list(_get(obj, "wrongAnswered", where, []), where)),
        self_ratings=self_ratings,
        prompt_info=prompt_info,
        llm_options=_dict(_get(obj, "llm_options", where, {}), f"{where}.llm_options"),
        exam_ratio=None if obj.get("exam_ratio") is None else _float(obj["exam_ratio"], f"{where}.exam_ratio"),
        prompt_type=obj.get("prompt_type"),
    ))


def _direct_grade(obj: Any, where: str, top_grade: TopGrade) -> DirectGrade:
    obj = _dict(obj, where)
    correct = _get(obj, "correctAnswered", where)
    if not isinstance(correct, bool):
        raise _Bad(f"{where}.correctAnswered: expected true or false, found {correct!r}")
    prompt_info = obj.get("prompt_info")
    prompt_info = None if prompt_info is None else _dict(prompt_info, f"{where}.prompt_info")
    rating = obj.get("self_ratings")
    return _named(direct_method, where, DirectGrade(
        llm=_id(_get(obj, "llm", where), where),
        correct_answered=correct,
        answer=str(_get(obj, "answer", where, "")),
        self_ratings=None if rating is None else _rating(rating, f"{where}.self_ratings",
                                                         _direct_method_name(prompt_info), top_grade),
        prompt_info=prompt_info,
        llm_options=_dict(_get(obj, "llm_options", where, {}), f"{where}.llm_options"),
        prompt_type=obj.get("prompt_type"),
    ))


def _named(method: Any, where: str, grade: Any) -> Any:
    """``grade`` when its method can be named: model (llm) and prompt class non-empty, without '|'."""
    try:
        method(grade)
    except ValueError as exc:
        raise _Bad(f"{where}: {exc}") from None
    return grade


def _paragraph(obj: Any, where: str, top_grade: TopGrade) -> Paragraph:
    obj = _dict(obj, where)
    pid = _line_id(_get(obj, "paragraph_id", where), where)
    where = f"{where} ({pid})"
    text = _get(obj, "text", where)
    if not isinstance(text, str):
        raise _Bad(f"{where}: 'text' is not a string")
    data = _dict(_get(obj, "paragraph_data", where, {}), f"{where}.paragraph_data")
    judgments = _list(_get(data, "judgments", where, []), f"{where}.judgments")
    rankings = _list(_get(data, "rankings", where, []), f"{where}.rankings")
    exam_grades = _list(_get(obj, "exam_grades", where, []), f"{where}.exam_grades")
    grades = _list(_get(obj, "grades", where, []), f"{where}.grades")
    return Paragraph(
        paragraph_id=pid,
        text=text,
        judgments=tuple(_judgment(j, f"{where}.judgments[{i}]") for i, j in enumerate(judgments)),
        rankings=tuple(_ranking(r, f"{where}.rankings[{i}]") for i, r in enumerate(rankings)),
        exam_grades=tuple(_exam_grades(e, f"{where}.exam_grades[{i}]", top_grade) for i, e in enumerate(exam_grades)),
        grades=tuple(_direct_grade(g, f"{where}.grades[{i}]", top_grade) for i, g in enumerate(grades)),
    )


def read_reference_grades(path: PathLike, top_grade: TopGrade = _reference_scale) -> Iterator[QueryParagraphs]:
    """Yield each line of a reference graded-passages file (plain or gzipped) as it is read. A
    self-rating must lie on ``top_grade``'s scale for the method it is filed under: by default the
    reference tool's 0-5; the importer passes the method registry's scales
    (:func:`exampp.grading.registry.top_grade`)."""
    for lineno, value in iter_json_lines(path):
        try:
            if not isinstance(value, list) or len(value) != 2:
                raise _Bad("expected a 2-element list [query_id, [paragraph, ...]]")
            query_id = _line_id(value[0], "query id", first_column=True)
            paragraphs = _list(value[1], f"query {query_id!r}: paragraphs")
            yield QueryParagraphs(
                query_id,
                tuple(_paragraph(p, f"query {query_id!r}, paragraph {i + 1}", top_grade)
                      for i, p in enumerate(paragraphs)),
                lineno,
            )
        except _Bad as exc:
            raise InputError(display_name(path), lineno, str(exc)) from None


# -- writing -------------------------------------------------------------------------------


def _without_none(obj: dict[str, Any]) -> dict[str, Any]:
    # Optional fields the reference tool reads as None when absent.
    return {k: v for k, v in obj.items() if v is not None}


def _exam_grades_json(e: ExamGrades) -> dict[str, Any]:
    ratings = None
    if e.self_ratings is not None:
        ratings = [{"question_id": r.question_id, "self_rating": r.self_rating} for r in e.self_ratings]
    return _without_none({
        "correctAnswered": list(e.correct_answered),
        "wrongAnswered": list(e.wrong_answered),
        "answers": [list(pair) for pair in e.answers],
        "llm": e.llm,
        "llm_options": dict(e.llm_options),
        "exam_ratio": e.exam_ratio,
        "prompt_info": None if e.prompt_info is None else dict(e.prompt_info),
        "self_ratings": ratings,
        "prompt_type": e.prompt_type,
    })


def _direct_grade_json(g: DirectGrade) -> dict[str, Any]:
    return _without_none({
        "correctAnswered": g.correct_answered,
        "answer": g.answer,
        "llm": g.llm,
        "llm_options": dict(g.llm_options),
        "prompt_info": None if g.prompt_info is None else dict(g.prompt_info),
        "self_ratings": g.self_ratings,
        "prompt_type": g.prompt_type,
    })


def _paragraph_json(p: Paragraph) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "paragraph_id": p.paragraph_id,
        "text": p.text,
        "paragraph": {},
        "paragraph_data": {
            "judgments": [
                {"paragraphId": j.paragraph_id, "query": j.query, "relevance": j.relevance, "titleQuery": j.title_query}
                for j in p.judgments
            ],
            "rankings": [
                {"method": r.method, "paragraphId": r.paragraph_id, "queryId": r.query_id, "rank": r.rank,
                 "score": r.score}
                for r in p.rankings
            ],
        },
        "exam_grades": [_exam_grades_json(e) for e in p.exam_grades],
    }
    if p.grades:
        obj["grades"] = [_direct_grade_json(g) for g in p.grades]
    return obj


def write_reference_grades(queries: Iterable[QueryParagraphs], path: PathLike) -> None:
    """Write a reference graded-passages file (gzipped when ``path`` ends in ``.gz``), atomically."""
    with atomic_write(path) as fh:
        for q in queries:
            fh.write(json.dumps([q.query_id, [_paragraph_json(p) for p in q.paragraphs]], ensure_ascii=False))
            fh.write("\n")


# -- translation to and from exampp grades -----------------------------------------------


# exampp's name of the grading method, kept in prompt_info on export: the format itself tells
# only self-rated from not, so without it an embedding grader's grades would come back as
# self-ratings, and a direct grader's under its prompt class.
EXAMPP_METHOD = "exampp_method"


def _exampp_name(prompt_info: Mapping[str, Any] | None, default: str) -> str:
    name = (prompt_info or {}).get(EXAMPP_METHOD)
    return name if isinstance(name, str) else default


def _exam_method_name(prompt_info: Mapping[str, Any] | None, self_rated: bool) -> str:
    return _exampp_name(prompt_info, SELF_RATING if self_rated else QA)


def _direct_method_name(prompt_info: Mapping[str, Any] | None) -> str:
    return _exampp_name(prompt_info, DIRECT_PREFIX + _prompt_class(prompt_info).lower())


def exam_method(e: ExamGrades) -> Method:
    return Method(_exam_method_name(e.prompt_info, e.is_self_rated), e.llm, e.prompt_class)


def direct_method(g: DirectGrade) -> Method:
    return Method(_direct_method_name(g.prompt_info), g.llm, g.prompt_class)


def paragraph_grades(query_id: str, paragraph: Paragraph) -> list[Grade]:
    """The exampp grades a paragraph carries.

    Self-rated exam grades give one grade per self-rating (0-5); other exam grades are
    question answering: 1 per correctly, 0 per wrongly answered question. Direct grades are
    filed under question id ``"direct"``: their self-rating when given, else 1/0 for relevant.
    """
    pid = paragraph.paragraph_id
    grades: list[Grade] = []
    for e in paragraph.exam_grades:
        method_id = exam_method(e).method_id
        answers = dict(e.answers)
        if e.self_ratings is not None:
            scored = [(r.question_id, float(r.self_rating)) for r in e.self_ratings]
        else:
            scored = [(q, 1.0) for q in e.correct_answered] + [(q, 0.0) for q in e.wrong_answered]
        grades.extend(Grade(query_id, pid, q, value, method_id, answers.get(q)) for q, value in scored)
    for g in paragraph.grades:
        value = float(g.self_ratings if g.self_ratings is not None else g.correct_answered)
        grades.append(Grade(query_id, pid, DIRECT_QUESTION_ID, value, direct_method(g).method_id, g.answer))
    return grades


def _integer(value: float, what: str) -> int:
    """The reference tool reads self-ratings and relevance as integers: a fractional value is
    refused, not truncated."""
    label = as_label(value)
    if not isinstance(label, int):
        raise ValueError(f"{what} is {value!r}: the reference tool's format holds integers only")
    return label


def _self_rating(grade: Grade) -> int:
    return _integer(grade.grade, f"the grade of passage {grade.passage_id!r} for question {grade.question_id!r}")


def _to_judgment(query_id: str, passage_id: str, relevance: float) -> RelevanceJudgment:
    relevance = _integer(relevance, f"the relevance of {passage_id!r} in query {query_id!r}")
    return RelevanceJudgment(passage_id, query_id, relevance, query_id)


def _to_exam_grades(method: Method, grades: list[Grade], self_rated: bool) -> ExamGrades:
    correct = tuple(g.question_id for g in grades if g.grade >= 1)
    return ExamGrades(
        llm=method.model,
        answers=tuple((g.question_id, g.answer if g.answer is not None else "") for g in grades),
        correct_answered=correct,
        wrong_answered=tuple(g.question_id for g in grades if g.grade < 1),
        self_ratings=tuple(SelfRating(g.question_id, _self_rating(g)) for g in grades) if self_rated else None,
        prompt_info={"prompt_class": method.prompt, "is_self_rated": self_rated, EXAMPP_METHOD: method.name},
        exam_ratio=len(correct) / len(grades),
    )


def _to_direct_grade(method: Method, grade: Grade) -> DirectGrade:
    return DirectGrade(
        llm=method.model,
        correct_answered=grade.grade >= 1,
        answer=grade.answer if grade.answer is not None else "",
        self_ratings=_self_rating(grade),
        prompt_info={"prompt_class": method.prompt, "is_self_rated": False, EXAMPP_METHOD: method.name},
    )


def reference_queries(
    passages: Mapping[str, Mapping[str, str]],
    grades: Iterable[Grade],
    qrels: Qrels | None = None,
    runs: Iterable[Run] = (),
    self_rated: Mapping[str, bool] | None = None,
) -> list[QueryParagraphs]:
    """Build reference-format records from exampp data, the inverse of :func:`paragraph_grades`.

    ``passages`` is ``{query_id: {passage_id: text}}`` and fixes which paragraphs appear, in
    order. Runs contribute 1-based ranks in trec_eval order; ``qrels`` the judgments.
    ``self_rated`` (method id -> bool) tells 0-5 self-ratings (the format's ``is_self_rated``) from 0/1
    grades; a method it does not name is self-rated when any of its grades is above 1 (the caller
    who knows the method's scale passes it).
    """
    by_paragraph: dict[tuple[str, str], dict[str, list[Grade]]] = defaultdict(lambda: defaultdict(list))
    given = self_rated or {}
    rated = dict(given)
    for g in grades:
        by_paragraph[g.query_id, g.passage_id][g.method_id].append(g)
        if g.method_id not in given:
            rated[g.method_id] = rated.get(g.method_id, False) or g.grade > 1
    ranked: dict[tuple[str, str], list[Ranking]] = defaultdict(list)
    for run in runs:
        for qid, docs in run.rankings.items():
            for rank, doc in enumerate(docs, start=1):
                ranked[qid, doc.docid].append(Ranking(run.name, doc.docid, qid, rank, doc.score))
    result = []
    for qid, texts in passages.items():
        paragraphs = []
        for pid, text in texts.items():
            exam: list[ExamGrades] = []
            direct: list[DirectGrade] = []
            for method_id, method_grades in sorted(by_paragraph.get((qid, pid), {}).items()):
                method = Method.parse(method_id)
                if method.name.startswith(DIRECT_PREFIX):
                    direct.extend(_to_direct_grade(method, g) for g in method_grades)
                else:
                    exam.append(_to_exam_grades(method, method_grades, rated[method_id]))
            judged = (qrels or {}).get(qid, {})
            judgments = (_to_judgment(qid, pid, judged[pid]),) if pid in judged else ()
            paragraphs.append(Paragraph(pid, text, judgments, tuple(ranked.get((qid, pid), ())), tuple(exam),
                                        tuple(direct)))
        result.append(QueryParagraphs(qid, tuple(paragraphs)))
    return result
