"""The `exampp exam generate` job as Python calls: a multiple-choice exam from a document corpus
(Guinet et al., 2024), one question per document.

    result = generate_exam("exam_corpus/documents.jsonl", "out/exam.jsonl", task_domain="the Larkspur Home Hub manual",
                           backend=BackendSpec("openai", "my-model", {"base_url": "http://localhost:8000/v1"}))
    result.filters, result.baselines, result.keys      # DataFrames
    result.bank                                         # the exam written

Each document is asked once with the exam prompt (:data:`~exampp.generation.exam.EXAM_GENERATION`);
an answer that cannot be read is asked again once with a corrective message, then recorded as a
failure. Every document's outcome (the question read, or the problem, with the raw answers) goes
to the run's :class:`~exampp.generation.journal.Journal` as soon as its chunk is done, so a killed
run started again asks only the documents not yet in it. The filters, the shuffle and the
baselines are recomputed from the journal at the end: they are deterministic (``seed``), and
changing their settings needs no new requests while the journal is there.

The exam is an exampp question bank with ``choices`` and ``correct_choice``, one query per
document: query id = ``query_prefix`` + document id, query text = the question. exampp grades a
passage against the questions of the query it was retrieved for, so for a RAG system to be
examined as Guinet et al. examine it (each question is put to the system, which must pick the
key from what it retrieves) each question has to be a query of its own: the systems' runs rank
passages for these query ids, the ``multiple-choice`` grader asks whether a passage lets the
judge pick the key, EXAM-Cover is the fraction of exam questions a system answers, and ``exampp
irt`` fits one item per question. Each question's ``info`` holds its source document, Bloom
levels, question word and provenance (model, prompt id@version, temperature, date).
"""
from __future__ import annotations

import datetime
import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from exampp.analysis.categories import bloom_levels, question_word
from exampp.collection.corpus import Passage, open_corpus
from exampp.collection.ids import check_query_id
from exampp.collection.io import PathLike, atomic_write, check_output_name, display_name
from exampp.collection.question_bank import Question, QuestionBank, question_id_for, write_question_bank
from exampp.errors import InputError, OutputError
from exampp.generation.exam import (
    EXAM_CORRECTION,
    EXAM_GENERATION,
    LETTERS,
    Candidate,
    ExamQuestion,
    FilterStep,
    Thresholds,
    Unparseable,
    corrective_conversation,
    filter_exam,
    fixed_answer_baseline,
    key_distribution,
    longest_answer_baseline,
    parse_exam_answer,
    shuffle_choices,
)
from exampp.generation.journal import Journal
from exampp.llm.backend import Backend, BackendSpec, Capability, Usage
from exampp.progress import progress_bar
from exampp.report.records import json_value, records

DEFAULT_MAX_NEW_TOKENS = 512  # a question, four choices and the explanations the prompt asks for
DEFAULT_CHUNK = 8  # documents asked between two journal writes (the openai backend's default concurrency)
DEFAULT_DROP_FRACTION = 0.05  # what each distractor filter drops when its threshold is not given
EMPTY_DOCUMENT = "the document is empty"


