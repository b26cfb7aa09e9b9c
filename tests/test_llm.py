"""The inference layer: batching, loading, prompt fitting, and batched inference checked against
single-prompt runs and HF's own loss."""
from __future__ import annotations

import pytest
import torch

from exampp.errors import ModelLoadError
from exampp.grading.method_prompts import SELF_RATING
from exampp.llm.backends.hf import HFBackend
from exampp.llm.batching import CPU_BATCH_SIZE, CPU_BATCH_TOKENS, CPU_MAX_BATCH, Batcher, auto_batch_size, length_order
from exampp.llm.device import DeviceError
from exampp.testing.tiny_models import steer

# --- batching ------------------------------------------------------------------------------


def test_length_order_is_longest_first_and_stable():
    assert length_order([3, 9, 1, 9, 3]) == [1, 3, 0, 4, 2]


def test_batcher_sorts_by_length_and_returns_input_order():
    seen: list[list[str]] = []

    def upper(batch: list[str]) -> list[str]:
        seen.append(batch)
        return [s.upper() for s in batch]

    items = ["bb", "a", "dddd", "ccc", "eeeee"]
    assert Batcher(2).map(upper, items, [len(s) for s in items]) == ["BB", "A", "DDDD", "CCC", "EEEEE"]
    assert seen == [["eeeee", "dddd"], ["ccc", "bb"], ["a"]]


def test_batcher_halves_on_out_of_memory_and_keeps_the_smaller_size():
    sizes: list[int] = []

    def fits_three(batch: list[int]) -> list[int]:
        sizes.append(len(batch))
        if len(batch) > 3:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (fake)")
        return [x * 10 for x in batch]

    batcher = Batcher(16)
    items = list(range(11))
    assert batcher.map(fits_three, items, [1] * 11) == [x * 10 for x in items]
    assert sizes == [11, 8, 4, 2, 2, 2, 2, 2, 1]  # 16 → 8 → 4 → 2, then 2s over the 11 items
    assert batcher.batch_size == 2
    sizes.clear()
    batcher.map(fits_three, [1, 2, 3], [1, 1, 1])
    assert sizes == [2, 1]  # a later call starts at the reduced size


def test_batcher_gives_up_at_batch_size_one_and_passes_other_errors_on():
    def always_oom(batch):
        raise torch.cuda.OutOfMemoryError("CUDA out of memory (fake)")

    with pytest.raises(torch.cuda.OutOfMemoryError):
        Batcher(4).map(always_oom, [1, 2, 3], [1, 1, 1])
    calls: list[int] = []

    def broken(batch):
        calls.append(len(batch))
        raise ValueError("not memory")

    with pytest.raises(ValueError):
        Batcher(4).map(broken, [1, 2, 3], [1, 1, 1])
    assert calls == [3]
    with pytest.raises(ValueError):
        Batcher(0)


def test_auto_batch_size(monkeypatch):
    from transformers import T5Config

    assert auto_batch_size(torch.device("cpu"), T5Config(), 512) == CPU_BATCH_SIZE
    config = T5Config(d_model=1024, d_ff=2816, num_heads=16, num_layers=24)  # FLAN-T5-large
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device: (40 * 2**30, 80 * 2**30))
    # per sequence: 512 * (16*512 + 2*2816 + 8*1024) + 48 * 4 * 1024 * 512 elements, 2 bytes each
    per_sequence = (512 * (16 * 512 + 2 * 2816 + 8 * 1024) + 48 * 4 * 1024 * 512) * 2
    assert per_sequence == 223_870_976  # ~213 MiB
    assert auto_batch_size(torch.device("cuda"), config, 512) == 115  # 0.6 * 40 GiB / 213 MiB
    assert auto_batch_size(torch.device("cuda"), config, 512, beams=5) == 23
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device: (1, 80 * 2**30))
    assert auto_batch_size(torch.device("cuda"), config, 512) == 1


# --- loading -------------------------------------------------------------------------------


