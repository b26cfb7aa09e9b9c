"""The `exampp exam generate` job as Python calls: a multiple-choice exam from a document corpus
(Guinet et al., 2024), one question per document.

    result = ExamGenerateJob("exam_corpus/documents.jsonl", "out/exam.jsonl",
                             backend=BackendSpec("openai", "my-model", {"base_url": "http://localhost:8000/v1"}),
                             task_domain="the Larkspur Home Hub manual").run()
    result.filters, result.baselines, result.keys      # DataFrames
    result.bank                                         # the exam written

Each document is asked with the exam prompt (:data:`~exampp.generation.exam.EXAM_GENERATION`)
through :mod:`exampp.generation.asking`; an answer that cannot be read is asked again in the same
conversation with a message naming the problem, up to ``max_attempts`` requests (default 2), then
recorded as a failure. An empty document is a failure without a request.

The answers are kept for good: every document's outcome (the question read, or the problem, with
the raw answers) goes to ``OUTPUT.answers.jsonl`` as soon as it is settled, and the exam (the
filters, the shuffle, the baselines) is computed from that file at the end of every run. So a
killed run started again asks only the documents not yet in it; a run started again after a
complete one asks nothing, and applies the filter thresholds and the seed given then to the
answers kept (re-filtering needs no request); a failed document is asked again only with
``retry_failed`` (a temperature-0 model answers the same way). The file records the generation
settings (model, prompts, task domain, temperature, token and attempt limits) and refuses to be
continued with others; the filters and the seed are not among them.

The exam is an exampp question bank with ``choices`` and ``correct_choice``, one query per
document: query id = ``query_prefix`` + document id, query text = the question. exampp grades a
passage against the questions of the query it was retrieved for, so for a RAG system to be
examined as Guinet et al. examine it (each question is put to the system, which must pick the
key from what it retrieves) each question has to be a query of its own: the systems' runs rank
passages for these query ids, the ``multiple-choice`` grader asks whether a passage lets the
judge pick the key, EXAM-Cover is the fraction of exam questions a system answers, and ``exampp
irt`` fits one item per question. Each question's ``info`` holds its source document, Bloom
levels, question word and provenance (model, prompt id@version, temperature, date, attempts).
"""
from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from exampp.analysis.categories import bloom_levels, question_word
from exampp.collection.corpus import Passage
from exampp.collection.ids import check_query_id
from exampp.collection.questions import Question, QuestionBank, question_id_for
from exampp.errors import InputError
from exampp.files.io import PathLike, atomic_write, display_name
from exampp.formats.corpus_sources import open_corpus
from exampp.formats.question_bank import write_question_bank
from exampp.generation.asking import (
    Asking,
    Outcome,
    Run,
    Task,
    ask_all,
    generator_identity,
    interrupted_keeps,
    require_capability,
    utc_now,
)
from exampp.generation.exam import (
    EXAM_CORRECTION,
    EXAM_GENERATION,
    LETTERS,
    Candidate,
    ExamQuestion,
    FilterStep,
    Thresholds,
    corrective,
    filter_exam,
    fixed_answer_baseline,
    key_distribution,
    longest_answer_baseline,
    read_exam_answer,
    shuffle_choices,
)
from exampp.generation.journal import Journal, journal_path
from exampp.llm.backend import Backend, BackendSpec, Capability, Usage, opened
from exampp.report.records import json_value, records
from exampp.setting_rules import CheckedSettings

DEFAULT_MAX_NEW_TOKENS = 512  # a question, four choices and the explanations the prompt asks for
DEFAULT_MAX_ATTEMPTS = 2  # the first request, and one more after an unreadable answer
DEFAULT_DROP_FRACTION = 0.05  # what each distractor filter drops when its threshold is not given
EMPTY_DOCUMENT = "the document is empty"
ANSWERS = "answers"  # the answers are kept in OUTPUT.answers.jsonl


def answers_path(output: PathLike) -> Path:
    """Where the answers of an exam are kept: ``OUTPUT.answers.jsonl``.

    :param output: The exam's file.
    """

    return journal_path(output, ANSWERS)


