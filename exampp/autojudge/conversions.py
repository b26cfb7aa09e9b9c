"""AutoJudge's objects as exampp's inputs, and exampp's results as AutoJudge's objects.

- Reports (any report format ``autojudge_base`` loads: TREC RAG 2024-26, RAGTIME, NeuCLIR) are written back as
  the report file they came from, which exampp's reports reader reads like any ``--responses`` file (the
  sentences joined with spaces, their citations resolved to doc ids).
- Requests become topics: the title is the query, ``problem_statement`` the description and ``background`` the
  narrative.
- NuggetBanks and exampp's question banks convert both ways through :mod:`exampp.formats.autojudge_nuggets`.
- exampp's qrels become ``Qrels`` rows (integer grades), per-query score tables a ``Leaderboard`` with one
  ``all`` row per run and measure, the mean over the topics (what exampp's leaderboards print).
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import pandas as pd

from exampp.collection.qrels import Qrels
from exampp.collection.questions import QuestionBank
from exampp.collection.topics import Topic
from exampp.errors import ExamppError


def report_lines(reports: Iterable[Any]) -> Iterator[str]:
    """AutoJudge ``Report`` objects as the JSON lines of a report file, which exampp's reports reader
    (:mod:`exampp.formats.reports`) reads as it reads ``exampp grade --responses REPORTS``.

    :param reports: The reports.
    """
    for report in reports:
        yield report.model_dump_json(exclude_none=True) + "\n"


def request_topics(requests: Iterable[Any]) -> list[Topic]:
    """exampp topics of AutoJudge ``Request`` objects.

    :param requests: The requests (``request_id``, ``title``, ``problem_statement``, ``background``).
    """
    return [Topic(str(r.request_id), r.title, description=r.problem_statement or None,
                  narrative=r.background or None) for r in requests]


def question_bank(nugget_banks: Any) -> QuestionBank:
    """The questions (and claims) of an AutoJudge ``NuggetBanks`` as an exampp question bank.

    :param nugget_banks: The nugget banks (``banks``: topic id -> ``NuggetBank``).
    """
    from exampp.formats.autojudge_nuggets import read_nugget_banks_records

    records = [(n, bank.model_dump(mode="json", exclude_none=True))
               for n, bank in enumerate(nugget_banks.banks.values(), start=1)]
    return read_nugget_banks_records(records, "<nugget banks>").bank


def nugget_banks(bank: QuestionBank) -> Any:
    """An exampp question bank as AutoJudge ``NuggetBanks`` (one ``NuggetBank`` per topic).

    :param bank: The bank; its disabled questions are left out.
    """
    from autojudge_base.nugget_data import NuggetBank, NuggetBanks

    from exampp.formats.autojudge_nuggets import nugget_banks_records

    banks = [NuggetBank.model_validate(record) for record in nugget_banks_records(bank.enabled())]
    return NuggetBanks.from_banks_list(banks)


def autojudge_qrels(qrels: Qrels) -> Any:
    """exampp qrels as AutoJudge ``Qrels``, sorted by topic and doc id.

    :param qrels: ``{query_id: {doc_id: label}}``; labels are integers (EXAM labels, or 0/1 at a min grade).
    :raises ExamppError: A fractional label (AutoJudge's grades are integers).
    """
    from autojudge_base.qrels.qrels import QrelRow, Qrels as AutoJudgeQrels

    rows = []
    for query_id in sorted(qrels):
        for doc_id, label in sorted(qrels[query_id].items()):
            if label != int(label):
                raise ExamppError(f"label {label} of {query_id} {doc_id} is not an integer: AutoJudge's qrels "
                                  "hold integer grades (give min_grade, or another label)")
            rows.append(QrelRow(topic_id=query_id, doc_id=doc_id, grade=int(label)))
    return AutoJudgeQrels(rows=rows)


def leaderboard(tables: Mapping[str, pd.DataFrame], topic_ids: Sequence[str], descriptions: Mapping[str, str]
                ) -> Any:
    """An AutoJudge ``Leaderboard`` of per-query score tables, with the ``all`` rows (each run's mean).

    :param tables: Measure -> a table with columns ``run``, ``query_id`` and ``value``, one row per run and topic.
    :param topic_ids: The topics every run is scored on (the ``all`` rows average over them).
    :param descriptions: Measure -> what it is (the harness writes it to ``measures.yml``).
    """
    from autojudge_base.leaderboard.leaderboard import LeaderboardBuilder, LeaderboardSpec, MeasureSpec

    spec = LeaderboardSpec(measures=tuple(MeasureSpec(m, float, descriptions.get(m, "")) for m in tables))
    values: dict[tuple[str, str], dict[str, float]] = {}
    for measure, table in tables.items():
        for run, query_id, value in zip(table["run"], table["query_id"], table["value"]):
            values.setdefault((run, query_id), {})[measure] = float(value)
    builder = LeaderboardBuilder(spec)
    for (run, query_id), row in sorted(values.items()):
        missing = [m for m in tables if m not in row]
        if missing:
            raise ExamppError(f"run {run!r}, topic {query_id!r} has no {', '.join(missing)}")
        builder.add(run_id=run, topic_id=query_id, values=row)
    return builder.build(expected_topic_ids=list(topic_ids), on_missing="error")
