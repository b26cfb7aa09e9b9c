"""Multiple-choice exams from a document corpus (Guinet et al., 2024, appendix A), as pure functions.

One question per document, asked with :data:`EXAM_GENERATION` (DESIGN.md §2, verbatim). What comes
back is read by :func:`parse_exam_answer`; an answer it cannot read is asked again in the same
conversation with :func:`corrective`, which names the problem (:mod:`exampp.generation.asking`).
The questions read then go through, in order:

1. the self-contained filter (:func:`self_containment_problem`): a question that speaks of "the
   documentation / document / paper / article / research / study / text / passage / excerpt" (after
   the, this, that, these or those, perhaps with given, provided, above...; a quoted title after it
   is part of the match) points at a text the examinee does not see. A cost of the rule: a question
   about, say, "the text shown on the display" is dropped too.
2. the distractor filters (:func:`filter_exam`), each with two similarities: n-gram Jaccard
   (:func:`ngram_jaccard`: the best word Jaccard between a choice and an n-word window of the
   other text, n = the question's mean choice length in words) and the cosine of sentence
   embeddings (the embedding model reads only the start of a long document):

   - *closer to the document*: ``max over distractors of sim(distractor, document) - sim(key,
     document)`` above a margin: a distractor that the document supports better than the key makes
     the key doubtful. The margin is never below 0 (a distractor must be closer than the key);
   - *too close to the key*: ``max over distractors of sim(distractor, key)`` above a threshold: a
     distractor that restates the key makes two answers right.

   Each threshold is given, or chosen so that the filter drops about ``drop_fraction`` (5%) of the
   questions reaching it (:func:`quantile_threshold`).

Then the choices of the questions kept are shuffled so that the key is uniformly placed
(:func:`shuffle_choices`: every letter is the key of the same number of questions, give or take
one), and the exam's blind baselines are measured: always the same letter
(:func:`fixed_answer_baseline`, ≈25% after shuffling) and always the longest choice
(:func:`longest_answer_baseline`).
"""
from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from exampp.generation.answer_parsing import plain_text
from exampp.generation.asking import Unusable
from exampp.llm.prompt import Prompt

LETTERS = "ABCD"

# DESIGN.md §2 verbatim (its line breaks too); {{...}} are the literal braces of the syntax shown to
# the model. The whole text, "Human:" and "Assistant:" included, goes as one user turn: a chat model
# reads the turn markers as part of the instruction, and a raw language model needs "Assistant:" as
# its cue to answer.
EXAM_TEMPLATE = (
    "Human: Here is some documentation from {task_domain}: {documentation}. From this, generate\n"
    "a difficult multi-form question for an exam. It should have 4 candidates, 1 correct answer\n"
    "and explanations.\n"
    "\n"
    "Syntax should be:\n"
    "Question: {{question}}\n"
    "A) {{candidate A}}\n"
    "B) {{candidate B}}\n"
    "C) {{candidate C}}\n"
    "D) {{candidate D}}\n"
    "Correct Answer: {{correct answer}}\n"
    "\n"
    "Assistant:"
)
# Backends cut only a prompt's {context} to fit a model's input: the documentation is that context.
EXAM_GENERATION = Prompt("exam-generation", "v1", EXAM_TEMPLATE.replace("{documentation}", "{context}"))

EXAM_CORRECTION = Prompt("exam-correction", "v1", (
    "Your answer could not be read: {problem}. Write the question again in exactly this syntax, "
    "with nothing before it:\n"
    "Question: <the question>\n"
    "A) <candidate A>\n"
    "B) <candidate B>\n"
    "C) <candidate C>\n"
    "D) <candidate D>\n"
    "Correct Answer: <the letter of the correct candidate>"
))


@dataclass(frozen=True)
class ExamQuestion:
    """A multiple-choice question: its text, its choices in order, and the index of the key."""

    question: str
    choices: tuple[str, ...]
    key: int

    def as_dict(self) -> dict:
        return {"question": self.question, "choices": list(self.choices), "key": self.key}

    @classmethod
    def from_dict(cls, record: Mapping) -> "ExamQuestion":
        return cls(record["question"], tuple(record["choices"]), record["key"])


class Unparseable(Unusable):
    """An answer that holds no question in the prompt's syntax; the message says what is wrong."""


# --- reading an answer ----------------------------------------------------------------------------

