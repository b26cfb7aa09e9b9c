"""The bank review job: what a person needs to improve a question bank, from the grades in a
workspace's store and, where there are some, the official judgments.

    review = review_bank("out/dl19", tau=4, rel_level=2)
    review.too_broad, review.unanswered, review.gaps, review.answers, review.questions   # DataFrames
    write_bank_review(review, "out/dl19/review")     # five TSV files and review.html

A question counts as *answered* by a passage graded ≥ τ for it. The tables:

- **too broad**: questions answered by more officially non-relevant passages (official grade below
  ``rel_level``) than relevant ones: as detectors of relevance they are wrong more often than right.
  Ranked by the number of non-relevant passages answering them (most first), then by precision
  (relevant / judged answering passages, lowest first), then in bank order.
- **unanswered**: questions that no graded passage answers, with the best grade any passage got.
- **gaps**: officially relevant passages (≥ ``rel_level``) graded for their query that answer none
  of its questions (best grade < τ): what the bank misses. Highest official grade first, then
  lowest best grade.
- **answers**: for methods that keep an extracted answer (``qa``, ``qa-extractive``,
  ``multiple-choice``), each question's answers grouped after normalisation
  (:func:`exampp.grading.verify.normalize`: case, punctuation, stopwords, stems).
- **questions**: every question of the exam with its counts and flags (``unanswered``, ``too-broad``).

Passages graded but not judged officially count in ``answered`` and ``unjudged``, never in precision.
Errors are :class:`~exampp.errors.ExamppError` (the command line prints them as one line).
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from exampp.api import Warn, python_warning
from exampp.api.workspace import (
    WorkspaceError,
    as_workspace,
    given_or_existing,
    labelled_grades,
    stored_grades,
    workspace_bank,
)
from exampp.files.io import PathLike
from exampp.report.bank_review_page import BankReview, review_html  # BankReview: callers import it from here
from exampp.report.bank_tables import QUESTION_COLUMNS, answers_note, review_tables, unanswered
from exampp.stores.layout import Workspace

FILES = ("too-broad.tsv", "unanswered.tsv", "gaps.tsv", "answers.tsv", "questions.tsv", "review.html")


def review_bank(
    workspace: Workspace | PathLike = ".",
    *,
    method: str | None = None,
    tau: float | None = None,
    bank: PathLike | None = None,
    official: PathLike | None = None,
    rel_level: float = 1,
    corpus: PathLike | None = None,
    warn: Warn = python_warning,
) -> BankReview:
    """Review a question bank on the grades of the passages of the workspace's runs
    (:func:`~exampp.api.workspace.labelled_grades`; ``exampp bank review``).

    :param workspace: The workspace.
    :param method: The store's grading method (None: the only one there).
    :param tau: The grade at which a question counts as answered (None: the method's default).
    :param bank: The bank to review (default: the workspace's bank; without one, the graded question ids).
    :param official: Official qrels (default: the workspace's ``qrels/official.qrels`` when it exists).
    :param rel_level: The official grade from which a passage is relevant.
    :param corpus: Where passage texts come from (a file, ``irds:...``, ``pyserini:...``; default:
        the workspace's corpus when it exists).
    :param warn: Takes each warning line (default: a Python warning).
    """
    from exampp.formats.trec_qrels import read_qrels
    from exampp.grading.registry import stored_method

    ws = as_workspace(workspace)
    stored = labelled_grades(ws, stored_grades(ws, method), warn=warn)
    known = stored_method(stored.method_id)
    if known is not None and known.direct:
        raise WorkspaceError(f"{stored.method_id}: direct grades judge passages against the query, not "
                             "questions: there is no bank to review")
    tau = stored.default_tau if tau is None else tau
    questions, query_texts = _exam(ws, bank, stored.grades)
    official = given_or_existing(official, ws.official_qrels)
    judgments = read_qrels(official) if official is not None else None
    note = answers_note(stored.method_id)
    tables = review_tables(stored.grades, questions, judgments, tau, rel_level, group=note is None)
    texts = _texts(ws, corpus, tables.named_passages())
    gap = tables.gaps
    if len(gap):
        gap = gap.assign(text=[texts.get(pid, "") for pid in gap["passage_id"]])
    return BankReview(stored.method_id, tau, rel_level, judgments is not None, tables.questions, tables.too_broad,
                      unanswered(tables.questions), gap, tables.answers, note, texts, tables.relevant_ungraded,
                      query_texts)


def write_bank_review(review: BankReview, folder: PathLike, *, title: str | None = None) -> list[str]:
    """Write the tables as TSV and the readable page ``review.html``, each file replaced atomically.

    :param review: The review (:func:`review_bank`).
    :param folder: The folder to write to (made if missing).
    :param title: The page's title (default: "Question bank review").
    :returns: The names written (:data:`FILES`).
    """

    from exampp.files.io import atomic_write
    from exampp.report.records import write_tsv

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    tables = (review.too_broad, review.unanswered, review.gaps, review.answers, review.questions)
    for name, table in zip(FILES, tables):
        write_tsv(table, out / name)
    with atomic_write(out / "review.html") as fh:
        fh.write(review_html(review, title=title))
    return list(FILES)


# -- the edges: what the workspace holds -----------------------------------------------------


def _exam(ws: Workspace, bank: PathLike | None, grades: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, str]]:
    """``query_id, question_id, text`` of the exam in bank order: ``bank``, else the workspace's
    bank, else the graded question ids (their ids stand in for texts); and the query titles, from
    the bank, else the workspace's topics."""
    from exampp.formats.topic_files import read_topics

    titles = {qid: topic.text for qid, topic in read_topics(ws.topics).items()} if ws.topics.exists() else {}
    read = workspace_bank(ws, bank)
    if read is not None:
        exam = pd.DataFrame([(q.query_id, q.question_id, q.text) for q in read], columns=QUESTION_COLUMNS)
        return exam, {**titles, **read.query_texts}
    pairs = grades[["query_id", "question_id"]].drop_duplicates().sort_values(["query_id", "question_id"])
    return pairs.assign(text=pairs["question_id"]).reset_index(drop=True), titles


def _texts(ws: Workspace, corpus: PathLike | None, ids: Sequence[str] | set[str]) -> dict[str, str]:
    """The texts of passages ``ids`` from ``corpus``, else the workspace's corpus; none without one."""
    from exampp.formats.corpus_sources import open_corpus

    source = given_or_existing(corpus, ws.corpus)
    if source is None or not ids:
        return {}
    return open_corpus(source).get_many(sorted(ids))
