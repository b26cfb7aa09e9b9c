"""The hf engine's speed-ups change nothing but speed: token-budget batches (exact batches by hand),
one tokenisation per prompt and per passage (the same ids as the plain path), the fused GELU and the
shared T5 attention mask (the same outputs as the unmodified model), ``compile`` (the same as eager);
int8 quantisation is checked to load and grade, its agreement with fp32 only reported
(benchmarks/grading.py)."""
from __future__ import annotations

import pytest
import torch
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

from exampp.collection.questions import Question
from exampp.grading.base import Pair
from exampp.grading.method_prompts import SELF_RATING
from exampp.grading.methods.self_rating import SelfRating
from exampp.llm.backends.hf import HFBackend
from exampp.llm.batching import Batcher, token_budget_size
from exampp.llm.fused import SDPA_SHARED_BIAS
from exampp.testing.tiny_models import build_t5
from tiny_model_dirs import t5_tokenizer_dir

# --- batches by token budget ------------------------------------------------------------------


def test_token_budget_size_by_hand():
    assert token_budget_size(100, 16, None) == 16  # no budget: the count
    assert token_budget_size(100, 16, 1000) == 10
    assert token_budget_size(10, 16, 1000) == 16  # the count caps short prompts
    assert token_budget_size(2000, 16, 1000) == 1  # one prompt over budget still goes, alone


def test_batches_hold_at_most_the_budget_of_padded_tokens():
    seen: list[list[int]] = []

    def record(batch: list[int]) -> list[int]:
        seen.append(batch)
        return [n * 2 for n in batch]

    lengths = [10, 3, 8, 2, 5, 5, 1, 9]
    assert Batcher(3, max_tokens=16).map(record, lengths, lengths) == [n * 2 for n in lengths]
    # longest first: 10 alone (16 // 10 = 1), 9 alone, 8 with the next (16 // 8 = 2), then 5, 3, 2 (3 at most), then 1
    assert seen == [[10], [9], [8, 5], [5, 3, 2], [1]]
    for batch in seen:
        assert len(batch) * max(batch) <= 16 or len(batch) == 1


def test_out_of_memory_halves_the_budget_too():
    sizes: list[int] = []

    def fits_twenty_tokens(batch: list[int]) -> list[int]:
        sizes.append(len(batch))
        if len(batch) * max(batch) > 20:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (fake)")
        return batch

    batcher = Batcher(64, max_tokens=80)
    assert batcher.map(fits_twenty_tokens, [4] * 12, [4] * 12) == [4] * 12
    assert sizes == [12, 10, 5, 5, 2]  # budget 80 (all 12), then 40 (10), then 20 (5 prompts of 4)
    assert (batcher.batch_size, batcher.max_tokens) == (16, 20)
    with pytest.raises(ValueError):
        Batcher(4, max_tokens=0)


@pytest.mark.slow
def test_backend_batches_by_count_or_budget(tiny_t5_dir):
    assert vars(HFBackend.load(str(tiny_t5_dir), batch_size=3).batcher) == {"batch_size": 3, "max_tokens": None}
    assert vars(HFBackend.load(str(tiny_t5_dir), max_batch_tokens=900).batcher) == {"batch_size": 512,
                                                                                     "max_tokens": 900}
    both = HFBackend.load(str(tiny_t5_dir), batch_size=5, max_batch_tokens=900).batcher
    assert (both.batch_size, both.max_tokens) == (5, 900)


# --- one tokenisation per prompt and per passage ----------------------------------------------

TRICKY = [
    "Ünïcödé  text\twith\ttabs,   runs of spaces and a trailing space ",
    "Numbers 3.14, 2018 and ½; emoji 🪸; CJK 珊瑚; <b>markup</b> & </s> written out",
    "\n\nLeading newlines, then text\n",
    " ".join(f"Sentence {i}: warm water stresses coral polyps." for i in range(200)),  # cut to fit
]


class CountingTokenizer:
    """The tokenizer with its calls counted per text."""

    def __init__(self, tokenizer) -> None:
        self.inner = tokenizer
        self.texts: list[str] = []

    def __call__(self, text, *args, **kwargs):
        self.texts += [text] if isinstance(text, str) else list(text)
        return self.inner(text, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.inner, name)


@pytest.fixture
def counted(tiny_t5_dir):
    model = HFBackend.load(str(tiny_t5_dir))
    plain = model.tokenizer
    model.tokenizer = CountingTokenizer(plain)
    return model, plain


def test_fitted_prompts_go_to_the_model_with_the_plain_paths_ids_tokenised_once(counted):
    model, plain = counted
    questions = ["Why do corals bleach?", "What is ½ of 🪸?", "And then?"]
    prompts = [model.fit(SELF_RATING, context=passage, question=q) for passage in TRICKY for q in questions]
    model.tokenizer.texts.clear()
    ids = model._encode(prompts)
    assert model.tokenizer.texts == []  # every prompt's ids were kept from fitting
    expected = plain(prompts, truncation=True, max_length=model.max_input_tokens)["input_ids"]
    assert ids == expected
    assert max(map(len, ids)) == model.max_input_tokens  # the long passage was cut
    # A prompt that was never counted is tokenised here, with the same result.
    assert model._encode(["never counted  ½"]) == [plain("never counted  ½")["input_ids"]]


def test_a_passage_cut_for_several_questions_is_tokenised_once(counted):
    model, _ = counted
    long = TRICKY[-1]
    for q in ("Why?", "How?", "When did the warm water come?"):
        model.fit(SELF_RATING, context=long, question=q)
    assert model.tokenizer.texts.count(long) == 1


