"""The grading cascade (``exampp grade --cascade embedding:RECALL``): a cheap first stage rules
out pairs the LLM need not grade.

Before the LLM grades a chunk of pairs, the first stage scores each pair. Pairs scoring below
the threshold are not sent: they get grade 0, stored marked as cascaded with the stage's id
and their score (:meth:`exampp.stores.grade_store.GradeStore.put_cascaded`). A later run with the same
stage and a threshold above that score counts them as graded; a run without the cascade, or
with a lower threshold, grades them with the LLM, which replaces the 0.

The first stage is a logistic model of "the LLM grades this pair >= τ". Its score is the
log-odds, from five features of all-MiniLM-L6-v2 sentence embeddings (any backend that can
``embed``; by default the offline ``embedding`` backend):
question–passage cosine, passage–query cosine, question–query cosine, the passage's best
question–passage cosine over its query's exam questions, and log(1 + the passage's words).
``benchmarks/cascade.py`` chose it on DL19. It was compared with question–passage cosine alone,
passage–query cosine alone and the larger of the two, against FLAN-T5-large's self-ratings. At
equal recall of the pairs graded >= τ it saved the most LLM calls at recall 0.9 and 0.95; at
0.99, every stage saved under 3% for τ = 3 and 4. Its weights (one model per τ = 3,
4, 5) and the thresholds for each target recall were fitted on 20 DL19 queries (see
:data:`STAGES`; the README gives the figures on the other 23).
"""
from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from exampp.errors import ExamppError
from exampp.grading.base import Pair
from exampp.llm.backend import Backend, BackendSpec, Capability, opened
from exampp.stores.grade_store import CascadeMark

STAGE_NAME = "embedding"  # the first stage --cascade names
BACKEND = "embedding"  # the backend that embeds for it unless another is given
# In the id its marks carry: bump it when FEATURES or STAGES change (tests/test_cascade.py pins them).
STAGE_VERSION = "embedding-logistic@v1"
FEATURES = ("question-passage cosine", "passage-query cosine", "question-query cosine",
            "best question-passage cosine of the passage", "log(1 + passage words)")


class CascadeError(ExamppError, ValueError):
    """A cascade that cannot be set up: a bad --cascade value, no calibration for the τ, a query without text."""


def recall_threshold(scores: Sequence[float] | np.ndarray, positive: Sequence[bool] | np.ndarray,
                     recall: float) -> float:
    """The highest cut ``t`` such that ``score >= t`` keeps at least ``recall`` of the positive pairs.

    With the positives' scores sorted from the top, s_1 >= s_2 >= ..., the k-th must be kept,
    k = ceil(recall x positives); the cut lies halfway between s_k and the next lower score of
    any pair (s_k itself when none is lower), so that float noise in a score equal to s_k does
    not flip it.

    :param scores: Each pair's first-stage score.
    :param positive: Whether each pair is positive (graded >= τ by the LLM).
    :param recall: The share of positives to keep, in (0, 1].
    :raises ValueError: No positives, or a recall outside (0, 1].
    """
    scores = np.asarray(scores, dtype=float)
    positive = np.asarray(positive, dtype=bool)
    if scores.shape != positive.shape or scores.ndim != 1:
        raise ValueError(f"need scores and labels of the same length, got {scores.shape} and {positive.shape}")
    if not 0 < recall <= 1:
        raise ValueError(f"recall must lie in (0, 1], got {recall}")
    if np.isnan(scores).any():
        raise ValueError("scores contain NaN")
    kept = np.sort(scores[positive])[::-1]
    if kept.size == 0:
        raise ValueError("need at least one positive pair")
    k = math.ceil(round(recall * kept.size, 9))  # round: 0.07 * 100 is 7.000000000000001
    cut = float(kept[k - 1])
    lower = scores[scores < cut]
    return (cut + float(lower.max())) / 2 if lower.size else cut


@dataclass(frozen=True)
class Logistic:
    """A logistic model: ``score = features @ weights + bias``, the log-odds of a positive."""

    weights: tuple[float, ...]
    bias: float

    def score(self, features: np.ndarray) -> np.ndarray:
        return np.asarray(features, dtype=float) @ np.asarray(self.weights, dtype=float) + self.bias