def test_load_seq2seq(tiny_t5_dir):
    model = HFBackend.load(str(tiny_t5_dir), batch_size=3)
    assert model.name == str(tiny_t5_dir)
    assert model.is_encoder_decoder and model.max_input_tokens == 512
    assert model.device == torch.device("cpu") and model.model.dtype == torch.float32
    assert model.batcher.batch_size == 3 and not model.model.training
    assert model.first_step_is_raw
    model.model.generation_config.no_repeat_ngram_size = 2  # a logits processor: the first step is no longer raw
    assert not model.first_step_is_raw


@pytest.mark.slow
def test_load_causal_and_dtype(tiny_causal_dir):
    model = HFBackend.load(str(tiny_causal_dir), dtype="bf16")
    assert not model.is_encoder_decoder
    assert model.max_input_tokens == 1024 - 64  # the tokenizer sets no limit: the config's positions, room to answer
    assert model.tokenizer.padding_side == "left" and model.model.dtype == torch.bfloat16
    assert (model.batcher.batch_size, model.batcher.max_tokens) == (CPU_MAX_BATCH, CPU_BATCH_TOKENS)


@pytest.mark.parametrize("where", ["missing", "empty", "no weights"])
def test_load_failure_says_what_to_do(tmp_path, tiny_t5_dir, where):
    path = tmp_path / "model"
    if where != "missing":
        path.mkdir()
    if where == "no weights":
        (path / "config.json").write_bytes((tiny_t5_dir / "config.json").read_bytes())
    with pytest.raises(ModelLoadError) as error:
        HFBackend.load(str(path))
    remedy = ("Give a local copy of the model with --model PATH (a folder with config.json, weights and "
              "tokenizer files), or grade offline with --grader embedding.")
    expected = {"missing": f"no such model folder {path}",
                "empty": f"{path} is not a model folder: it has no config.json. {remedy}"}
    message = str(error.value)
    if where == "no weights":  # transformers' own reason, then what to do
        assert message.startswith(f"cannot load model '{path}': ") and message.endswith(remedy)
    else:
        assert message == expected[where]


def test_bad_device_and_dtype(tiny_t5_dir):
    with pytest.raises(DeviceError, match="--device 'tpu' is not a device"):
        HFBackend.load(str(tiny_t5_dir), device="tpu")
    with pytest.raises(ModelLoadError, match="unknown dtype 'int3'"):
        HFBackend.load(str(tiny_t5_dir), dtype="int3")
    if not torch.cuda.is_available():
        with pytest.raises(DeviceError, match="use auto or cpu"):
            HFBackend.load(str(tiny_t5_dir), device="cuda:0")


# --- fit -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def t5(tiny_t5_dir) -> HFBackend:
    return HFBackend.load(str(tiny_t5_dir), batch_size=2)


def test_fit_keeps_a_short_passage_untouched(t5):
    fitted = t5.fit(SELF_RATING, context="Corals expel their algae.\nThen they bleach.", question="Why?")
    assert fitted == SELF_RATING.render(context="Corals expel their algae.\nThen they bleach.", question="Why?")


def test_fit_cuts_only_the_end_of_a_long_passage(t5):
    passage = " ".join(f"Fact {i}: warm water stresses coral polyps." for i in range(300))
    question = "Why do corals bleach when the sea warms, and what role do algae play? " * 3
    fitted = t5.fit(SELF_RATING, context=passage, question=question)
    head = SELF_RATING.render(context="", question=question)
    assert fitted.startswith(head)  # the question whole, the template intact
    kept = fitted[len(head):]
    assert passage.startswith(kept) and 0 < len(kept) < len(passage)
    assert t5.max_input_tokens - 3 <= t5.count_tokens(fitted) <= t5.max_input_tokens


def test_fit_with_a_question_too_long_to_leave_room_keeps_the_question(t5):
    question = "why " * 600
    fitted = t5.fit(SELF_RATING, context="some passage", question=question)
    assert fitted == SELF_RATING.render(context="", question=question)