_EMPHASIS = re.compile(r"\*\*|__")
_QUESTION = re.compile(r"^(?:question|q)\s*\d*\s*[:.)]\s*(.*)$", re.IGNORECASE)
# "A) x", "A. x", "A: x", "(A) x", "a) x", "(a) x", after an optional bullet; E to H are read so
# that an answer with more than four choices is refused
_CHOICE = re.compile(r"^(?:[-*•]\s*)?(?:\(([A-Ha-h])\)|([A-H])\s*[).:]|([a-h])\))\s*(.*)$")
_KEY = re.compile(r"^(?:the\s+)?(correct\s+)?answer\b(\s+is\b)?\s*([:\-–]?)\s*(.*)$", re.IGNORECASE)
_KEY_LETTER = re.compile(r"^(?:(?:option|choice|answer)\s+)?(?:\(([A-Da-d])\)|([A-Da-d])\)|([A-D])(?:[.:]|$))\s*(.*)$",
                         re.IGNORECASE)


def _clean(line: str) -> str:
    """A line without markdown emphasis and heading marks."""
    return _EMPHASIS.sub("", line).strip().lstrip("#").strip()


def _normal(text: str) -> str:
    """For comparing a key's text with the choices: lower case, single spaces, no quotes or end punctuation."""
    return " ".join(text.lower().split()).strip("\"'`“”‘’ ").rstrip(".!;,").strip()


def _key_line(line: str) -> str | None:
    """What follows "Correct Answer:" (or "Answer:", "The correct answer is") on a line, else None."""
    match = _KEY.match(line)
    if match is None:
        return None
    correct, is_, separator, rest = match.groups()
    if not (correct or is_ or separator):  # "Answer the following..." is no key line
        return None
    return rest.strip()


def _resolve_key(text: str, choices: Sequence[str]) -> int:
    """The index of the choice a key names: by its text, by its letter ("B", "B)", "(B)", "B.",
    "Option B", a letter with the choice's text after it), by a choice's text with an explanation after it,
    or by words found in one choice only."""
    normal = [_normal(c) for c in choices]
    key = _normal(text)
    if key in normal:
        return normal.index(key)
    match = _KEY_LETTER.match(text.strip())
    if match is not None:
        letter = next(g for g in match.groups()[:3] if g).upper()
        index = LETTERS.index(letter)
        rest = _normal(match.group(4))
        if rest and rest in normal and normal.index(rest) != index:
            raise Unparseable(f"the correct answer names {letter} but gives the text of {LETTERS[normal.index(rest)]}")
        return index
    bare = re.match(r"^([A-D])\s+(.*)$", text.strip())  # "B The text of B"
    if bare and _normal(bare.group(2)) == normal[LETTERS.index(bare.group(1))]:
        return LETTERS.index(bare.group(1))
    starts = [i for i, c in enumerate(normal) if c and re.match(re.escape(c) + r"\b", key)]
    if starts:  # the choice's text, then an explanation
        return max(starts, key=lambda i: len(normal[i]))
    within = [i for i, c in enumerate(normal) if key and re.search(r"\b" + re.escape(key) + r"\b", c)]
    if len(within) == 1:  # part of one choice's text ("Device Health page" for "On the Device Health page")
        return within[0]
    raise Unparseable(f"the correct answer {text.strip()[:60]!r} is neither a letter A-D nor the text of a choice")


