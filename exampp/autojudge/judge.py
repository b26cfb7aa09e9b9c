"""The AutoJudge judge: exampp's jobs behind ``autojudge_base``'s three protocols.

The harness (``auto-judge run -w workflow.yml --rag-responses DIR --rag-topics FILE ...``) builds
:class:`ExamppJudge` with no arguments and calls, as the workflow asks:

- ``create_nuggets``: ``exampp bank generate`` (:func:`exampp.api.bank_generate.generate_bank`) with the LLM, on
  the topics; nugget banks given to it are kept and only topics without questions are asked.
- ``create_qrels``: ``exampp grade --responses``: the answers segmented into passages, every passage graded
  against its topic's questions (the nugget banks given, else the ``bank`` setting), and the EXAM-Qrels of the
  answers' passages (what ``qrels/responses.qrels`` holds; doc ids are exampp's passage ids
  ``run:topic:n:md5``).
- ``judge``: the same grading, then the leaderboard: EXAM-Cover@depth, n-EXAM@depth (``exampp cover
  --normalized``) and the nugget score V_strict (``exampp nuggets assign`` then ``exampp nuggets score``), per
  run and topic, with the ``all`` rows.

Everything runs in a workspace (:class:`~exampp.autojudge.settings.JudgeSettings`): its grade store keeps every
grade, so a second run of the harness, or ``create_qrels`` then ``judge``, grades nothing twice, and an
interrupted one resumes. The inputs the judge hands to exampp's jobs are written there too
(``responses/autojudge.jsonl``, ``topics/topics.jsonl``, ``question_banks/autojudge.jsonl``), so the same
results come from exampp's own commands on that folder.
"""
from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd
from autojudge_base.nugget_data import NuggetBanks

from exampp.api.grade import GradeJob, GradeResult
from exampp.autojudge.conversions import (
    autojudge_qrels,
    leaderboard,
    nugget_banks as to_nugget_banks,
    question_bank,
    report_lines,
    request_topics,
)
from exampp.autojudge.settings import JudgeSettings, needs_llm
from exampp.errors import ExamppError
from exampp.files.io import atomic_write

DESCRIPTIONS = {
    "EXAM-Cover": "EXAM-Cover@depth: share of the topic's exam questions the answer's passages answer (grade >= tau)",
    "n-EXAM": "n-EXAM@depth: EXAM-Cover over the questions some answer answers",
    "V_strict": "nugget score: vital nuggets fully supported by the answer, over the topic's vital nuggets",
}


def _log(line: str) -> None:
    """The judge's notes, on stderr beside the harness's own."""
    print(f"exampp: {line}", file=sys.stderr)


@dataclass(frozen=True)
class _Inputs:
    """The files the judge wrote into its workspace for exampp's jobs."""

    responses: Path
    topics: Path
    bank: Path | None


class ExamppJudge:
    """exampp as a TREC AutoJudge judge (``judge_class: exampp.autojudge.ExamppJudge``): see the module docstring.
    Settings come as keyword arguments (the workflow's ``settings``; :mod:`exampp.autojudge.settings`)."""

    nugget_banks_type = NuggetBanks

    def create_nuggets(self, rag_responses: Iterable[Any] | None, rag_topics: Sequence[Any], llm_config: Any,
                       nugget_banks: Any = None, corpus: str | None = None, **kwargs: Any) -> Any:
        """Exam questions for every topic from the LLM (``exampp bank generate``), as ``NuggetBanks``.

        :param rag_responses: Not used: questions come from the topics.
        :param rag_topics: The topics (Requests).
        :param llm_config: The harness's LLM (the generator unless the settings name an LLM backend).
        :param nugget_banks: Banks to keep: only topics without questions in them are asked.
        :param corpus: Not used.
        :param kwargs: The judge's settings (:mod:`exampp.autojudge.settings`).
        """
        from exampp.api.bank_generate import generate_bank
        from exampp.collection.questions import QuestionBank
        from exampp.formats.question_bank import write_question_bank

        settings = JudgeSettings.parse(kwargs, llm_config)
        topics = {topic.query_id: topic for topic in request_topics(rag_topics)}
        output = settings.workspace / "question_banks" / "generated.jsonl"
        if nugget_banks is not None:
            given = question_bank(nugget_banks)
            kept = QuestionBank([q for q in given if q.query_id in topics], query_texts=given.query_texts)
            if len(kept):
                write_question_bank(kept, output)
        result = generate_bank(topics, output, settings.llm, prompt=settings.prompt, progress=settings.progress,
                               warn=_log)
        _log(f"bank generate: {result.new_questions} questions new, {len(result.failed)} items failed; {output}")
        return to_nugget_banks(result.bank.enabled())

    def create_qrels(self, rag_responses: Iterable[Any], rag_topics: Sequence[Any], llm_config: Any,
                     nugget_banks: Any = None, corpus: str | None = None, **kwargs: Any) -> Any:
        """The EXAM-Qrels of the answers' passages (``exampp grade --responses``), as ``Qrels``.

        :param rag_responses: The answers (Reports).
        :param rag_topics: The topics (Requests).
        :param llm_config: The harness's LLM (the grader's, for an LLM method and no backend named).
        :param nugget_banks: The exam, unless the ``bank`` setting names one.
        :param corpus: Not used: the answers are the passages graded.
        :param kwargs: The judge's settings.
        """
        settings = JudgeSettings.parse(kwargs, llm_config)
        _, result = _grade(settings, _write_inputs(settings, rag_responses, rag_topics, nugget_banks))
        return autojudge_qrels(result.answer_qrels)

    def judge(self, rag_responses: Iterable[Any], rag_topics: Sequence[Any], llm_config: Any,
              nugget_banks: Any = None, qrels: Any = None, corpus: str | None = None, **kwargs: Any) -> Any:
        """The leaderboard of the runs: the ``measures`` setting's, per run and topic, and each run's ``all`` row.

        :param rag_responses: The answers (Reports).
        :param rag_topics: The topics (Requests).
        :param llm_config: The harness's LLM (the grader's, for an LLM method and no backend named).
        :param nugget_banks: The exam, unless the ``bank`` setting names one.
        :param qrels: Not used: the leaderboard is scored on the grades (create_qrels' qrels are their labels).
        :param corpus: Not used: the answers are the passages graded.
        :param kwargs: The judge's settings.
        """
        settings = JudgeSettings.parse(kwargs, llm_config)
        inputs = _write_inputs(settings, rag_responses, rag_topics, nugget_banks)
        job, result = _grade(settings, inputs)
        topic_ids = sorted(set(result.cover["query_id"]))
        tables: dict[str, pd.DataFrame] = {}
        for measure in settings.measures:
            if measure == "EXAM-Cover":
                tables[measure] = _values(result.cover, "cover")
            elif measure == "n-EXAM":
                tables[measure] = _values(_n_exam(inputs, result, job.depth), "cover")
            else:
                tables[measure] = _v_strict(settings, inputs, result.cover[["run", "query_id"]])
        return leaderboard(tables, topic_ids, DESCRIPTIONS)