@dataclass(frozen=True)
class ExamResult:
    """What :func:`generate_exam` did and produced."""

    bank: QuestionBank
    """The exam: the questions kept, choices shuffled (empty when none was kept)."""
    documents: int
    asked: int
    """Documents asked in this run (the others' answers came from the journal of a killed run)."""
    asked_again: int
    """Documents whose first answer could not be read, asked again with a corrective message."""
    failures: pd.DataFrame
    """document_id, problem, answer (the last one): documents without a readable question."""
    filters: pd.DataFrame
    """One row per step: filter, measure, threshold, chosen (fixed / drop 5%), questions (reaching it), dropped, kept."""
    dropped: pd.DataFrame
    """document_id, filter, measure, evidence (the score; the words, for a question not self-contained), question,
    choices and key (as generated)."""
    baselines: pd.DataFrame
    """baseline, answer, accuracy: blind strategies on the exam written (and before shuffling)."""
    keys: pd.DataFrame
    """letter, generated, shuffled: how many keys sit at each letter before and after shuffling."""
    usage: Usage
    """The generator's requests and tokens in this run."""
    written: tuple[Path, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """Everything but the bank, JSON-ready (the report file; ``--format json``)."""
        return {"documents": self.documents, "asked": self.asked, "asked_again": self.asked_again,
                "questions": len(self.bank),
                "usage": vars(self.usage), "filters": records(self.filters), "baselines": records(self.baselines),
                "keys": records(self.keys), "dropped": records(self.dropped), "failures": records(self.failures),
                "written": [str(path) for path in self.written]}


def generate_exam(
    corpus: PathLike,
    output: PathLike,
    *,
    backend: Backend | BackendSpec,
    task_domain: str,
    seed: int = 0,
    temperature: float = 0.0,
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
    chunk_size: int = DEFAULT_CHUNK,
    query_prefix: str = "",
    embedding: Backend | BackendSpec | None = BackendSpec("embedding"),
    drop_fraction: float = DEFAULT_DROP_FRACTION,
    thresholds: Thresholds = Thresholds(),
    report: PathLike | None = None,
    progress: bool = True,
) -> ExamResult:
    """Ask ``backend`` (a backend, or a spec opened and closed here) for one question per document of
    ``corpus`` (a JSONL/TSV file, ``irds:`` or ``pyserini:`` source), filter them, shuffle their
    choices and write the exam to ``output`` (an exampp bank; not written when no question is
    kept), the result as JSON to ``report`` when given.

    ``embedding``: the model of the cosine filters (None: Jaccard filters only). ``drop_fraction``:
    what each distractor filter drops where ``thresholds`` fixes no threshold. ``seed``: the shuffle's.
    """
    if not task_domain.strip():
        raise ValueError("the task domain (what the corpus documents) must not be empty")
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be at least 1, not {chunk_size}")
    documents = _read_documents(corpus, query_prefix)
    _prepare_output(output)
    with _opened(backend) as generator:
        generator.require(frozenset({Capability.GENERATE}), "exam generation")
        settings = {"prompt": EXAM_GENERATION.prompt_id, "correction": EXAM_CORRECTION.prompt_id,
                    "model": generator.name, "task_domain": task_domain, "temperature": temperature,
                    "max_new_tokens": max_new_tokens}
        journal = Journal(output, settings)
        asked = _ask_all(generator, journal, documents, task_domain, temperature, max_new_tokens, chunk_size, progress)
        with _opened(embedding) as embedder:
            result = _build_exam(documents, {d.docid: journal.done[d.docid] for d in documents}, settings, embedder,
                                 seed=seed, query_prefix=query_prefix, drop_fraction=drop_fraction,
                                 thresholds=thresholds)
        written = [Path(output)] if len(result.bank) else []
        if len(result.bank):
            write_question_bank(result.bank, output)
        if report is not None:
            written.append(Path(report))
        result = replace(result, asked=asked, usage=generator.usage, written=tuple(written))
        if report is not None:
            with atomic_write(report) as fh:
                fh.write(json.dumps(result.as_dict(), indent=2, ensure_ascii=False) + "\n")
        journal.remove()  # the run is complete: every document's outcome is in the outputs
        return result


@contextmanager
def _opened(backend: Backend | BackendSpec | None) -> Iterator[Backend | None]:
    """The backend; one given as a spec is opened here and closed afterwards."""
    if not isinstance(backend, BackendSpec):
        yield backend
        return
    opened = backend.open()
    try:
        yield opened
    finally:
        opened.close()


def _ask_all(generator: Backend, journal: Journal, documents: Sequence[Passage], task_domain: str,
             temperature: float, max_new_tokens: int, chunk_size: int, progress: bool) -> int:
    """Ask for the documents the journal lacks, ``chunk_size`` at a time, each chunk journaled as it
    is done; returns how many were asked."""
    with journal:
        todo = [d for d in documents if d.docid not in journal.done]
        bar = progress_bar(len(todo), progress, unit="doc", desc="exam")
        try:
            for start in range(0, len(todo), chunk_size):
                chunk = todo[start:start + chunk_size]
                for document, entry in zip(chunk, _ask(generator, chunk, task_domain, temperature, max_new_tokens)):
                    journal.record(document.docid, entry)
                if bar is not None:
                    bar.update(len(chunk))
        finally:
            if bar is not None:
                bar.close()
    return len(todo)


def _prepare_output(output: PathLike) -> None:
    """Refuse an output that cannot be a file, and make its folder: the journal goes beside it from the start."""
    try:
        check_output_name(output)
        Path(output).parent.mkdir(parents=True, exist_ok=True)
    except ValueError as exc:
        raise OutputError(output, str(exc)) from None
    except OSError as exc:
        raise OutputError(output, f"cannot make its folder: {exc.strerror or exc}") from None


def _read_documents(corpus: PathLike, query_prefix: str) -> list[Passage]:
    documents = list(open_corpus(corpus))
    if not documents:
        raise InputError(display_name(corpus), None, "the corpus holds no documents")
    for document in documents:  # each document is a query of the exam
        try:
            check_query_id(query_prefix + document.docid, "query id (prefix + document id)")
        except ValueError as exc:
            raise InputError(display_name(corpus), None, str(exc)) from None
    return documents


def _ask(generator: Backend, documents: Sequence[Passage], task_domain: str, temperature: float,
         max_new_tokens: int) -> list[dict[str, Any]]:
    """Each document's journal entry: the question read (``question``) or why none could be
    (``problem``), the answers received (``answers``: the first, and the one asked again), the date."""
    date = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    entries: list[dict[str, Any]] = [{"answers": [], "date": date} for _ in documents]
    asked = [i for i, d in enumerate(documents) if d.text.strip()]
    for i in set(range(len(documents))) - set(asked):
        entries[i]["problem"] = EMPTY_DOCUMENT
    prompts = {i: generator.fit(EXAM_GENERATION, context=documents[i].text, task_domain=task_domain) for i in asked}
    again: list[int] = []
    for i, answer in zip(asked, generator.generate([prompts[i] for i in asked], max_new_tokens=max_new_tokens,
                                                    temperature=temperature)):
        if _read(entries[i], answer):
            again.append(i)
    if again:  # one more try, in the same conversation, saying what was wrong
        conversations = [corrective_conversation(prompts[i], entries[i]["answers"][0], entries[i]["problem"])
                         for i in again]
        for i, answer in zip(again, generator.generate(conversations, max_new_tokens=max_new_tokens,
                                                       temperature=temperature)):
            _read(entries[i], answer)
    return entries


def _read(entry: dict[str, Any], answer: str) -> bool:
    """Record ``answer`` in ``entry``, with the question read from it or the problem; True when unreadable."""
    entry["answers"].append(answer)
    try:
        entry["question"] = parse_exam_answer(answer).as_dict()
    except Unparseable as problem:
        entry["problem"] = str(problem)
        return True
    entry.pop("problem", None)
    return False


def _build_exam(documents: Sequence[Passage], entries: Mapping[str, dict[str, Any]], settings: Mapping[str, Any],
                embedder: Backend | None, *, seed: int, query_prefix: str, drop_fraction: float,
                thresholds: Thresholds) -> ExamResult:
    """The exam from every document's journal entry: filters, shuffle, baselines, the bank."""
    texts = {d.docid: d.text for d in documents}
    candidates = [Candidate(d.docid, ExamQuestion.from_dict(entries[d.docid]["question"]))
                  for d in documents if entries[d.docid].get("question")]
    failures = pd.DataFrame(
        [(d.docid, entries[d.docid]["problem"], (entries[d.docid]["answers"] or [""])[-1])
         for d in documents if not entries[d.docid].get("question")],
        columns=["document_id", "problem", "answer"])
    if embedder is not None:
        embedder.require(frozenset({Capability.EMBED}), "the cosine filters")
    kept, steps = filter_exam(candidates, texts, embed=embedder.embed if embedder is not None else None,
                              drop_fraction=drop_fraction, thresholds=thresholds)
    generated = [c.question for c in kept]
    shuffled = shuffle_choices(generated, seed)
    questions = [_bank_question(c.document_id, q, entries[c.document_id], settings, query_prefix)
                 for c, q in zip(kept, shuffled)]
    bank = QuestionBank(questions, query_texts={q.query_id: q.text for q in questions})
    by_document = {c.document_id: c.question for c in candidates}
    asked_again = sum(len(entries[d.docid]["answers"]) > 1 for d in documents)
    return ExamResult(bank, len(documents), 0, asked_again, failures, _filter_table(len(documents), len(failures), steps),
                      _dropped_table(steps, by_document), _baselines(generated, shuffled),
                      _keys(generated, shuffled), Usage())


def _bank_question(document_id: str, question: ExamQuestion, entry: Mapping[str, Any], settings: Mapping[str, Any],
                   query_prefix: str) -> Question:
    query_id = query_prefix + document_id
    info = {"document_id": document_id, "bloom": sorted(bloom_levels(question.question)),
            "question_word": question_word(question.question), "model": settings["model"],
            "prompt": settings["prompt"], "temperature": settings["temperature"], "date": entry["date"]}
    return Question(query_id, question_id_for(query_id, question.question), question.question,
                    choices=question.choices, correct_choice=question.key, source=f"generated:{settings['model']}",
                    info=info)


def _filter_table(documents: int, failures: int, steps: Sequence[FilterStep]) -> pd.DataFrame:
    rows = [("unparseable", None, None, None, documents, failures, documents - failures)]
    rows += [(s.name, s.measure, s.threshold, s.chosen, s.reaching, len(s.dropped), s.kept) for s in steps]
    return pd.DataFrame(rows, columns=["filter", "measure", "threshold", "chosen", "questions", "dropped", "kept"])


def _dropped_table(steps: Sequence[FilterStep], questions: Mapping[str, ExamQuestion]) -> pd.DataFrame:
    rows = [(d, s.name, s.measure, json_value(score), questions[d].question, list(questions[d].choices),
             LETTERS[questions[d].key]) for s in steps for d, score in s.dropped.items()]
    return pd.DataFrame(rows, columns=["document_id", "filter", "measure", "evidence", "question", "choices", "key"])


def _baselines(generated: Sequence[ExamQuestion], shuffled: Sequence[ExamQuestion]) -> pd.DataFrame:
    letter, fixed = fixed_answer_baseline(shuffled)
    before, fixed_before = fixed_answer_baseline(generated)
    return pd.DataFrame([("fixed answer", letter, fixed), ("longest answer", "longest", longest_answer_baseline(shuffled)),
                         ("fixed answer before shuffling", before, fixed_before)],
                        columns=["baseline", "answer", "accuracy"])


def _keys(generated: Sequence[ExamQuestion], shuffled: Sequence[ExamQuestion]) -> pd.DataFrame:
    before, after = key_distribution(generated), key_distribution(shuffled)
    return pd.DataFrame([(letter, before[letter], after[letter]) for letter in LETTERS],
                        columns=["letter", "generated", "shuffled"])