def parse_exam_answer(text: str) -> ExamQuestion:
    """The question in a generating model's answer, in the prompt's syntax or a usual variant of it.

    A line "Question: ..." (lines after it up to the first choice continue the question); four
    choice lines A to D in order ("A) x", "A. x", "(A) x", "A: x", "a) x", bulleted or in bold); a
    line "Correct Answer: ..." (or "Answer:", "The correct answer is") giving the key as a letter
    or as a choice's text, on that line or the next. Anything after the key line (explanations)
    is ignored, and so is a line between the choices that is none of these. The question and the
    choices are plain text (:func:`~exampp.generation.answer_parsing.plain_text`: no control characters). Raises
    :class:`Unparseable` saying what is missing or wrong.
    """
    lines = [_clean(line) for line in text.splitlines()]
    start = next((i for i, line in enumerate(lines) if _QUESTION.match(line)), None)
    if start is None:
        raise Unparseable("no 'Question:' line" if text.strip() else "the answer is empty")
    first = _QUESTION.match(lines[start])
    assert first is not None  # the line was found by this match
    question = [first.group(1)]
    choices: list[tuple[str, str]] = []
    key: str | None = None
    at = start + 1
    while at < len(lines):
        line = lines[at]
        at += 1
        rest = _key_line(line)
        if rest is not None and choices:
            key = rest or next((line for line in lines[at:] if line), "")
            break
        choice = _CHOICE.match(line)
        if choice is not None:
            letter = next(g for g in choice.groups()[:3] if g).upper()
            choices.append((letter, plain_text(choice.group(4))))
        elif not choices and line:
            question.append(line)
    question_text = plain_text(" ".join(question))
    if not question_text:
        raise Unparseable("the question is empty")
    letters = "".join(letter for letter, _ in choices)
    if letters != LETTERS:
        raise Unparseable(f"expected four choices A) to D), found {', '.join(letters) or 'none'}")
    texts = tuple(choice for _, choice in choices)
    for i, choice_text in enumerate(texts):
        if not choice_text:
            raise Unparseable(f"choice {LETTERS[i]} is empty")
        for j in range(i):
            if _normal(texts[j]) == _normal(choice_text):
                raise Unparseable(f"choices {LETTERS[j]} and {LETTERS[i]} are the same")
    if key is None:
        raise Unparseable("no 'Correct Answer:' line after the choices")
    if not key:
        raise Unparseable("the correct answer is empty")
    return ExamQuestion(question_text, texts, _resolve_key(key, texts))


def read_exam_answer(answer: str) -> dict:
    """The question of ``answer`` as JSON (:meth:`ExamQuestion.as_dict`); :class:`Unparseable` saying why not."""
    return parse_exam_answer(answer).as_dict()


def corrective(problem: str) -> str:
    """The user turn that asks again after an unreadable answer, naming its ``problem``."""
    return EXAM_CORRECTION.render(problem=problem)


# --- the self-contained filter --------------------------------------------------------------------

_NOT_SELF_CONTAINED = re.compile(
    r"\b(?:the|this|that|these|those)\s+"
    r"(?:(?:above|given|provided|following|preceding|same|original|aforementioned|mentioned|attached|cited)\s+)?"
    r"(?:documentation|documents?|papers?|articles?|research|study|studies|texts?|passages?|excerpts?)\b"
    r"(?:\s*(?:\"[^\"\n]{1,200}\"|“[^”\n]{1,200}”|'[^'\n]{1,200}'|‘[^’\n]{1,200}’))?",
    re.IGNORECASE)


def self_containment_problem(text: str) -> str | None:
    """The words of ``text`` that refer to a text the examinee does not see ("the documentation",
    'the article "Pairing"'...), or None when the question stands on its own."""
    match = _NOT_SELF_CONTAINED.search(text)
    return match.group(0) if match else None


# --- similarities -----------------------------------------------------------------------------------

_TOKEN = re.compile(r"\w+")


def word_tokens(text: str) -> list[str]:
    """Lower-cased word tokens (runs of letters, digits and underscores)."""
    return _TOKEN.findall(text.lower())


def ngram_size(choices: Sequence[str]) -> int:
    """n for a question's Jaccard similarities: the mean number of word tokens of its choices,
    rounded (halves up), at least 1."""
    return max(1, math.floor(sum(len(word_tokens(c)) for c in choices) / len(choices) + 0.5))


def _multiset_jaccard(a: Counter, b: Counter) -> float:
    union = sum((a | b).values())
    return sum((a & b).values()) / union if union else 0.0


def _windows(reference: str, n: int) -> list[Counter]:
    """The words of each n-word window of ``reference`` (one window when it is shorter than n)."""
    tokens = word_tokens(reference)
    return [Counter(tokens[i:i + n]) for i in range(max(len(tokens) - n + 1, 1))]


def _best_jaccard(words: Counter, windows: Sequence[Counter]) -> float:
    return max(_multiset_jaccard(words, window) for window in windows)


def ngram_jaccard(text: str, reference: str, n: int) -> float:
    """How closely ``reference`` contains ``text``: the highest Jaccard similarity between the words
    of ``text`` and those of an n-word window (n-gram) of ``reference``, words counted with their
    multiplicity (|A ∩ B| / |A ∪ B| of multisets). A reference shorter than n is one window."""
    return _best_jaccard(Counter(word_tokens(text)), _windows(reference, n))


