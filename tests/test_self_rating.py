"""Self-rating: parsing rules, the token→grade map, and the fast path's equivalence with generation."""
from __future__ import annotations

import math

import pytest
import torch

from exampp.collection.questions import Question
from exampp.grading.base import Pair
from exampp.grading.method_prompts import SELF_RATING
from exampp.grading.methods.self_rating import GRADES, SelfRating, grade_probabilities
from exampp.grading.rating_parsing import (
    UNANSWERABLE,
    is_unanswerable,
    leading_grade,
    normalize_response,
    parse_self_rating,
)
from exampp.llm.backends.hf import HFBackend
from exampp.llm.batching import Batcher
from exampp.testing.tiny_models import steer


def self_rating_prompt(model: HFBackend, pair: Pair) -> str:
    return model.fit(SELF_RATING, context=pair.passage, question=pair.question.text)

# --- parsing -------------------------------------------------------------------------------


@pytest.mark.parametrize("text, grade", [
    ("5", 5), ("0", 0), ("  3 stars", 3), ("4.", 4), ("1: minimally relevant", 1),
    ("12", 1), ("2018", 2), ("6", 1), ("9 out of 10", 1), ("-5", 1), ("", 1), ("   ", 1),
    ("no", 0), ("No.", 0), ("NO", 0), ("Unanswerable", 0), ("no answer", 0), ("No-answer!", 0),
    ("Not enough information.", 0), ("unknown", 0), ("It is not possible to tell.", 0),
    ("it does not say", 0), ("No relevant information", 0), ("  no  ", 0),
    ("no idea", 1), ("yes", 1), ("The answer is 5", 1), ("not relevant", 1),
])
def test_parse_self_rating(text, grade):
    assert parse_self_rating(text) == grade


def test_every_unanswerable_expression_is_recognised_in_any_case_and_punctuation():
    for expression in UNANSWERABLE:
        assert is_unanswerable(expression)
        assert is_unanswerable(f" {expression.upper()}. ")
        assert not is_unanswerable(f"{expression} because of the context")
    assert normalize_response("  No,  Answer! ") == "no answer"


def test_leading_grade():
    assert [leading_grade(t) for t in ["5", " 0x", "\n3", "6", "a5", "", "٣"]] == [5, 0, 3, None, None, None, None]


# --- token → grade map, grade reading ---------------------------------------------------------


@pytest.mark.slow
def test_tokens_stand_for_the_grade_their_text_starts_with_on_the_t5_vocabulary(tiny_t5_dir):
    model = HFBackend.load(str(tiny_t5_dir))
    tokenizer = model.tokenizer
    by_piece = {piece: GRADES.classify(model.token_text(tokenizer.convert_tokens_to_ids(piece))) for piece in
                ["▁5", "5", "▁1", "0", "▁2018", "▁10", "▁", "▁6", "6", "▁no", "</s>", "<pad>", "<extra_id_0>"]}
    assert by_piece == {"▁5": 5, "5": 5, "▁1": 1, "0": 0, "▁2018": 2, "▁10": 1, "▁": None, "▁6": None,
                        "6": None, "▁no": None, "</s>": None, "<pad>": None, "<extra_id_0>": None}
    assert all(model.token_text(i) == "" for i in range(len(tokenizer), 32128))  # embedding rows without a token
    # Independent route: the SentencePiece pieces, "▁" stripped, special tokens excluded.
    special = set(tokenizer.all_special_ids)
    expected = [
        int(piece.lstrip("▁")[0]) if i not in special and piece.lstrip("▁")[:1] in set("012345") else None
        for i, piece in enumerate(tokenizer.convert_ids_to_tokens(list(range(len(tokenizer)))))
    ]
    assert [GRADES.classify(model.token_text(i)) for i in range(len(tokenizer))] == expected


def test_grade_probabilities_by_hand():
    e = math.e
    assert grade_probabilities([1.0, 0.0, 1.0, 0.0, -math.inf, math.log(e**3 + e**2)]) == pytest.approx(
        [m / (2 * e + 2 + e**3 + e**2) for m in (e, 1, e, 1, 0, e**3 + e**2)], abs=1e-12)