@dataclass(frozen=True)
class ExamResult:
    """What :class:`ExamGenerateJob` did and produced."""

    bank: QuestionBank
    """The exam: the questions kept, choices shuffled (empty when none was kept)."""
    documents: int
    asked: int
    """Documents asked in this run."""
    reused: int
    """Documents whose answers came from the answers file (an earlier or a killed run), not asked again."""
    asked_again: int
    """Documents whose first answer could not be read, asked again with a corrective message (in this run or
    the one whose answers are kept)."""
    failures: pd.DataFrame
    """document_id, problem, answer (the last one): documents without a readable question."""
    filters: pd.DataFrame
    """One row per step: filter, measure, threshold, chosen (fixed / drop 5%), questions (reaching it), dropped,
    kept."""
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
        return {"documents": self.documents, "asked": self.asked, "reused": self.reused,
                "asked_again": self.asked_again, "questions": len(self.bank),
                "usage": vars(self.usage), "filters": records(self.filters), "baselines": records(self.baselines),
                "keys": records(self.keys), "dropped": records(self.dropped), "failures": records(self.failures),
                "written": [str(path) for path in self.written]}


@dataclass(frozen=True)
class ExamGenerateJob(CheckedSettings):
    """Ask for one question per document that ``OUTPUT.answers.jsonl`` lacks, filter them all, shuffle their choices
    and write the exam (see the module docstring). :meth:`run` does the job.

    :param corpus: The documents: a JSONL/TSV file, ``irds:`` or ``pyserini:`` source.
    :param output: The exam to write (an exampp bank; not written when no question is kept).
    :param backend: The generator: a backend, or a spec opened here when something is to be asked,
        and closed.
    :param task_domain: What the documents are, as the prompt names them (``the Larkspur Home Hub manual``).
    :param seed: The seed of the choices' shuffle.
    :param temperature: The generator's sampling temperature.
    :param max_new_tokens: The most tokens of an answer.
    :param max_attempts: Requests per document.
    :param chunk_size: Documents per batch (default: the openai backend's concurrency, else 8).
    :param retry_failed: Ask again the documents that failed in an earlier run.
    :param query_prefix: Goes before each document id to make the exam's query ids.
    :param embedding: The model of the cosine filters (None: Jaccard filters only).
    :param drop_fraction: What each distractor filter drops where ``thresholds`` fixes no threshold.
    :param thresholds: Fixed thresholds of the distractor filters.
    :param report: Write the result there as JSON.
    :param progress: Show a progress bar.
    :raises SettingError: A setting that breaks its rule (:mod:`exampp.setting_rules`).
    """

    corpus: PathLike
    output: PathLike
    _: KW_ONLY
    backend: Backend | BackendSpec
    task_domain: str
    seed: int = 0
    temperature: float = 0.0
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    chunk_size: int | None = None
    retry_failed: bool = False
    query_prefix: str = ""
    embedding: Backend | BackendSpec | None = BackendSpec("embedding")
    drop_fraction: float = DEFAULT_DROP_FRACTION
    thresholds: Thresholds = Thresholds()
    report: PathLike | None = None
    progress: bool = True

    def run(self, now: Callable[[], str] = utc_now) -> ExamResult:
        """Do the job.

        :param now: Gives the provenance date (UTC ISO).
        """
        with interrupted_keeps(answers_path(self.output)):
            if not self.task_domain.strip():
                raise ValueError("the task domain (what the corpus documents) must not be empty")
            asking = Asking(self.max_new_tokens, self.temperature, self.max_attempts)
            documents = _read_documents(self.corpus, self.query_prefix)
            if self.embedding is not None:  # before any request
                require_capability(self.embedding, Capability.EMBED, "the cosine filters")
            settings = {**generator_identity(self.backend, "exam generation"), "prompt": EXAM_GENERATION.prompt_id,
                        "correction": EXAM_CORRECTION.prompt_id, "task_domain": self.task_domain, **asking.settings()}
            # checks the output's name, and the settings of kept answers
            answers = Journal(self.output, settings, name=ANSWERS)
            run = ask_all(self.backend, answers, [Task(d.docid, d.text) for d in documents if d.text.strip()],
                          read_exam_answer, corrective, asking, retry_failed=self.retry_failed,
                          chunk_size=self.chunk_size, progress=self.progress,
                          unit="doc", desc="exam", now=now,
                          render=lambda generator, text: generator.fit(EXAM_GENERATION, context=text,
                                                                       task_domain=self.task_domain))
            with opened(self.embedding) as embedder:
                result = _build_exam(documents, run, self.temperature, embedder, seed=self.seed,
                                     query_prefix=self.query_prefix, drop_fraction=self.drop_fraction,
                                     thresholds=self.thresholds)
            written = (([Path(self.output)] if len(result.bank) else [])
                       + ([Path(self.report)] if self.report is not None else []))
            result = replace(result, written=tuple(written))
            if len(result.bank):
                write_question_bank(result.bank, self.output)
            if self.report is not None:
                with atomic_write(self.report) as fh:
                    fh.write(json.dumps(result.as_dict(), indent=2, ensure_ascii=False) + "\n")
            return result


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