def distractor_scores(to_document: Sequence[float], to_key: Sequence[float], key: int) -> tuple[float, float]:
    """A question's two filter scores from each choice's similarity to the document and to the key:
    (how much closer to the document the closest distractor is than the key, the closest
    distractor's similarity to the key)."""
    others = [i for i in range(len(to_document)) if i != key]
    return (max(to_document[i] for i in others) - to_document[key], max(to_key[i] for i in others))


def jaccard_scores(question: ExamQuestion, document: str) -> tuple[float, float]:
    """:func:`distractor_scores` with n-gram Jaccard, n = :func:`ngram_size` of the question's choices."""
    n = ngram_size(question.choices)
    words = [Counter(word_tokens(c)) for c in question.choices]
    # each reference's windows made once for the four choices
    document_windows, key_windows = _windows(document, n), _windows(question.choices[question.key], n)
    return distractor_scores([_best_jaccard(w, document_windows) for w in words],
                             [_best_jaccard(w, key_windows) for w in words], question.key)


def cosine_scores(question: ExamQuestion, document: np.ndarray, choices: np.ndarray) -> tuple[float, float]:
    """:func:`distractor_scores` with the cosine of unit-length embeddings (``choices``: one row per choice)."""
    to_document = choices @ document
    to_key = choices @ choices[question.key]
    return distractor_scores(to_document.tolist(), to_key.tolist(), question.key)


# --- the filters --------------------------------------------------------------------------------------


def quantile_threshold(scores: Sequence[float], fraction: float) -> float:
    """The threshold above which (strictly) ``fraction`` of ``scores`` lie: the (k+1)-th highest
    score, k = ``fraction`` × n rounded (halves up). Scores tied with it are kept, so ties can make
    fewer go; k = 0 gives the highest score (nothing goes). NaN for no scores."""
    if not 0 <= fraction < 1:
        raise ValueError(f"the fraction to drop must be in [0, 1), not {fraction}")
    if not scores:
        return math.nan
    ranked = sorted(scores, reverse=True)
    k = min(math.floor(fraction * len(ranked) + 0.5), len(ranked) - 1)
    return float(ranked[k])


@dataclass(frozen=True)
class Candidate:
    """A question read from the answer for one document."""

    document_id: str
    question: ExamQuestion


@dataclass(frozen=True)
class FilterStep:
    """What one filter did: the questions that reached it, the threshold (None for the
    self-contained filter) and how it was set, and per question dropped its score (or the words
    that make it not self-contained)."""

    name: str
    measure: str | None
    reaching: int
    threshold: float | None
    chosen: str | None  # "fixed"; "drop 5%" for a quantile ("drop 5%, raised to 0" where the floor applied)
    dropped: Mapping[str, float | str]  # document id -> score (or the offending words)

    @property
    def kept(self) -> int:
        return self.reaching - len(self.dropped)


@dataclass(frozen=True)
class Thresholds:
    """Fixed thresholds of the distractor filters; None: chosen to drop ``drop_fraction``."""

    jaccard_margin: float | None = None  # closer to the document, Jaccard
    cosine_margin: float | None = None  # closer to the document, cosine
    jaccard_key: float | None = None  # too close to the key, Jaccard
    cosine_key: float | None = None  # too close to the key, cosine


CLOSER_TO_DOCUMENT = "distractor closer to the document"
CLOSE_TO_KEY = "distractor too close to the key"

Embed = Callable[[Sequence[str]], np.ndarray]
"""Unit-length embeddings of texts, one row each (a backend's ``embed``)."""


def _score_filter(candidates: list[Candidate], scores: Mapping[str, float], name: str, measure: str,
                  fixed: float | None, fraction: float, floor: float | None) -> tuple[list[Candidate], FilterStep]:
    values = [scores[c.document_id] for c in candidates]
    if fixed is not None:
        threshold, chosen = fixed, "fixed"
    else:
        threshold, chosen = quantile_threshold(values, fraction), f"drop {fraction * 100:g}%"
        if floor is not None and threshold < floor:
            threshold, chosen = floor, f"{chosen}, raised to {floor:g}"
    dropped = {c.document_id: v for c, v in zip(candidates, values) if v > threshold}
    kept = [c for c in candidates if c.document_id not in dropped]
    return kept, FilterStep(name, measure, len(candidates), threshold, chosen, dropped)