def fit_logistic(features: np.ndarray, labels: Sequence[bool] | np.ndarray, l2: float = 1e-4) -> Logistic:
    """Logistic regression by L-BFGS; the weights returned apply to the raw features.

    :param features: One row per example.
    :param labels: Each example's class.
    :param l2: The mean log-loss is minimised plus ``l2``/2 x the squared weights of the
        standardised features (the bias is not penalised).
    """
    from scipy import optimize  # only the study and the tests fit: grading need not load it

    x = np.asarray(features, dtype=float)
    y = np.asarray(labels, dtype=float)
    if x.ndim != 2 or y.shape != (x.shape[0],):
        raise ValueError(f"need an (n, d) feature matrix and n labels, got {x.shape} and {y.shape}")
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    z = (x - mean) / scale
    n, d = z.shape

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w, b = theta[:d], theta[d]
        margin = z @ w + b
        # log(1 + e^m) - y m, computed stably; its derivative in m is sigmoid(m) - y.
        value = float(np.mean(np.logaddexp(0.0, margin) - y * margin)) + l2 / 2 * float(w @ w)
        residual = (0.5 * (1 + np.tanh(margin / 2)) - y) / n
        return value, np.r_[z.T @ residual + l2 * w, residual.sum()]

    fitted = optimize.minimize(loss, np.zeros(d + 1), jac=True, method="L-BFGS-B",
                               options={"maxiter": 10_000, "gtol": 1e-10, "ftol": 1e-15})
    w, b = fitted.x[:d], fitted.x[d]
    return Logistic(tuple(float(v) for v in w / scale), float(b - np.sum(w * mean / scale)))


def features(backend: Backend, pairs: Sequence[Pair], questions: Mapping[str, Sequence[str]],
             queries: Mapping[str, str], known: dict[str, np.ndarray] | None = None) -> np.ndarray:
    """The first stage's :data:`FEATURES` of each pair, one row each. Every distinct text is embedded
    once, in one call.

    :param backend: The embedder.
    :param pairs: The pairs.
    :param questions: The texts of each query's exam questions (for the passage's best cosine).
    :param queries: Each query's text.
    :param known: Keeps the embeddings of question and query texts between calls (a chunk's passages
        are new, its questions mostly not).
    """
    if not pairs:
        return np.zeros((0, len(FEATURES)))
    known = {} if known is None else known
    query_ids = list(dict.fromkeys(p.query_id for p in pairs))
    fixed = [*(p.question.text for p in pairs), *(t for q in query_ids for t in (*questions[q], queries[q]))]
    new = list(dict.fromkeys([*(p.passage for p in pairs), *(t for t in fixed if t not in known)]))
    embedded = dict(zip(new, np.asarray(backend.embed(new), dtype=np.float64)))
    known.update((t, embedded[t]) for t in fixed if t in embedded)

    def rows(texts: Sequence[str]) -> np.ndarray:
        return np.stack([embedded[t] if t in embedded else known[t] for t in texts])

    passage = rows([p.passage for p in pairs])
    question = rows([p.question.text for p in pairs])
    query = rows([queries[p.query_id] for p in pairs])
    best = np.empty(len(pairs))
    of_query = np.array([p.query_id for p in pairs])
    for q in query_ids:
        at = np.flatnonzero(of_query == q)
        best[at] = (passage[at] @ rows(questions[q]).T).max(axis=1)
    words = np.array([len(p.passage.split()) for p in pairs], dtype=float)
    return np.column_stack([np.einsum("ij,ij->i", passage, question), np.einsum("ij,ij->i", passage, query),
                            np.einsum("ij,ij->i", question, query), best, np.log1p(words)])


@dataclass(frozen=True)
class FirstStage:
    """The first stage for one τ: its model and, per target recall, the threshold calibrated on DL19."""

    tau: int
    model: Logistic
    thresholds: Mapping[float, float] = field(default_factory=dict)  # target recall -> threshold

    @property
    def stage_id(self) -> str:
        return f"{STAGE_VERSION}:tau={self.tau}"


# Fitted on FLAN-T5-large self-ratings of the 39,400 DL19 pairs of 20 queries (seed 19; of 92,600 in all) by
#   python benchmarks/cascade.py
# per τ: weights of FEATURES and bias; per target recall of the pairs graded >= τ, the threshold
# (recall_threshold on those pairs, rounded down to 4 decimals, so the recall there is reached).
STAGES: dict[int, FirstStage] = {
    3: FirstStage(3, Logistic(weights=(5.359363, -0.74636, 1.062954, 0.91973, 0.835959), bias=-8.14285),
                  {0.8: -1.7013, 0.9: -2.1421, 0.95: -2.5633, 0.98: -3.0793, 0.99: -3.3613}),
    4: FirstStage(4, Logistic(weights=(5.663192, -1.174821, 1.052767, 1.090358, 0.856442), bias=-8.452242),
                  {0.8: -1.8661, 0.9: -2.3233, 0.95: -2.743, 0.98: -3.2206, 0.99: -3.5446}),
    5: FirstStage(5, Logistic(weights=(5.123862, -0.64798, 3.899414, 0.331297, 0.088969), bias=-9.692977),
                  {0.8: -4.4225, 0.9: -4.9058, 0.95: -5.1822, 0.98: -5.5852, 0.99: -5.8554}),
}


