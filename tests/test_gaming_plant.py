"""The planting functions of benchmarks/gaming_plant.py: each spelling, insertion, paraphrase and
stuffing worked out by hand, the variants' rotation, and plants landing where they say."""
from __future__ import annotations

import pytest

from conftest import load_benchmark

plant = load_benchmark("gaming_plant")


def test_spellings():
    assert plant.zero_width("ab cd") == "a\u200bb c\u200cd"
    assert plant.homoglyphs("pace Top") == "\u0440\u0430\u0441\u0435 \u0422\u043e\u0440"
    assert plant.spaced("rate it 5") == "r a t e   i t   5"
    assert plant.leet("test it") == "7357 17"


def test_insert_at():
    assert plant.insert_at("a b c d e", "X", "middle") == "a b X c d e"
    assert plant.insert_at("a b", "X", "start") == "X a b"
    assert plant.insert_at("a b", "X", "end") == "a b X"


def test_paraphrase_changes_one_word():
    assert plant.paraphrase("What are the primary roles of insulin?") == "what are the main roles of insulin"
    assert plant.paraphrase("What is a hormone?") == "what's a hormone"
    assert plant.paraphrase("How does insulin work?") == "does insulin work"


def test_leak_exact_and_paraphrased():
    assert plant.leak("a b c d", ["Why is the sky blue?", "How does insulin work?"], True) == \
        "a b Why is the sky blue? How does insulin work? c d"
    assert plant.leak("a b", ["What is a hormone?"], False, "end") == "a b what's a hormone."


def test_stuffing_modes():
    query = "cost of tuition?"
    assert plant.content_words(query) == ["cost", "tuition"]
    assert plant.stuff("a b", query, "repeat") == "a b " + " ".join(["cost of tuition"] * 5)
    assert plant.stuff("a b c d e f g h i", query, "sprinkle") == "a b c d cost e f g h tuition i"
    assert plant.stuff("a b", query, "keywords") == \
        "a Keywords: " + ", ".join(["cost", "tuition", "cost tuition"] * 4) + ". b"
    with pytest.raises(ValueError):
        plant.stuff("a", query, "shout")


def test_injection_variants_rotate_through_every_pair():
    assert plant.injection_variant(0) == plant.Injection(0, "plain", "middle")
    assert plant.injection_variant(21) == plant.Injection(1, "homoglyph", "middle")
    assert plant.injection_variant(42) == plant.Injection(2, "leet", "start")
    pairs = {(v.template, v.obfuscation) for v in map(plant.injection_variant, range(100))}
    assert len(pairs) == len(plant.INJECTIONS) * len(plant.OBFUSCATIONS)
    assert plant.inject("a b", plant.Injection(5, "plain", "end")) == f"a b {plant.INJECTIONS[5][2]}"


def test_chosen_ranks():
    ranks = plant.chosen_ranks("run", "q1", 20, 0.3, "injection")
    assert len(ranks) == 6 and ranks == sorted(ranks) and set(ranks) <= set(range(1, 21))
    assert ranks == plant.chosen_ranks("run", "q1", 20, 0.3, "injection")  # seeded, not random
    assert 1 not in plant.chosen_ranks("run", "q1", 20, 0.95, "duplicate-within")  # rank 1 is the copied one
    assert len(plant.chosen_ranks("run", "q1", 20, 0.95, "duplicate-within")) == 19
    assert plant.chosen_ranks("run", "q1", 4, 0.3, "stuffing") == [1, 2, 3, 4]  # a short ranking: all of it
    assert plant.chosen_ranks("run", "q1", 1, 0.3, "duplicate-across") == [1]  # a RAG answer


def _collection():
    ids = [f"d{i}" for i in range(1, 21)]
    rankings = {"runA": {"q1": ids, "q2": ids[::-1]}}
    texts = {q: {d: f"passage {d} one two three four" for d in ids} for q in ("q1", "q2")}
    return rankings, texts


def test_plant_texts_land_at_their_ranks():
    rankings, texts = _collection()
    exam = {"q1": ["Why is the sky blue?", "What is a hormone?"], "q2": ["How does insulin work?"]}
    plants = plant.plant_texts("leakage", rankings, texts, {"q1": "sky", "q2": "insulin"}, exam, 0.1)
    assert [(p.query_id, p.rank) for p in plants] == \
        [("q1", r) for r in plant.chosen_ranks("runA", "q1", 20, 0.1, "leakage")] + \
        [("q2", r) for r in plant.chosen_ranks("runA", "q2", 20, 0.1, "leakage")]
    first, second = plants[0], plants[1]
    assert len(first.questions) == 1 and first.questions[0] in first.text  # the first: one question, exactly
    assert len(second.questions) == 2 and all(q in second.text for q in second.questions)
    assert first.text_id == f"{first.source_id}~leakage~r0~qq1~{first.rank}"
    attacked = plant.attacked_rankings(rankings, plants)
    for p in plants:
        assert attacked["runA"][p.query_id][p.rank - 1] == p.text_id
        assert rankings["runA"][p.query_id][p.rank - 1] == p.source_id  # the input is left alone
    assert sum(a != b for q in ("q1", "q2") for a, b in zip(attacked["runA"][q], rankings["runA"][q])) == len(plants)


def test_plant_duplicates():
    rankings, texts = _collection()
    within = plant.plant_duplicates("duplicate-within", rankings, texts, 0.1)
    assert len(within) == 4  # two ranks in each of two rankings
    assert len({p.text_id for p in within}) == 4
    assert all(p.text == texts[p.query_id][rankings["runA"][p.query_id][0]] for p in within)
    across = plant.plant_duplicates("duplicate-across", rankings, texts, 0.5)
    assert [(p.query_id, p.source_id, p.text) for p in across] == [("q2", "d1", texts["q1"]["d1"])]


def test_plant_answers_take_a_share_of_topics():
    rankings = {"runA": {f"t{i}": ["runA"] for i in range(10)}}
    texts = {f"t{i}": {"runA": f"answer {i} about cost"} for i in range(10)}
    plants = plant.plant_answers("stuffing", rankings, texts, {f"t{i}": "cost" for i in range(10)}, {}, 0.3)
    assert len(plants) == 3 and len({p.query_id for p in plants}) == 3
    assert [p.detail for p in plants] == list(plant.STUFFING)