def test_prompts_longer_than_the_input_are_cut_as_before(counted):
    model, plain = counted
    too_long = "word " * 700  # counted (not fitted): its ids are over the limit, so the batch path cuts them
    assert model.count_tokens(too_long) > model.max_input_tokens
    assert model._encode([too_long]) == plain([too_long], truncation=True, max_length=512)["input_ids"]


# --- model speed-ups == the unmodified model ------------------------------------------------------


@pytest.fixture(scope="module")
def three_layer_t5(tmp_path_factory):
    return build_t5(tmp_path_factory.mktemp("t5-3"), t5_tokenizer_dir(), num_layers=3, seed=3)


PROMPTS = ["short", "a longer prompt about coral reefs, bleaching and warm water " * 6, "mid length prompt here",
           "x " * 40]


def _plain(path) -> HFBackend:
    """The model as transformers loads it (SDPA attention, gelu_new), without exampp's speed-ups."""
    return HFBackend(str(path), AutoTokenizer.from_pretrained(path),
                     AutoModelForSeq2SeqLM.from_pretrained(path, dtype=torch.float32).eval(), torch.device("cpu"),
                     batch_size=4)


@pytest.mark.slow
def test_fused_gelu_and_shared_mask_change_no_output(three_layer_t5, monkeypatch):
    from transformers.activations import NewGELUActivation
    from transformers.integrations import sdpa_attention

    fast, plain = HFBackend.load(str(three_layer_t5), batch_size=4), _plain(three_layer_t5)
    assert plain.model.config._attn_implementation == "sdpa"
    assert fast.model.config._attn_implementation == SDPA_SHARED_BIAS
    assert not any(isinstance(m, NewGELUActivation) for m in fast.model.modules())
    assert sum(isinstance(m, torch.nn.GELU) for m in fast.model.modules()) == 6  # 3 encoder + 3 decoder layers
    built = []
    original = sdpa_attention.create_position_bias_mask
    monkeypatch.setattr(sdpa_attention, "create_position_bias_mask", lambda *a: built.append(1) or original(*a))
    got = fast.first_token_logprobs(PROMPTS)  # one batch of 4, padded
    # Encoder: one mask for its 3 layers; decoder: its first step has no self-attention mask (the bias goes
    # as it is, in each of 3 layers) and one cross-attention mask for its 3 layers.
    assert len(built) == 1 + 3 + 1
    built.clear()
    expected = plain.first_token_logprobs(PROMPTS)
    assert len(built) == 3 + 3 + 3  # transformers' own path: one per layer
    assert torch.allclose(got, expected, atol=1e-5)
    assert fast.generate(PROMPTS, max_new_tokens=6) == plain.generate(PROMPTS, max_new_tokens=6)
    assert fast.generate(PROMPTS, max_new_tokens=4, num_beams=3) == plain.generate(PROMPTS, max_new_tokens=4,
                                                                                   num_beams=3)


@pytest.mark.slow  # compiling takes about a minute on 2 cores
def test_compiled_model_equals_eager(tiny_t5_dir):
    eager = HFBackend.load(str(tiny_t5_dir), batch_size=4)
    compiled = HFBackend.load(str(tiny_t5_dir), batch_size=4, compile=True)
    assert torch.allclose(compiled.first_token_logprobs(PROMPTS), eager.first_token_logprobs(PROMPTS), atol=1e-5)
    assert compiled.generate(PROMPTS, max_new_tokens=4) == eager.generate(PROMPTS, max_new_tokens=4)


@pytest.mark.slow
def test_int8_quantises_the_linear_layers_and_grades(three_layer_t5):
    from torch.ao.nn.quantized.dynamic import Linear as QuantizedLinear

    model = HFBackend.load(str(three_layer_t5), dtype="int8", batch_size=4)
    linear = [m for m in model.model.modules() if isinstance(m, (torch.nn.Linear, QuantizedLinear))]
    assert linear and all(isinstance(m, QuantizedLinear) for m in linear)
    logprobs = model.first_token_logprobs(PROMPTS)
    assert torch.allclose(logprobs.logsumexp(dim=1), torch.zeros(len(PROMPTS)), atol=1e-4)
    pairs = [Pair("Q1", f"p{i}", text, Question("Q1", "Q1/a", "Why do corals bleach?"))
             for i, text in enumerate(TRICKY)]
    grades = [j.grade for j in SelfRating().bind(model).grade(pairs)]
    assert all(g in {0.0, 1.0, 2.0, 3.0, 4.0, 5.0} for g in grades)


@pytest.mark.slow
def test_a_model_without_relative_attention_bias_keeps_its_attention(tiny_causal_dir):
    model = HFBackend.load(str(tiny_causal_dir))
    assert model.model.config._attn_implementation == "sdpa"


def test_the_new_options_reach_the_hf_backend_and_others_refuse_them(tiny_t5_dir):
    from exampp.llm.backend import BackendError, BackendSpec

    threads = torch.get_num_threads()
    wanted = 2 if threads == 1 else 1  # other than now (pytest -n runs its workers with one thread)
    try:
        backend = BackendSpec("hf", str(tiny_t5_dir), {"threads": wanted, "max_batch_tokens": 500,
                                                        "compile": None}).open()
        assert torch.get_num_threads() == wanted and backend.batcher.max_tokens == 500
    finally:
        torch.set_num_threads(threads)
    with pytest.raises(BackendError, match="backend 'openai' takes no --threads"):
        BackendSpec("openai", "m", {"threads": 2}).given()