@dataclass(frozen=True)
class CascadeSpec:
    """What ``--cascade embedding:RECALL`` or ``--cascade-threshold`` asks for: a target recall or a
    threshold on the first stage's score (one of the two).

    :param recall: The target recall of the pairs the LLM grades >= τ; its threshold comes from
        :data:`STAGES`.

    :param threshold: A threshold on the first stage's score, given directly.
    """


    recall: float | None = None
    threshold: float | None = None

    @classmethod
    def parse(cls, text: str | None, threshold: float | None = None) -> "CascadeSpec | None":
        """``embedding:RECALL``, or ``embedding`` with ``threshold``; None when neither is given."""
        if text is None:
            return None if threshold is None else cls(threshold=float(threshold))
        name, sep, value = text.partition(":")
        if name.strip() != STAGE_NAME:
            raise CascadeError(f"--cascade {text!r}: the first stage must be {STAGE_NAME!r} "
                               f"({STAGE_NAME}:RECALL, e.g. {STAGE_NAME}:0.95)")
        if not sep:
            if threshold is None:
                raise CascadeError(f"--cascade {text!r} needs a target recall ({STAGE_NAME}:RECALL) "
                                   "or --cascade-threshold")
            return cls(threshold=float(threshold))
        if threshold is not None:
            raise CascadeError(f"--cascade {text!r}: give a target recall or --cascade-threshold, not both")
        try:
            recall = float(value)
        except ValueError:
            raise CascadeError(f"--cascade {text!r}: {value!r} is not a recall (a number such as 0.95)") from None
        return cls(recall=recall)

    def stage(self, tau: float) -> FirstStage:
        """The first stage calibrated for ``tau``; CascadeError when there is none."""
        stage = STAGES.get(int(tau)) if float(tau).is_integer() else None
        if stage is None:
            raise CascadeError(f"the cascade's first stage is calibrated for τ = {', '.join(map(str, STAGES))} "
                               f"(0-5 self-ratings); this job counts a question answered at grade >= {tau:g} "
                               "(set --tau 3, 4 or 5)")
        return stage

    def cut(self, stage: FirstStage) -> float:
        """The threshold: the one given, else the calibrated one for the target recall."""
        if self.threshold is not None:
            return self.threshold
        assert self.recall is not None  # a spec names a recall or a threshold (parse)
        if self.recall not in stage.thresholds:
            known = ", ".join(f"{r:g}" for r in stage.thresholds)
            raise CascadeError(f"--cascade {STAGE_NAME}:{self.recall:g}: thresholds are calibrated for recall "
                               f"{known}; give one of them, or --cascade-threshold")
        return stage.thresholds[self.recall]


@dataclass(frozen=True)
class Cascade:
    """A first stage ready to score pairs: its backend, threshold and the exam's texts."""

    backend: Backend
    stage: FirstStage
    threshold: float
    questions: Mapping[str, Sequence[str]]  # query id -> its exam questions' texts
    queries: Mapping[str, str]  # query id -> its text
    known: dict[str, np.ndarray] = field(default_factory=dict, compare=False, repr=False)  # question, query vectors

    @property
    def mark(self) -> CascadeMark:
        """What the store records with a cascaded pair, and which cascaded pairs this run accepts."""
        return CascadeMark(f"{self.stage.stage_id}|{self.backend.name}", self.threshold)

    def scores(self, pairs: Sequence[Pair]) -> np.ndarray:
        """The first stage's score of each pair: a pair is sent to the LLM when it reaches the threshold."""
        return self.stage.model.score(features(self.backend, pairs, self.questions, self.queries, self.known))


@contextmanager
def open_cascade(spec: CascadeSpec | None, backend: Backend | BackendSpec | None,
                 questions: Mapping[str, Sequence[str]], queries: Mapping[str, str],
                 tau: float) -> Iterator[Cascade | None]:
    """The cascade a spec asks for, for a ``with`` block.

    :param spec: The cascade asked for (None: no cascade).
    :param backend: The embedder (a spec is opened here, after every check; None: the packaged
        all-MiniLM-L6-v2).
    :param questions: The exam: query -> its questions' texts.
    :param queries: Each query's text.
    :param tau: The job's τ.
    :raises CascadeError: The stage has no calibration for ``tau``, or a query has no text.
    """

    if spec is None:
        yield None
        return
    stage = spec.stage(tau)
    threshold = spec.cut(stage)
    untitled = sorted(q for q in questions if not queries.get(q))
    if untitled:
        raise CascadeError(f"the cascade needs each query's text; {len(untitled)} queries have none "
                           f"(e.g. {untitled[0]!r}): give --topics, or a bank with query texts")
    with opened(backend if backend is not None else BackendSpec(BACKEND)) as embedder:
        assert embedder is not None  # opened() gives None for None only
        embedder.require(frozenset({Capability.EMBED}), "the cascade's first stage")
        yield Cascade(embedder, stage, threshold, {q: list(t) for q, t in questions.items()},
                      {q: queries[q] for q in questions})
