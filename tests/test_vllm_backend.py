"""The ``vllm`` backend, through a CPU stand-in of vLLM's offline API (tests/stand_ins/vllm: the same
classes and output structures, computed by a HuggingFace causal LM): it gives the ``hf`` backend's
texts, labels, log-probabilities and grades on the same model, opens the engine with prefix caching,
submits prompts that share a header together, refuses encoder-decoder models, and without vLLM says
which extra to install. No GPU and no vLLM are needed; on a GPU machine these tests still use the stand-in."""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("transformers")

from click.testing import CliRunner

from exampp.cli import main
from exampp.errors import ModelLoadError
from exampp.grading.method_prompts import SELF_RATING
from exampp.grading.methods.self_rating import GRADES
from exampp.llm.backend import BackendError, open_backend
from exampp.llm.backends.hf import HFBackend
from exampp.stores.grade_store import GradeStore
from exampp.testing.tiny_models import build_causal, steer
from small_collection import write_collection
from tiny_model_dirs import t5_tokenizer_dir

STAND_INS = Path(__file__).resolve().parent / "stand_ins"
CHAT_TEMPLATE = "{% for m in messages %}<user>{{ m['content'] }}</user>{% endfor %}<assistant>"

PASSAGES = {
    "d1": "Corals bleach when warm water makes them expel the algae that live in their tissues.",
    "d2": "Reef knots join two ropes of equal thickness.",
    "d3": "Heat stress is the main cause of mass bleaching.",
    "d4": "A bowline makes a fixed loop at the end of a rope.",
}
RUNS = {"a": {"Q1": ["d1", "d2"], "Q2": ["d4", "d2"]}, "b": {"Q1": ["d3", "d1"], "Q2": ["d2"]}}
QUESTIONS = [
    ("Q1", "Q1/heat", "What makes corals bleach?"),
    ("Q1", "Q1/algae", "What lives in coral tissues?"),
    ("Q2", "Q2/join", "Which knot joins two ropes?"),
    ("Q2", "Q2/loop", "Which knot makes a fixed loop?"),
]
# The pool: Q1 has d1, d2, d3 and Q2 has d2, d4, two questions each. The steered judge answers one of these
# first tokens and stops: a grade (read off the first token) or a word (the text path).
ANSWERS = ("▁4", "▁heat", "▁2", "▁no", "▁5", "▁reef")


def rating_prompts() -> list[str]:
    """The self-rating prompt of each pooled pair, question by question."""
    pool = {qid: sorted({pid for run in RUNS.values() for pid in run.get(qid, [])}) for qid in ("Q1", "Q2")}
    return [SELF_RATING.render(context=PASSAGES[pid], question=text)
            for qid, _, text in QUESTIONS for pid in pool[qid]]


@pytest.fixture(scope="module")
def stand_in():
    """vLLM's offline API as the stand-in provides it, importable as ``vllm`` for this module's tests."""
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(STAND_INS))
        for name in [m for m in sys.modules if m == "vllm" or m.startswith("vllm.")]:
            patch.delitem(sys.modules, name)  # a real vLLM, if installed, comes back afterwards
        import vllm

        assert Path(vllm.__file__).is_relative_to(STAND_INS)
        yield vllm
        for name in [m for m in sys.modules if m == "vllm" or m.startswith("vllm.")]:
            del sys.modules[name]