def test_a_cut_passage_is_counted_with_the_tokens_it_lost(tiny_t5_dir):
    model = HFBackend.load(str(tiny_t5_dir), batch_size=2)
    model.fit(SELF_RATING, context="Corals expel their algae.", question="Why?")
    assert (model.usage.cut_contexts, model.usage.cut_tokens) == (0, 0)  # it fits: nothing cut
    passage = " ".join(f"Fact {i}: warm water stresses coral polyps." for i in range(300))
    fitted = model.fit(SELF_RATING, context=passage, question="Why?")
    whole = model.count_tokens(SELF_RATING.render(context=passage, question="Why?"))
    assert (model.usage.cut_contexts, model.usage.cut_tokens) == (1, whole - model.count_tokens(fitted))
    assert whole - model.count_tokens(fitted) > 2000
    model.fit(SELF_RATING, context="some passage", question="why " * 600)  # even an empty context is too long
    assert model.usage.cut_contexts == 2


@pytest.mark.slow
def test_int8_weights_are_a_judge_of_their_own_and_float_dtypes_the_same_one(tiny_t5_dir):
    # Quantised linear layers move grades (README, Benchmarks): their grades must not be reused as fp32's.
    assert HFBackend.load(str(tiny_t5_dir), dtype="int8").name == f"{tiny_t5_dir}+int8"
    # bf16 is the GPU's default and fp32 the CPU's: one judge, so a workspace keeps its grades on either machine.
    assert HFBackend.load(str(tiny_t5_dir), dtype="bf16").name == HFBackend.load(str(tiny_t5_dir)).name \
        == str(tiny_t5_dir)


# --- inference -----------------------------------------------------------------------------

PROMPTS = ["short", "a somewhat longer prompt about coral reefs and bleaching " * 8, "mid length prompt here"]


def test_first_token_logprobs_batched_equals_single_and_a_plain_forward(t5):
    batched = t5.first_token_logprobs(PROMPTS)
    assert batched.shape == (3, 32128)
    assert torch.allclose(batched.logsumexp(dim=1), torch.zeros(3), atol=1e-4)
    for row, prompt in zip(batched, PROMPTS):
        ids = t5.tokenizer(prompt, return_tensors="pt").input_ids
        with torch.no_grad():
            logits = t5.model(input_ids=ids, decoder_input_ids=torch.tensor([[0]])).logits[0, -1]
        assert torch.allclose(row, torch.log_softmax(logits, dim=-1), atol=1e-4)
    assert t5.first_token_logprobs([]).shape == (0, 32128)


def _steer_three(model: HFBackend) -> None:
    tok = model.tokenizer
    steer(model, PROMPTS, [tok.convert_tokens_to_ids(["▁The", "▁reef"]) + [1], tok.convert_tokens_to_ids(["▁3"]) + [1],
                           tok.convert_tokens_to_ids(["▁no", "▁answer", "."]) + [1]])


@pytest.mark.slow
@pytest.mark.parametrize("fixture", ["tiny_t5_dir", "tiny_causal_dir"])
def test_generate_follows_steered_tokens_in_any_batch(fixture, request):
    model = HFBackend.load(str(request.getfixturevalue(fixture)), batch_size=2)
    _steer_three(model)
    assert model.generate(PROMPTS) == ["The reef", "3", "no answer."]
    assert [model.generate([p])[0] for p in PROMPTS] == ["The reef", "3", "no answer."]
    assert model.generate(PROMPTS, num_beams=3) == ["The reef", "3", "no answer."]
    assert model.generate(PROMPTS, max_new_tokens=1) == ["The", "3", "no"]
    # One pass: first-token rows for all, generation only where flagged (here: first token is not "▁3").
    three = model.tokenizer.convert_tokens_to_ids("▁3")
    results = model.first_token_or_generate(PROMPTS, lambda logprobs: logprobs.argmax(dim=1) != three)
    assert [text for _, text in results] == ["The reef", None, "no answer."]
    assert torch.allclose(torch.stack([row for row, _ in results]), model.first_token_logprobs(PROMPTS), atol=1e-4)


def _reference_continuation(model: HFBackend, prompt: str, continuation: str) -> tuple[float, int]:
    """Summed log-probability through HF's own loss (mean NLL over the labelled tokens)."""
    cont = model.tokenizer(continuation, add_special_tokens=False, return_tensors="pt").input_ids
    prompt_ids = model.tokenizer(prompt, return_tensors="pt").input_ids
    with torch.no_grad():
        if model.is_encoder_decoder:
            loss = model.model(input_ids=prompt_ids, labels=cont).loss
        else:
            ids = torch.cat([prompt_ids, cont], dim=1)
            labels = ids.clone()
            labels[:, :prompt_ids.shape[1]] = -100
            loss = model.model(input_ids=ids, labels=labels).loss
    n = cont.shape[1]
    return -loss.item() * n, n