@pytest.mark.slow
def test_label_masses_come_from_the_twenty_most_likely_tokens(tiny_t5_dir):
    model = HFBackend.load(str(tiny_t5_dir))
    ids = lambda piece: model.tokenizer.convert_tokens_to_ids(piece)  # noqa: E731
    # 22 tokens with distinct logits, all others impossible: the two least likely fall outside the top 20.
    words = "of and to in is it that for on with as was at by from or are be this have".split()
    pieces = ["▁5", "▁the", "▁3", "▁one", "▁2018"] + [f"▁{w}" for w in words[:16]] + ["▁4"]
    assert len({ids(piece) for piece in pieces}) == 22 and model.tokenizer.unk_token_id not in map(ids, pieces)
    logits = torch.full((32128,), -math.inf)
    for rank, piece in enumerate(pieces):
        logits[ids(piece)] = -0.5 * rank
    seen = model._label_scores(torch.log_softmax(logits, dim=0), GRADES, None)
    p = torch.softmax(logits, dim=0)
    mass = [0.0, 0.0, float(p[ids("▁2018")]), float(p[ids("▁3")]), 0.0, float(p[ids("▁5")])]  # "▁4" is 22nd
    assert seen.top_label == 5
    assert [math.exp(v) for v in seen.logprobs] == pytest.approx(mass, rel=1e-6)


# --- fast path == greedy generation + parsing ---------------------------------------------------

SHORT = "Coral bleaching."
LONG = " ".join(f"Sentence {i} says that warm water stresses the coral polyps and their algae." for i in range(80))


def _pairs() -> list[Pair]:
    passages = [SHORT, LONG, "Reef knots join two ropes.", LONG[:900], "x", LONG[:300], "Bleach whitens laundry. " * 9]
    texts = ["Why do corals bleach?", "What joins two ropes?", "Is bleach safe with ammonia?"]
    pairs = []
    for i in range(15):  # 13 steered, 2 left to chance
        question = Question("Q1", f"Q1/{i}", f"{texts[i % 3]} (variant {i})")
        pairs.append(Pair("Q1", f"p{i}", passages[i % len(passages)], question))
    return pairs


def _ids(tokenizer, *pieces: str) -> list[int]:
    return [tokenizer.convert_tokens_to_ids(p) for p in pieces]


def _targets(tokenizer) -> list[tuple[list[int], int, bool]]:
    """(steered token ids, expected grade, read by the fast path?) for the first pairs."""
    eos = tokenizer.eos_token_id
    unanswerable = tokenizer("unanswerable", add_special_tokens=False)["input_ids"]
    return [
        ([*_ids(tokenizer, "▁5"), eos], 5, True),
        ([*_ids(tokenizer, "5"), eos], 5, True),  # bare digit piece
        ([*_ids(tokenizer, "▁3", "▁stars"), eos], 3, True),
        ([*_ids(tokenizer, "▁2018"), eos], 2, True),  # a multi-digit token: its leading digit
        ([*_ids(tokenizer, "0"), eos], 0, True),
        ([*_ids(tokenizer, "▁1"), eos], 1, True),
        ([*_ids(tokenizer, "▁4", "."), eos], 4, True),
        ([*_ids(tokenizer, "▁", "4"), eos], 4, False),  # "▁" then "4": generation reads 4, the first token is no digit
        ([*_ids(tokenizer, "▁no"), eos], 0, False),
        ([*unanswerable, eos], 0, False),
        ([*_ids(tokenizer, "▁The", "▁answer"), eos], 1, False),
        ([*_ids(tokenizer, "▁6"), eos], 1, False),
        ([eos], 1, False),  # empty output
    ]


@pytest.fixture(scope="module")
def steered_t5(tiny_t5_dir):
    model = HFBackend.load(str(tiny_t5_dir), batch_size=4)
    pairs = _pairs()
    targets = _targets(model.tokenizer)
    steer(model, [self_rating_prompt(model, p) for p in pairs[:len(targets)]], [t for t, _, _ in targets])
    return model, pairs, targets