@pytest.fixture(scope="module")
def judge_dir(tmp_path_factory) -> Path:
    """A tiny causal LM steered (:func:`steer`) to answer each rating prompt with one token of ANSWERS, then stop
    (hidden size 128: the 64 of tiny_causal_dir cannot tell these similar prompts apart well enough to steer)."""
    built = build_causal(tmp_path_factory.mktemp("causal"), t5_tokenizer_dir(), hidden=128)
    backend = HFBackend.load(str(built), device="cpu")
    eos = backend.tokenizer.eos_token_id
    prompts = rating_prompts()
    answers = [backend.tokenizer.convert_tokens_to_ids(ANSWERS[i % len(ANSWERS)]) for i in range(len(prompts))]
    steer(backend, prompts, [[answer, eos] for answer in answers])
    folder = tmp_path_factory.mktemp("judge")
    backend.model.save_pretrained(folder)
    backend.tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def chat_dir(tiny_causal_dir, tmp_path_factory) -> Path:
    """The tiny causal LM with a chat template."""
    folder = tmp_path_factory.mktemp("chat") / "model"
    shutil.copytree(tiny_causal_dir, folder)
    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    config["chat_template"] = CHAT_TEMPLATE
    (folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def pair(model: Path, **options):
    """The same model on both backends (hf one prompt per forward pass, as the stand-in computes: padding in
    a batch moves float32 logits by ~1e-5)."""
    return open_backend("vllm", str(model), **options), open_backend("hf", str(model), device="cpu", batch_size=1)


def engine_of(backend):
    return backend.engine  # the stand-in's LLM, which records what it was asked


# --- the same results as the hf backend ----------------------------------------------------------------


@pytest.mark.slow
def test_generate_labels_and_continuations_equal_the_hf_backends(stand_in, judge_dir):
    vllm_backend, hf = pair(judge_dir)
    assert vllm_backend.name == hf.name == str(judge_dir)
    prompts = rating_prompts() + ["Hello there, what is", "Tell me about knots."]
    assert vllm_backend.generate(prompts, max_new_tokens=6) == hf.generate(prompts, max_new_tokens=6)

    got, expected = (b.next_token_labels(prompts, GRADES, max_new_tokens=6) for b in (vllm_backend, hf))
    assert [(n.top_label, n.text) for n in got] == [(n.top_label, n.text) for n in expected]
    # both paths: a grade read off the first token (no text), and text where the first token is no grade
    rated = got[:len(rating_prompts())]
    assert [n.top_label for n in rated] == [4, None, 2, None, 5, None, 4, None, 2, None]
    assert [n.text for n in rated] == [None, "heat", None, "no", None, "reef", None, "heat", None, "no"]
    for mine, theirs in zip(got, expected):
        assert mine.logprobs == pytest.approx(theirs.logprobs, abs=1e-5)

    continuations = [" 4", " heat", "", " a fixed loop", " no"] + [" yes"] * (len(prompts) - 5)
    scores = vllm_backend.continuation_logprobs(prompts, continuations)
    local = hf.continuation_logprobs(prompts, continuations)
    assert [n for _, n in scores] == [n for _, n in local] and scores[2] == (0.0, 0)
    # float32 sums: the steered tokens' log-probabilities run to -1e6, where float32 keeps ~7 digits
    assert [s for s, _ in scores] == pytest.approx([s for s, _ in local], rel=1e-6, abs=1e-5)
    # one request per prompt in each of the three calls, as hf counts them, with the same prompt tokens
    assert (vllm_backend.usage.requests, vllm_backend.usage.prompt_tokens) == \
        (hf.usage.requests, hf.usage.prompt_tokens) == (3 * len(prompts), 3 * sum(map(hf.count_tokens, prompts)))


@pytest.mark.slow
def test_chat_models_are_the_same_judge_on_both(stand_in, chat_dir):
    vllm_backend, hf = pair(chat_dir)
    assert (vllm_backend.chat, vllm_backend.name, vllm_backend.answer_lead) == (True, f"{chat_dir}+chat", "")
    turns = (("user", "Rate it."), ("assistant", "Five."), ("user", "Only a digit."))
    prompts = ["Rate it.", turns]
    assert vllm_backend.generate(prompts, max_new_tokens=5) == hf.generate(prompts, max_new_tokens=5)
    # the template went in as the token ids hf makes of it (the template writes the special tokens)
    submitted = engine_of(vllm_backend).calls[-1][0]
    templated = hf.tokenizer("<user>Rate it.</user><user>Five.</user><user>Only a digit.</user><assistant>",
                             add_special_tokens=False)["input_ids"]
    assert templated in submitted
    off = open_backend("vllm", str(chat_dir), chat=False)
    assert (off.chat, off.name, off.format(turns)) == (False, str(chat_dir), "Rate it.\n\nFive.\n\nOnly a digit.")


@pytest.mark.slow
def test_chat_without_a_template_is_refused(stand_in, tiny_causal_dir):
    with pytest.raises(ModelLoadError) as caught:
        open_backend("vllm", str(tiny_causal_dir), chat=True)
    assert str(caught.value) == f"model {str(tiny_causal_dir)!r} has no chat template: leave out --chat"


# --- grading through the command line ------------------------------------------------------------------


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    return write_collection(tmp_path_factory.mktemp("collection"), RUNS, PASSAGES,
                            ({"query_id": qid, "question_id": question_id, "text": text}
                             for qid, question_id, text in QUESTIONS))


def grade(workspace: Path, store_dir: Path, *args: str):
    argv = ["grade", str(workspace / "runs"), "--corpus", str(workspace / "passages.jsonl"),
            "--bank", str(workspace / "questions.jsonl"), "-w", str(store_dir), "--no-progress",
            "--grader", "self-rating", *args]
    return CliRunner().invoke(main, argv)


def stored(store_dir: Path) -> dict:
    with GradeStore(store_dir / "grades.sqlite") as store:
        return {(r.method_id, r.query_id, r.passage_id, r.question_id): (r.grade, r.answer, r.probabilities)
                for r in store.records()}


@pytest.mark.slow
def test_self_rating_grades_via_vllm_equal_those_via_hf(stand_in, workspace, judge_dir, tmp_path):
    local = grade(workspace, tmp_path / "hf", "--backend", "hf", "--model", str(judge_dir), "--device", "cpu",
                  "--batch-size", "1")
    assert local.exit_code == 0, local.output
    served = grade(workspace, tmp_path / "vllm", "--backend", "vllm", "--model", str(judge_dir),
                   "--gpu-memory-utilization", "0.5", "--max-model-len", "1024")  # the model's own: the same judge
    assert served.exit_code == 0, served.output
    expected, got = stored(tmp_path / "hf"), stored(tmp_path / "vllm")
    assert sorted(got) == sorted(expected) and len(got) == len(rating_prompts())
    for key, (grade_, answer, probabilities) in expected.items():
        assert got[key][:2] == (grade_, answer), key
        assert got[key][2] == (None if probabilities is None else pytest.approx(probabilities, abs=1e-5)), key
    assert sum(p is not None for _, _, p in got.values()) == 5  # read off the first token, with probabilities
    assert {a for _, a, p in got.values() if p is None} == {"heat", "no", "reef"}  # read from the text
    engine = stand_in.LLM.opened[-1]
    assert engine.options["enable_prefix_caching"] is True
    assert (engine.options["gpu_memory_utilization"], engine.options["max_model_len"]) == (0.5, 1024)
    prompt_tokens = sum(map(open_backend("hf", str(judge_dir), device="cpu").count_tokens, rating_prompts()))
    # one prompt per pair; one token each in the first pass, two (the word and </s>) for the 5 text answers
    assert f"judge: 10 prompts, {prompt_tokens} prompt tokens, {10 + 2 * 5} completion tokens\n" in served.output


# --- the engine: options, prefix caching, prompt order ---------------------------------------------------


@pytest.mark.slow
def test_the_engine_is_opened_with_prefix_caching_and_the_options_given(stand_in, judge_dir):
    backend = open_backend("vllm", str(judge_dir), dtype="bf16", gpu_memory_utilization=0.5, tensor_parallel_size=2,
                           max_model_len=512, seed=7)
    assert engine_of(backend).options == {
        "model": str(judge_dir), "tokenizer": str(judge_dir), "dtype": "bfloat16", "seed": 7,
        "gpu_memory_utilization": 0.5, "tensor_parallel_size": 2, "max_model_len": 512,
        "enable_prefix_caching": True, "max_logprobs": 20}
    assert backend.max_input_tokens == 512 - 64  # room kept for the answer, as hf keeps it
    assert backend.name == f"{judge_dir}+max_input_tokens=448"  # cut shorter than the model's 960: another judge
    default = open_backend("vllm", str(judge_dir))
    assert {k: engine_of(default).options[k] for k in ("dtype", "seed", "max_model_len", "tensor_parallel_size")} \
        == {"dtype": "auto", "seed": 0, "max_model_len": None, "tensor_parallel_size": 1}
    assert default.max_input_tokens == 1024 - 64  # GPT-2's positions, as hf computes it
    assert default.name == str(judge_dir)


@pytest.mark.slow
def test_prompts_sharing_a_header_go_in_together_and_results_come_back_in_order(stand_in, judge_dir):
    backend = open_backend("vllm", str(judge_dir))
    prompts = rating_prompts()
    interleaved = prompts[0::3] + prompts[1::3] + prompts[2::3]  # every question's prompts spread apart
    questions = [text for _, _, text in QUESTIONS]

    def question_of(ids: list[int]) -> str:
        text = backend.tokenizer.decode(ids, skip_special_tokens=True)
        return next(q for q in questions if f"Question: {q}" in text)

    assert len({question_of(ids) for ids in backend._encode(interleaved[:4])}) == 4  # the input order mixes them
    seen = backend.next_token_labels(interleaved, GRADES)
    first_pass, params = engine_of(backend).calls[-2]
    order = [question_of(ids) for ids in first_pass]
    runs = [q for i, q in enumerate(order) if i == 0 or order[i - 1] != q]
    assert sorted(runs) == sorted(questions)  # each question's prompts in one run: their shared header together
    assert (params.max_tokens, params.temperature, params.logprobs) == (1, 0.0, 20)
    text_pass, params = engine_of(backend).calls[-1]
    assert len(text_pass) == 5 and (params.max_tokens, params.logprobs) == (32, None)  # only the text rows
    one_by_one = [backend.next_token_labels([p], GRADES)[0] for p in interleaved]
    assert [(n.top_label, n.text, n.logprobs) for n in seen] == [(n.top_label, n.text, n.logprobs) for n in one_by_one]


# --- refusals ------------------------------------------------------------------------------------------


def test_an_encoder_decoder_model_is_refused(stand_in, tiny_t5_dir):
    with pytest.raises(ModelLoadError) as caught:
        open_backend("vllm", str(tiny_t5_dir))
    assert str(caught.value) == (f"model {str(tiny_t5_dir)!r} is an encoder-decoder model (t5): the vllm backend runs "
                                 "decoder-only (causal) LMs; grade with it on --backend hf")
    assert stand_in.LLM.opened == [] or all(e.options["model"] != str(tiny_t5_dir) for e in stand_in.LLM.opened)


def test_without_vllm_the_backend_says_which_extra_to_install(monkeypatch, workspace, judge_dir, tmp_path):
    monkeypatch.setitem(sys.modules, "vllm", None)  # import vllm fails, as where the extra is not installed
    message = ("backend 'vllm' needs the package vllm: install the exampp extra 'vllm' (pip install "
               "'exampp[vllm]', or scripts/setup.sh ...,vllm) or the package itself")
    with pytest.raises(BackendError) as caught:
        open_backend("vllm", str(judge_dir))
    assert str(caught.value) == message
    result = grade(workspace, tmp_path, "--backend", "vllm", "--model", str(judge_dir))
    assert result.exit_code != 0 and result.output.strip().endswith(message)
    assert not (tmp_path / "qrels").exists()


def test_a_model_is_required_and_hf_only_options_are_refused(workspace, judge_dir, tmp_path):
    with pytest.raises(BackendError) as caught:
        open_backend("vllm")
    assert str(caught.value) == ("the vllm backend needs --model: a causal LM's hub id or folder (FLAN-T5 and other "
                                 "encoder-decoder models stay on --backend hf)")
    result = grade(workspace, tmp_path, "--backend", "vllm", "--model", str(judge_dir), "--batch-size", "4")
    assert result.exit_code != 0 and "backend 'vllm' takes no --batch-size" in result.output