def _write_inputs(settings: JudgeSettings, reports: Iterable[Any], requests: Sequence[Any],
                  banks: Any) -> _Inputs:
    """The answers, topics and exam as files in the workspace, for exampp's jobs."""
    from exampp.formats.question_bank import write_question_bank
    from exampp.formats.topic_files import write_topics

    ws = settings.workspace
    lines = list(report_lines(reports))
    if not lines:
        raise ExamppError("no answers to judge: the harness gave no reports")
    responses = ws / "responses" / "autojudge.jsonl"
    responses.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(responses) as fh:
        fh.writelines(lines)
    topics = request_topics(requests)
    topics_file = ws / "topics" / "topics.jsonl"
    topics_file.parent.mkdir(parents=True, exist_ok=True)
    write_topics(topics, topics_file)
    bank: Path | None = None
    if settings.grade.get("bank") is not None:
        bank = Path(settings.grade["bank"])
    elif banks is not None:
        bank = ws / "question_banks" / "autojudge.jsonl"
        bank.parent.mkdir(parents=True, exist_ok=True)
        write_question_bank(question_bank(banks), bank)
    return _Inputs(responses, topics_file, bank)


def _grade(settings: JudgeSettings, inputs: _Inputs) -> tuple[GradeJob, GradeResult]:
    """``exampp grade -w WORKSPACE --responses ... --topics ... --bank ...`` with the settings."""
    from exampp.formats.exampp_toml import BACKEND_KEYS

    grade = {key: value for key, value in settings.grade.items() if key not in BACKEND_KEYS}
    grade["bank"] = str(inputs.bank) if inputs.bank is not None else None
    job = GradeJob.configure(workspace=settings.workspace, responses=str(inputs.responses),
                             topics=str(inputs.topics), progress=settings.progress, **grade)
    # backend options as exampp.toml gives them: left out where the grader's backend takes none (the served
    # LLM's concurrency beside an offline grader)
    options = {key: value for key, value in settings.grade.items() if key in BACKEND_KEYS}
    job = replace(job, backend_defaults={**job.backend_defaults, **options})
    result = job.run()
    for line in result.warnings:
        _log(line)
    _log(f"grade ({result.method_id}): {result.summary}")
    return job, result


def _values(per_query: pd.DataFrame, column: str) -> pd.DataFrame:
    return pd.DataFrame({"run": per_query["run"], "query_id": per_query["query_id"], "value": per_query[column]})


def _n_exam(inputs: _Inputs, result: GradeResult, depth: int) -> pd.DataFrame:
    """n-EXAM (``exampp cover --normalized``) of the answers' passages, on the grades and exam the grading gave."""
    from exampp.scoring import exam_cover
    from exampp.segment import load_responses

    return exam_cover(load_responses(inputs.responses).runs, result.grades, result.exam.question_ids(),
                      tau=result.tau, depth=depth, normalized=True)


def _v_strict(settings: JudgeSettings, inputs: _Inputs, cells: pd.DataFrame) -> pd.DataFrame:
    """``exampp nuggets assign`` (the ``nugget_method``) then ``exampp nuggets score``: V_strict of every answer;
    a (run, topic) without an answer, or whose topic has no nuggets, scores 0 (``nuggets score --complete``)."""
    from exampp.api.nugget_assign import NuggetAssignJob
    from exampp.api.nuggets import score_nuggets
    from exampp.grading.registry import parse_method

    if inputs.bank is None:
        raise ExamppError("V_strict needs nuggets: give nugget banks, or the 'bank' setting")
    method = parse_method(settings.nugget_method)
    job = NuggetAssignJob(inputs.responses, settings.workspace / "nuggets" / "assigned.jsonl.gz", bank=inputs.bank,
                          method=method, backend=settings.llm if needs_llm(method) else None,
                          workspace=settings.workspace, progress=settings.progress)
    assigned = job.run()
    _log(f"nuggets assign ({assigned.method_id}): {assigned}")
    scores = score_nuggets(assigned.answers).per_answer
    found = {(run, qid): value for run, qid, value in zip(scores["run"], scores["query_id"], scores["V_strict"])}
    values = [found.get((run, qid), 0.0) for run, qid in zip(cells["run"], cells["query_id"])]
    return pd.DataFrame({"run": list(cells["run"]), "query_id": list(cells["query_id"]), "value": values})
