"""The FLOP count of benchmarks/grading.py: its formula by hand, its hooks against torch's FlopCounterMode,
and its draw of DL19 pairs."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from conftest import load_benchmark, shared_path
from exampp.llm.backends.hf import HFBackend
from exampp.testing.tiny_models import save_t5, t5_model
from tiny_model_dirs import t5_tokenizer_dir

bench = load_benchmark("grading")
# d_model, d_ff, heads · d_kv and vocab all different, so that a swapped factor shows.
ODD = {"d_model": 48, "d_ff": 40, "d_kv": 8, "num_heads": 3, "num_layers": 2}


def test_formula_by_hand():
    shape = bench.Shape(d_model=2, d_ff=3, heads=1, d_kv=1, encoder_layers=1, decoder_layers=1, vocab=5)
    # Encoder, 2 tokens: per token q, k, v, o (2×1 each: 4 FLOPs) = 16 and wi_0, wi_1 (2×3), wo (3×2):
    # 12 each = 36, so 2 × 52 = 104; scores and values: 2 × (2 × 2 query-key pairs × 1 × 2 FLOPs) = 16.
    assert bench.encoder_flops(shape, 2) == 120
    # Decoder, 1 new token after 1 cached, over 2 encoder tokens: self q, k, v, o 16 + cross q, o 8 +
    # feed-forward 36 = 60; self scores and values over 2 positions 8; cross scores and values over 2
    # tokens 8; cross keys and values of the 2 encoder tokens 2 × 2 × 4 = 16; head 2×5: 20.
    assert bench.decoder_flops(shape, 1, 1, 2, cross_kv=True) == 60 + 8 + 8 + 16 + 20
    assert bench.decoder_flops(shape, 1, 1, 2, cross_kv=False) == 60 + 8 + 8 + 20
    # First step: self-attention over 1 position (4 FLOPs) and the cross keys and values.
    assert bench.decoder_flops(shape, 1, 0, 2, cross_kv=True) == 60 + 4 + 8 + 16 + 20
    # Grading with 2 greedy steps: encoder, first step, second step.
    assert bench.greedy_flops(shape, 2, 2) == 120 + 108 + 96


@pytest.fixture
def odd_backend(tmp_path: Path) -> HFBackend:
    """A small T5 with the eager attention (whose products FlopCounterMode sees), loaded as exampp loads models."""
    backend = HFBackend.load(str(save_t5(t5_model(**ODD), tmp_path / "odd", t5_tokenizer_dir())), device="cpu")
    backend.model.set_attn_implementation("eager")
    return backend


def counted(model, fn) -> tuple[int, int]:
    """(the meter's FLOPs, FlopCounterMode's) while ``fn`` runs."""
    meter = bench.FlopMeter(model)
    try:
        with FlopCounterMode(display=False) as counter:
            fn()
    finally:
        meter.close()
    return meter.flops, counter.get_total_flops()


@pytest.mark.slow
def test_meter_counts_beam_search_as_flop_counter_does(odd_backend):
    model, tokenizer = odd_backend.model, odd_backend.tokenizer
    inputs = tokenizer("Can the question be answered? context: a passage; question: why?", return_tensors="pt")

    def beam_search():
        with torch.no_grad():  # the reference tool's call; 4 steps on 5 beams
            model.generate(**inputs, num_beams=5, early_stopping=True, min_new_tokens=4, max_new_tokens=4)

    mine, torch_count = counted(model, beam_search)
    assert mine == torch_count
    # Encoder once; decoder steps 1-4 on 5 beams, the cross keys and values computed at step 1 only.
    shape, n = bench.Shape.of(model.config), inputs["input_ids"].shape[1]
    assert mine == bench.encoder_flops(shape, n) + 5 * sum(
        bench.decoder_flops(shape, 1, past, n, past == 0) for past in range(4))


@pytest.mark.slow
def test_meter_counts_exampp_batches_as_flop_counter_does(odd_backend):
    prompts = ["a short prompt", "a longer prompt that pads the other one in its batch", "a third"]
    # Padded batch: first step for all, greedy generation (from the encoder output) for the second.
    mine, torch_count = counted(odd_backend.model, lambda: odd_backend.first_token_or_generate(
        prompts, lambda logprobs: torch.tensor([False, True, False]), max_new_tokens=3))
    assert mine == torch_count > 0


@pytest.mark.slow
def test_dl19_draw_is_whole_passages_and_seeded():
    data = shared_path("data", "dl19")
    pairs = bench.dl19_pairs(data, 25, seed=19)
    assert len(pairs) == 30  # whole passages of 10 questions each
    passages = [[(p.query_id, p.passage_id) for p in run] for run in bench.by_passage(pairs, pairs)]
    assert [len(run) for run in passages] == [10, 10, 10]
    assert all(len(set(run)) == 1 for run in passages) and len({run[0] for run in passages}) == 3
    assert all(p.question.query_id == p.query_id for p in pairs)
    assert bench.dl19_pairs(data, 25, seed=19) == pairs
    assert bench.dl19_pairs(data, 25, seed=20) != pairs