@pytest.mark.parametrize("fixture", ["tiny_t5_dir", "tiny_causal_dir"])
def test_continuation_logprobs_match_hf_loss(fixture, request):
    model = HFBackend.load(str(request.getfixturevalue(fixture)), batch_size=2)
    continuations = ["coral bleaching", "yes", "a much longer answer with several tokens in it"]
    got = model.continuation_logprobs(PROMPTS, continuations)
    for (total, n), prompt, continuation in zip(got, PROMPTS, continuations):
        ref_total, ref_n = _reference_continuation(model, prompt, continuation)
        assert n == ref_n and total == pytest.approx(ref_total, rel=1e-4, abs=1e-3)
    assert model.continuation_logprobs(["p", "q"], ["", "yes"])[0] == (0.0, 0)
    assert model.continuation_logprobs(["p"], [""]) == [(0.0, 0)]
    with pytest.raises(ValueError):
        model.continuation_logprobs(["p"], [])


def test_causal_left_padding_changes_nothing(tiny_causal_dir):
    model = HFBackend.load(str(tiny_causal_dir), batch_size=3)
    batched = model.first_token_logprobs(PROMPTS)
    single = torch.cat([model.first_token_logprobs([p]) for p in PROMPTS])
    assert torch.allclose(batched, single, atol=1e-4)
    assert model.generate(PROMPTS, max_new_tokens=4) == [model.generate([p], max_new_tokens=4)[0] for p in PROMPTS]


@pytest.mark.slow
def test_a_cached_hub_model_loads_when_the_hub_is_out_of_reach(unreachable_hub, tiny_t5_dir):
    from conftest import cache_model

    cache_model(unreachable_hub, "exampp-test/tiny-t5", tiny_t5_dir)
    model = HFBackend.load("exampp-test/tiny-t5", batch_size=2)
    assert model.name == "exampp-test/tiny-t5" and model.is_encoder_decoder
    assert model.first_token_logprobs(["Is this cached?"]).shape == (1, 32128)


def test_chat_models_are_another_judge_and_answer_afresh(tiny_causal_dir):
    raw = HFBackend.load(str(tiny_causal_dir))
    assert (raw.chat, raw.name, raw.answer_lead) == (False, str(tiny_causal_dir), " ")
    raw.tokenizer.chat_template = "{% for m in messages %}<user>{{ m['content'] }}</user>{% endfor %}<assistant>"
    chat = HFBackend(str(tiny_causal_dir), raw.tokenizer, raw.model, raw.device)
    assert (chat.chat, chat.name, chat.answer_lead) == (True, f"{tiny_causal_dir}+chat", "")
    assert chat.format("Rate it.") == "<user>Rate it.</user><assistant>"
    # the template writes the special tokens itself
    expected = raw.tokenizer("<user>Rate it.</user><assistant>", add_special_tokens=False)["input_ids"]
    assert chat.count_tokens("Rate it.") == len(expected)
    off = HFBackend(str(tiny_causal_dir), raw.tokenizer, raw.model, raw.device, chat=False)
    assert (off.name, off.format("Rate it.")) == (str(tiny_causal_dir), "Rate it.")
    # A conversation goes in as format renders it: every turn in the template, or the turns' texts a blank line apart.
    turns = (("user", "Rate it."), ("assistant", "Five."), ("user", "Only a digit."))
    templated = "<user>Rate it.</user><user>Five.</user><user>Only a digit.</user><assistant>"
    assert (chat.format(turns), off.format(turns)) == (templated, "Rate it.\n\nFive.\n\nOnly a digit.")
    assert chat._encode([turns]) == [raw.tokenizer(templated, add_special_tokens=False)["input_ids"]]
    assert off._encode([turns]) == [raw.tokenizer("Rate it.\n\nFive.\n\nOnly a digit.")["input_ids"]]