def _build_exam(documents: Sequence[Passage], run: Run, temperature: float, embedder: Backend | None, *,
                seed: int, query_prefix: str, drop_fraction: float, thresholds: Thresholds) -> ExamResult:
    """The exam from every document's outcome in ``run`` (an empty document has none): filters,
    shuffle, baselines, the bank."""
    outcomes = run.outcomes
    texts = {d.docid: d.text for d in documents}
    settled = [(d.docid, outcomes.get(d.docid)) for d in documents]
    candidates = [Candidate(docid, ExamQuestion.from_dict(o.value)) for docid, o in settled if o is not None and o.ok]
    failures = pd.DataFrame(
        [(docid, EMPTY_DOCUMENT, "") if o is None else (docid, o.problem, o.answers[-1])
         for docid, o in settled if o is None or not o.ok],
        columns=["document_id", "problem", "answer"])
    kept, steps = filter_exam(candidates, texts, embed=embedder.embed if embedder is not None else None,
                              drop_fraction=drop_fraction, thresholds=thresholds)
    generated = [c.question for c in kept]
    shuffled = shuffle_choices(generated, seed)
    questions = [_bank_question(c.document_id, q, outcomes[c.document_id], temperature, query_prefix)
                 for c, q in zip(kept, shuffled)]
    bank = QuestionBank(questions, query_texts={q.query_id: q.text for q in questions})
    by_document = {c.document_id: c.question for c in candidates}
    asked_again = sum(o.attempts > 1 for o in outcomes.values())
    return ExamResult(bank, len(documents), run.asked, len(outcomes) - run.asked, asked_again, failures,
                      _filter_table(len(documents), len(failures), steps), _dropped_table(steps, by_document),
                      _baselines(generated, shuffled), _keys(generated, shuffled), run.usage)


def _bank_question(document_id: str, question: ExamQuestion, outcome: Outcome, temperature: float,
                   query_prefix: str) -> Question:
    query_id = query_prefix + document_id
    info = {"document_id": document_id, "bloom": sorted(bloom_levels(question.question)),
            "question_word": question_word(question.question), **outcome.provenance(EXAM_GENERATION, temperature)}
    return Question(query_id, question_id_for(query_id, question.question), question.question,
                    choices=question.choices, correct_choice=question.key, source=f"generated:{outcome.model}",
                    info=info)


def _filter_table(documents: int, failures: int, steps: Sequence[FilterStep]) -> pd.DataFrame:
    rows: list[tuple[str, str | None, float | None, str | None, int, int, int]] = [
        ("unparseable", None, None, None, documents, failures, documents - failures)]
    rows += [(s.name, s.measure, s.threshold, s.chosen, s.reaching, len(s.dropped), s.kept) for s in steps]
    return pd.DataFrame(rows, columns=["filter", "measure", "threshold", "chosen", "questions", "dropped", "kept"])


def _dropped_table(steps: Sequence[FilterStep], questions: Mapping[str, ExamQuestion]) -> pd.DataFrame:
    rows = [(d, s.name, s.measure, json_value(score), questions[d].question, list(questions[d].choices),
             LETTERS[questions[d].key]) for s in steps for d, score in s.dropped.items()]
    return pd.DataFrame(rows, columns=["document_id", "filter", "measure", "evidence", "question", "choices", "key"])


def _baselines(generated: Sequence[ExamQuestion], shuffled: Sequence[ExamQuestion]) -> pd.DataFrame:
    letter, fixed = fixed_answer_baseline(shuffled)
    before, fixed_before = fixed_answer_baseline(generated)
    return pd.DataFrame([("fixed answer", letter, fixed),
                         ("longest answer", "longest", longest_answer_baseline(shuffled)),
                         ("fixed answer before shuffling", before, fixed_before)],
                        columns=["baseline", "answer", "accuracy"])


def _keys(generated: Sequence[ExamQuestion], shuffled: Sequence[ExamQuestion]) -> pd.DataFrame:
    before, after = key_distribution(generated), key_distribution(shuffled)
    return pd.DataFrame([(letter, before[letter], after[letter]) for letter in LETTERS],
                        columns=["letter", "generated", "shuffled"])