def _judge(model: HFBackend, pairs, fast: bool, batch_size: int):
    model.batcher = Batcher(batch_size)
    return SelfRating(fast=fast).bind(model).grade(pairs)


@pytest.fixture(scope="module")
def runs(steered_t5):
    """The same pairs graded by generation (batches of 16) and by the fast path (batches of 4 and of 1),
    with the number of sequences the fast path generated."""
    model, pairs, _ = steered_t5
    generated: list[int] = []
    original = model.model.generate

    def counting(**kwargs):
        generated.append(len(kwargs["attention_mask"]))
        return original(**kwargs)

    model.model.generate = counting
    try:
        fast4 = _judge(model, pairs, fast=True, batch_size=4)
    finally:
        del model.model.generate  # back to the class's method
    return {"slow": _judge(model, pairs, fast=False, batch_size=16), "fast4": fast4,
            "fast1": _judge(model, pairs, fast=True, batch_size=1), "generated": sum(generated)}


@pytest.mark.slow
def test_prompts_differ_in_length_so_batches_pad(steered_t5):
    model, pairs, _ = steered_t5
    lengths = [model.count_tokens(self_rating_prompt(model, p)) for p in pairs]
    assert max(lengths) == model.max_input_tokens and min(lengths) < 200  # the long passage was cut to fit


@pytest.mark.slow
def test_fast_path_reads_steered_digits_and_falls_back_for_the_rest(steered_t5, runs):
    _, _, targets = steered_t5
    judgments = runs["fast4"]
    for judgment, (_, grade, fast) in zip(judgments, targets):
        assert judgment.grade == grade
        assert (judgment.probabilities is not None) == fast
        if fast:
            assert judgment.answer == str(grade)
            assert judgment.probabilities[grade] == pytest.approx(1.0)
    assert runs["generated"] == sum(j.probabilities is None for j in judgments)  # only the rest was generated


@pytest.mark.slow
def test_fast_path_agrees_with_generation_on_every_pair(steered_t5, runs):
    _, _, targets = steered_t5
    slow = runs["slow"]
    assert [j.grade for j in slow[:len(targets)]] == [grade for _, grade, _ in targets]
    assert [j.answer for j in slow[:len(targets)]] == ["5", "5", "3 stars", "2018", "0", "1", "4.", "4", "no",
                                                       "unanswerable", "The answer", "6", ""]
    for fast in (runs["fast4"], runs["fast1"]):
        assert [j.grade for j in fast] == [j.grade for j in slow]
        for f, s in zip(fast, slow):
            if f.probabilities is None:  # generated: the same text
                assert f.answer == s.answer


def test_batch_size_does_not_change_judgments(runs):
    one, many = runs["fast1"], runs["fast4"]
    assert [(j.grade, j.answer) for j in one] == [(j.grade, j.answer) for j in many]
    for a, b in zip(one, many):
        assert (a.probabilities is None) == (b.probabilities is None)
        if a.probabilities is not None:
            assert a.probabilities == pytest.approx(b.probabilities, abs=1e-5)


@pytest.mark.slow
def test_fast_path_agrees_with_generation_on_a_causal_lm(tiny_causal_dir):
    model = HFBackend.load(str(tiny_causal_dir), batch_size=4)
    pairs = _pairs()[:9]
    targets = _targets(model.tokenizer)[:9]
    steer(model, [self_rating_prompt(model, p) for p in pairs], [t for t, _, _ in targets])
    fast = _judge(model, pairs, fast=True, batch_size=4)
    slow = _judge(model, pairs, fast=False, batch_size=4)
    assert [j.grade for j in fast] == [j.grade for j in slow] == [grade for _, grade, _ in targets]


def test_method_id_names_model_and_prompt_version(steered_t5):
    model, _, _ = steered_t5
    grader = SelfRating().bind(model)
    assert grader.method.method_id == f"self-rating|{model.name}|self-rating@v1"
    assert grader.grade([]) == []