def filter_exam(candidates: Sequence[Candidate], documents: Mapping[str, str], *, embed: Embed | None = None,
                drop_fraction: float = 0.05, thresholds: Thresholds = Thresholds()
                ) -> tuple[list[Candidate], list[FilterStep]]:
    """The candidates that pass the self-contained filter, then the closer-to-the-document filters
    (Jaccard, then cosine), then the too-close-to-the-key filters (Jaccard, then cosine); the cosine
    filters only with ``embed``. Returns the kept candidates (in order) and one step per filter."""
    steps = []
    problems = {c.document_id: p for c in candidates if (p := self_containment_problem(c.question.question))}
    steps.append(FilterStep("not self-contained", None, len(candidates), None, None, problems))
    kept = [c for c in candidates if c.document_id not in problems]
    scores = {"jaccard": {c.document_id: jaccard_scores(c.question, documents[c.document_id]) for c in kept}}
    if embed is not None:  # one call for the documents and all choices
        texts = [documents[c.document_id] for c in kept] + [choice for c in kept for choice in c.question.choices]
        vectors = np.asarray(embed(texts), dtype=np.float64) if kept else np.zeros((0, 0))
        at = len(kept)
        scores["cosine"] = {}
        for i, c in enumerate(kept):
            width = len(c.question.choices)
            scores["cosine"][c.document_id] = cosine_scores(c.question, vectors[i], vectors[at:at + width])
            at += width
    plan = ((CLOSER_TO_DOCUMENT, 0, 0.0, {"jaccard": thresholds.jaccard_margin, "cosine": thresholds.cosine_margin}),
            (CLOSE_TO_KEY, 1, None, {"jaccard": thresholds.jaccard_key, "cosine": thresholds.cosine_key}))
    for name, index, floor, fixed in plan:
        for measure, by_question in scores.items():
            by_document = {d: pair[index] for d, pair in by_question.items()}
            kept, step = _score_filter(kept, by_document, name, measure, fixed[measure], drop_fraction, floor)
            steps.append(step)
    return kept, steps


# --- shuffling and baselines ------------------------------------------------------------------------


def shuffle_choices(questions: Sequence[ExamQuestion], seed: int) -> list[ExamQuestion]:
    """The questions with their choices reordered so that the key is uniformly placed: each letter is
    the key of as many questions as the others, give or take one (the letters that get one more are
    drawn at random), dealt to the questions in a random order; the distractors fill the other
    places in a random order. So each question's key is at each letter with probability 1/4."""
    rng = np.random.default_rng(seed)
    out: list[ExamQuestion] = []
    if not questions:
        return out
    width = len(questions[0].choices)
    whole, rest = divmod(len(questions), width)  # the rest: a random few letters once more
    positions = rng.permutation(np.concatenate([np.tile(np.arange(width), whole),
                                                rng.choice(width, rest, replace=False)]))
    for question, position in zip(questions, positions):
        distractors = [c for i, c in enumerate(question.choices) if i != question.key]
        choices = [distractors[i] for i in rng.permutation(len(distractors))]
        choices.insert(int(position), question.choices[question.key])
        out.append(replace(question, choices=tuple(choices), key=int(position)))
    return out


def key_distribution(questions: Sequence[ExamQuestion]) -> dict[str, int]:
    """How many questions have their key at each letter."""
    counts = dict.fromkeys(LETTERS, 0)
    for question in questions:
        counts[LETTERS[question.key]] += 1
    return counts


def fixed_answer_baseline(questions: Sequence[ExamQuestion]) -> tuple[str, float]:
    """The best blind strategy "always answer the same letter": the letter (the first on a tie) and
    its accuracy (NaN for no questions)."""
    counts = key_distribution(questions)
    letter = max(counts, key=lambda k: counts[k])
    return letter, counts[letter] / len(questions) if questions else math.nan


def longest_answer_baseline(questions: Sequence[ExamQuestion]) -> float:
    """Accuracy of "always answer the longest choice" (in characters; the first of the longest on
    a tie); NaN for no questions."""
    if not questions:
        return math.nan
    hits = sum(max(range(len(q.choices)), key=lambda i: len(q.choices[i])) == q.key for q in questions)
    return hits / len(questions)
