"""Fill a workspace from a reference EXAM++ graded-passages file.

The file holds, per query, judged passages with their text, official judgments, the ranks
given by submitted runs, and LLM grades. Importing writes the workspace's grade store,
``runs/<method>.run``, ``qrels/official.qrels``, the passage corpus and, when a question
bank is given, ``question_banks/questions.jsonl``. Importing the same file again gives the
same workspace.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from exampp.collection.grades import DIRECT_QUESTION_ID, Grade
from exampp.collection.qrels import Qrels
from exampp.collection.runs import RankedDoc, Run, trec_order
from exampp.errors import InputError
from exampp.files.io import PathLike, check_output_name, replace_together
from exampp.formats.reference_grades import QueryParagraphs, Ranking, paragraph_grades, read_reference_grades
from exampp.formats.trec_qrels import write_qrels
from exampp.formats.trec_run import write_run
from exampp.stores.grade_store import GradeStore, HashedGrade
from exampp.stores.layout import Workspace


@dataclass(frozen=True)
class ImportedRun:
    """A run rebuilt from the rankings: ``zero_based`` when its ranks start at 0;
    ``scores_from_ranks`` when its scores (ties) could not reproduce its ranks, so -rank is used."""

    name: str
    queries: int
    zero_based: bool
    scores_from_ranks: bool


@dataclass
class Collected:
    """Everything a graded file says, gathered by query (pure data, no workspace yet)."""

    passages: dict[str, dict[str, str]] = field(default_factory=dict)  # query -> passage id -> text
    qrels: Qrels = field(default_factory=dict)
    rankings: dict[str, dict[str, list[Ranking]]] = field(default_factory=dict)  # method -> query -> entries
    grades: list[Grade] = field(default_factory=list)
    lines: dict[str, int | None] = field(default_factory=dict)  # query -> its line in the file, for errors
    run_lines: dict[str, int | None] = field(default_factory=dict)  # run name -> its first line, for errors


@dataclass(frozen=True)
class ImportSummary:
    queries: int
    passages: int  # (query, passage) pairs
    distinct_passages: int  # passage ids in the corpus
    questions: int
    grades: dict[str, int]  # grades read, per method id
    judged: int
    runs: tuple[ImportedRun, ...]
    store_grades: int  # distinct (method, passage text, question text) grades in the store afterwards
    warnings: tuple[str, ...] = ()


def collect(queries: Iterable[QueryParagraphs], path: PathLike | None = None) -> Collected:
    """Gather passages, judgments, rankings and grades; ``path`` names the file in errors."""
    out = Collected()
    for q in queries:
        out.lines.setdefault(q.query_id, q.line)
        texts = out.passages.setdefault(q.query_id, {})
        for p in q.paragraphs:
            if p.paragraph_id in texts:
                raise InputError(path, q.line, f"paragraph {p.paragraph_id!r} appears twice in query {q.query_id!r}")
            texts[p.paragraph_id] = p.text
            relevances = {j.relevance for j in p.judgments}
            if len(relevances) > 1:
                raise InputError(path, q.line,
                                 f"paragraph {p.paragraph_id!r} has conflicting judgments {sorted(relevances)}")
            if relevances:
                out.qrels.setdefault(q.query_id, {})[p.paragraph_id] = relevances.pop()
            for r in p.rankings:
                if r.method not in out.run_lines:
                    _check_run_name(r.method, path, q.line)
                    out.run_lines[r.method] = q.line
                entries = out.rankings.setdefault(r.method, {}).setdefault(q.query_id, [])
                # Paragraph ids are unique per query, so a repeat can only be this paragraph's last entry.
                if entries and entries[-1].paragraph_id == p.paragraph_id:
                    raise InputError(path, q.line, f"run {r.method!r} ranks paragraph {p.paragraph_id!r} twice")
                # Rankings are filed under the line's query: passage ids are per query.
                entries.append(Ranking(r.method, p.paragraph_id, q.query_id, r.rank, r.score))
            out.grades.extend(paragraph_grades(q.query_id, p))
    return out


def _check_run_name(name: str, path: PathLike | None, line: int | None) -> None:
    # The name becomes a file name and the runid column of a TREC run (the reader has refused
    # whitespace and control characters already).
    if not name or name.startswith(".") or any(c in name for c in "/\\"):
        raise InputError(path, line, f"run name {name!r} cannot name a run file (no slashes, no leading dot)")


def _check_run_files(collected: Collected, ws: Workspace, path: PathLike) -> None:
    """Every run file name must be possible here before anything is written."""
    for name, line in collected.run_lines.items():
        try:
            check_output_name(ws.runs / f"{name}.run")
        except ValueError as exc:
            raise InputError(path, line, f"run name {name[:40]!r}... cannot name a run file: {exc}") from None


@contextmanager
def _undone_on_failure(ws: Workspace) -> Iterator[None]:
    """On an error, remove what this import created (an empty store, new empty folders), so that
    a failed import leaves the workspace as it was. Files are staged (replace_together) and the
    store written in one transaction, so nothing else needs undoing."""
    folders = [ws.root, ws.runs, ws.qrels_dir, ws.corpus.parent, ws.question_bank.parent]
    new_folders = [f for f in folders if not f.exists()]
    new_store = not ws.store.exists()
    try:
        yield
    except BaseException:
        if new_store:
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(f"{ws.store}{suffix}").unlink(missing_ok=True)
        for folder in sorted(new_folders, key=lambda f: len(f.parts), reverse=True):
            try:
                folder.rmdir()
            except OSError:  # not empty, or already gone: not ours to remove
                pass
        raise


def build_run(name: str, rankings: Mapping[str, list[Ranking]]) -> tuple[Run, ImportedRun]:
    """A run in trec_eval order that reproduces the given ranks.

    The original scores are kept when trec_eval's order of them (score descending, ties by
    docid descending) gives the rank order in every query; otherwise the score is -rank.
    """
    by_rank = {qid: sorted(entries, key=lambda r: r.rank) for qid, entries in rankings.items()}
    keeps_scores = all(
        [d.docid for d in trec_order(RankedDoc(r.paragraph_id, r.score) for r in entries)]
        == [r.paragraph_id for r in entries]
        for entries in by_rank.values()
    )
    docs = {
        qid: [RankedDoc(r.paragraph_id, r.score if keeps_scores else float(-r.rank)) for r in entries]
        for qid, entries in by_rank.items()
    }
    zero_based = min(r.rank for entries in by_rank.values() for r in entries) == 0
    return Run(name, docs), ImportedRun(name, len(docs), zero_based, not keeps_scores)


def _question_texts(
    collected: Collected,
    bank_questions: Iterable[tuple[str, str, str]] | None,
    path: PathLike | None = None,
    bank_path: PathLike | None = None,
) -> tuple[dict[tuple[str, str], str], list[str]]:
    """Text of every question to register, ``{(query_id, question_id): text}``, and warnings.

    Without a bank the graded file gives only question ids, so the id stands in for the text.
    With a bank, a graded question the bank lacks is an error: the bank was meant to be the exam.
    """
    warnings = []
    texts = {(qid, question_id): text for qid, question_id, text in bank_questions or ()}
    graded = {(g.query_id, g.question_id) for g in collected.grades}
    direct = {key for key in graded if key[1] == DIRECT_QUESTION_ID}
    absent = sorted(graded - direct - set(texts))
    if bank_questions is None:
        warnings.append(
            "no question bank given (--questions): question ids stand in for question texts in the grade store,"
            " so these grades will not be reused for a bank with the real texts"
        )
    elif absent:
        qid, question_id = absent[0]
        more = f" (and {len(absent) - 1} more)" if len(absent) > 1 else ""
        raise InputError(
            path, collected.lines.get(qid),
            f"unknown question id {question_id!r}{more}: not in the question bank {bank_path}"
        )
    if direct:
        warnings.append(f"direct grades are filed under question {DIRECT_QUESTION_ID!r} whose text is the query id")
    texts.update({key: key[1] for key in absent})
    texts.update({key: key[0] for key in direct})
    return texts, warnings


def _corpus(passages: Mapping[str, Mapping[str, str]], path: PathLike) -> dict[str, str]:
    """One text per passage id across queries (the corpus is not per query)."""
    corpus: dict[str, str] = {}
    for qid, texts in passages.items():
        for pid, text in texts.items():
            if corpus.setdefault(pid, text) != text:
                raise InputError(path, None, f"paragraph {pid!r} has a different text in query {qid!r} than before")
    return corpus


def import_reference(
    path: PathLike, workspace: Workspace | PathLike, questions: PathLike | None = None
) -> ImportSummary:
    """Import a reference graded-passages file into a workspace (see the module docstring).

    :param path: The reference graded-passages file.
    :param workspace: The workspace to fill.
    :param questions: A question bank (exampp JSONL or a reference bank) supplying the question
        texts; it is also written to the workspace. None by default.
    :returns: What was imported: counts of queries, passages, questions, grades, judgments and runs.
    """

    from exampp.collection.corpus import Passage
    from exampp.formats.corpus_sources import write_corpus
    from exampp.formats.question_bank import read_question_bank, write_question_bank

    ws = workspace if isinstance(workspace, Workspace) else Workspace.at(workspace)
    from exampp.grading.registry import top_grade

    collected = collect(read_reference_grades(path, top_grade), path)
    if not any(collected.passages.values()):  # an empty corpus would be written, which no reader takes
        raise InputError(path, None, "no queries with paragraphs in graded file")
    bank = read_question_bank(questions) if questions is not None else None
    texts, warnings = _question_texts(
        collected, None if bank is None else ((q.query_id, q.question_id, q.text) for q in bank), path, questions
    )
    corpus = _corpus(collected.passages, path)
    runs = [build_run(name, rankings) for name, rankings in sorted(collected.rankings.items())]

    _check_run_files(collected, ws, path)

    with _undone_on_failure(ws), replace_together():
        for run, _ in runs:
            write_run(run, ws.runs / f"{run.name}.run")
        if collected.qrels:
            write_qrels(collected.qrels, ws.official_qrels)
        write_corpus([Passage(pid, text) for pid, text in corpus.items()], ws.corpus)
        if bank is not None:
            write_question_bank(bank, ws.question_bank)
        # Last, in one transaction: the staged files replace their targets only once it committed.
        with GradeStore(ws.store) as store:
            with store.batch():
                question_hashes = store.register_questions(
                    (qid, question_id, text) for (qid, question_id), text in texts.items())
                passage_hashes = {qid: store.register_passages(qid, passages)
                                  for qid, passages in collected.passages.items()}
                store.put_many(
                    HashedGrade(g, passage_hashes[g.query_id][g.passage_id], question_hashes[g.query_id, g.question_id])
                    for g in collected.grades
                )
            store_grades = store.counts()["grades"]

    per_method: dict[str, int] = defaultdict(int)
    for g in collected.grades:
        per_method[g.method_id] += 1
    return ImportSummary(
        queries=len(collected.passages),
        passages=sum(len(t) for t in collected.passages.values()),
        distinct_passages=len(corpus),
        questions=len(texts),
        grades=dict(sorted(per_method.items())),
        judged=sum(len(j) for j in collected.qrels.values()),
        runs=tuple(info for _, info in runs),
        store_grades=store_grades,
        warnings=tuple(warnings),
    )
