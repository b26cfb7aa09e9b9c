"""Self-rating throughput: the reference tool's way vs exampp's engine, same pairs, same model.

**Pairs.** Real DL19 passages and questions, so that token lengths are realistic: passages of the
reference graded file ``DL19-graded-t5-rating-genq-exam-qrels-runs-with-text.jsonl.gz`` are drawn
with a seeded shuffle, each with every question of its query in ``dl19-genq.jsonl.gz`` (10 per
query), until ``--pairs`` is reached (whole passages, so the count is rounded up to a multiple of
10). Read with exampp's readers from ``$EXAMPP_SHARED/data/dl19`` (default ``../shared``) or ``--data``.

**Models.** No model can be downloaded here, so the models have random weights in the exact shapes
of FLAN-T5-base (d_model 768, 12+12 layers, 12 heads, d_kv 64, d_ff 2048) and FLAN-T5-large
(d_model 1024, 24+24 layers, 16 heads, d_kv 64, d_ff 2816), gated-gelu, untied head, vocab 32128.
Compute does not depend on weight values, but decoding length does: random weights would babble up
to the length limit, so each model is first made to answer like FLAN-T5 (one of "0".."5" or "no",
chosen by the prompt, then end-of-sequence; ``exampp.testing.tiny_models.make_rater``, fitted on the first
question of 32 passages of the same draw, so that answers vary between passages and between
questions, with sharpness 32 so that fp32 rounding, batched or not, does not decide an answer), then saved; both ways
load the saved model, so they grade with the same weights.

**The two ways**, each in a process of its own (so that their peak memory is their own), each
warmed up on a pair or two before the clock starts:

(a) the reference tool's way, as the EXAM++ autograding workbench (TREMA-UNH/rubric-grading-workbench,
    ``exam_pp/t5_qa.py``: ``Text2TextPipeline`` and ``HfTransformersPromptRunner.call_pipeline``;
    ``exam_pp/exam_grading.py``: ``noodle_one_paragraph``) grades: the model loaded with
    ``T5ForConditionalGeneration.from_pretrained`` (fp32), a ``text2text-generation`` pipeline with
    ``batch_size=1`` (its ``BATCH_SIZE`` default), and per passage one pipeline call with the prompts
    of all the query's questions, ``max_length=512, num_beams=5, early_stopping=True``; the pipeline
    then runs them one at a time: tokenise (no padding), ``model.generate``, decode without special
    tokens. The workbench runs paragraphs as asyncio tasks, but the pipeline call is synchronous, so
    passages are graded one after another. transformers 5 removed that pipeline; there the same steps
    run by hand per prompt under ``torch.no_grad``, and the output says which ran. Prompts are
    exampp's self-rating prompt fitted to 512 tokens (the workbench's ``--max-tokens`` default);
    grades are parsed from the text as exampp's slow path parses them;
(b) exampp's engine: ``exampp.grading.runner.grade_pool`` (chunks of 128 pairs, longest passages
    first, committed to a grade store) with the ``self-rating`` grader on the ``hf`` backend opened as
    ``exampp grade`` opens it (dtype auto: fp32 on CPU, bf16 on GPU; batches by token budget: 4096
    padded tokens on CPU, from free memory on GPU); its fast path reads the grade off the first decoder step and
    generates (greedy) only where the most likely first token is no grade.

**FLOPs.** Counted as multiply-adds × 2 of the matrix products (norms, softmax and activations are
left out), from the model's shapes (d = d_model, f = d_ff, a = heads·d_kv, V = vocab, L_e and L_d
layers) and token counts:

- encoder over n tokens: ``L_e · [n · (4·d·a·2 + 3·d·f·2) + 2·2·n²·a]`` (attention projections
  q, k, v, o; gated-gelu feed-forward wi_0, wi_1, wo; attention scores and values);
- decoder, s new tokens after p cached ones, over an encoder output of n tokens:
  ``L_d · [s · (4·d·a·2 + 2·d·a·2 + 3·d·f·2) + 2·2·s·(p+s)·a + 2·2·s·n·a + c · n·2·d·a·2] + s·d·V·2``:
  self-attention projections, cross-attention q and o, feed-forward, self-attention over the prefix,
  cross-attention over the encoder output, the cross-attention keys and values of the encoder
  output (c = 1 on the call that computes them, then cached), and the LM head.

*Executed* FLOPs count what each way computed: forward pre-hooks on the encoder and decoder record
every call's batch, new tokens, cached tokens and encoder length (padding included; beam search
runs the decoder on 5 beams with 5 copies of the encoder output; exampp's fallback generation runs
the first decoder step again). *Useful* FLOPs count what grading a pair needs: its encoder pass over
its own tokens, then the greedy decoder steps up to the grade: one step where the fast path read the
grade, the tokens of the generated answer (end-of-sequence included) where it generated.
tests/test_benchmark_flops.py checks the formula against a hand count and the hooks against
``torch.utils.flop_counter.FlopCounterMode`` on a small model.

**MFU** (model FLOP/s utilisation) = exampp's useful FLOPs / its wall time / the device's peak in
exampp's dtype: on CPU the peak is measured (best of 5 2048×2048 matrix products at the thread count
used); on CUDA in bf16 it is the dense bf16 peak of the device by name (H100 SXM and H200 989
TFLOP/s, H100 PCIe 756, A100 312), measured with 8192×8192 products for other devices and dtypes.
``--dtype`` runs exampp in another dtype than ``exampp grade``'s default (e.g. ``bf16`` on a CPU
with AMX, ``int8``: the linear layers dynamically quantised, MFU then against the fp32 peak);
``--compile`` runs it ``torch.compile``'d (compilation counts in its time). The reference way stays
in fp32, as the workbench ran; where exampp does not run as fp32 eager, it also runs so, as (c).

**Memory.** On CPU the peak resident set size while grading (the high-water mark is reset after
loading and warming up where Linux allows it, so it is the loaded model plus the grading's working
memory; elsewhere the process's whole peak); on CUDA ``torch.cuda.max_memory_allocated`` while
grading. The resident size of the loaded model before grading is shown beside it.

**Grades.** exampp's greedy grades are compared with the reference way's beam-search grades on the
same pairs (the agreement is printed; tests/test_self_rating.py pins fast path == generation). On
these models, which answer in one token, they agree in fp32 unless beam search ranks the answers
otherwise. With (c), exampp's grades are also compared with its own fp32 grades on the same pairs
(reported, not required to agree); in bf16 or int8 some grades move (the rater's answer follows
one direction of the hidden state, which rounding shifts), which says nothing about how often
FLAN-T5's own grades would.

Usage (from the repository root):
    python benchmarks/grading.py --quick   # FLAN-T5-base shape, 20 pairs: about a minute on 2 CPU cores
    python benchmarks/grading.py [--shapes base,large] [--pairs 200] [--large-pairs 100] [--repeat 1]
                                 [--dtype auto|bf16|int8] [--compile] [--max-batch-tokens N] [--threads N]
                                 [--device cpu|cuda]
``--quick`` ends with one JSON line: ``{"baseline_pairs_per_s", "exampp_pairs_per_s", "speedup", "mfu"}``,
with ``"fp32_agreement", "fp32_pairs_per_s"`` where (c) ran.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
import transformers

from exampp.collection.questions import Question
from exampp.formats.question_bank import read_question_bank
from exampp.formats.reference_grades import read_reference_grades
from exampp.grading.base import Pair
from exampp.grading.method_prompts import SELF_RATING
from exampp.grading.rating_parsing import parse_self_rating
from exampp.llm.backends.hf import HFBackend, resolve_dtype
from exampp.testing.tiny_models import FLAN_T5_BASE_SHAPE, FLAN_T5_LARGE_SHAPE, make_rater, save_t5, t5_model
from shared_data import SHARED, TOKENIZER, tokenizer

GRADED = "DL19-graded-t5-rating-genq-exam-qrels-runs-with-text.jsonl.gz"
BANK = "dl19-genq.jsonl.gz"
SHAPES = {"base": FLAN_T5_BASE_SHAPE, "large": FLAN_T5_LARGE_SHAPE}
ANSWERS = ("0", "▁1", "▁2", "▁3", "▁4", "▁5", "▁no")  # "0" is a piece of its own; "▁0" is not in the vocabulary
RATER_PASSAGES = 32  # the rater is fitted on the first question of this many passages of the draw
RATER_SHARPNESS = 32.0  # logits per standard deviation: grades decided by logit gaps far above rounding
REFERENCE_OPTIONS = {"max_length": 512, "num_beams": 5, "early_stopping": True}
QUICK_PAIRS = 20
# Dense bf16 peaks by device name (NVIDIA data sheets); the first matching entry wins.
BF16_PEAKS = (("H100 PCIe", 756e12), ("H100", 989e12), ("H200", 989e12), ("A100", 312e12))


# --- pairs --------------------------------------------------------------------------------------

def dl19_pairs(data: Path, n: int, seed: int) -> list[Pair]:
    """Whole DL19 passages, drawn with a seeded shuffle, each with every question of its query, until
    there are at least ``n`` pairs; a passage's pairs are adjacent."""
    graded, bank = data / GRADED, data / BANK
    for path in (graded, bank):
        if not path.exists():
            sys.exit(f"error: {path} not found: this benchmark grades DL19 passages and questions "
                     "(pass --data or set EXAMPP_SHARED to the shared/ folder)")
    questions = read_question_bank(bank).by_query()
    passages = [(line.query_id, paragraph.paragraph_id, paragraph.text)
                for line in read_reference_grades(graded) if line.query_id in questions
                for paragraph in line.paragraphs]
    passages.sort(key=lambda p: p[:2])
    random.Random(seed).shuffle(passages)
    pairs: list[Pair] = []
    for qid, pid, text in passages:
        if len(pairs) >= n:
            break
        pairs += [Pair(qid, pid, text, question) for question in questions[qid]]
    return pairs


def by_passage(items: Sequence, pairs: Sequence[Pair]) -> Iterator[list]:
    """``items`` (one per pair) in runs of the same passage."""
    run: list = []
    for i, (item, pair) in enumerate(zip(items, pairs, strict=True)):
        if run and (pair.query_id, pair.passage_id) != (pairs[i - 1].query_id, pairs[i - 1].passage_id):
            yield run
            run = []
        run.append(item)
    if run:
        yield run


# --- FLOPs --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Shape:
    """What a T5 model's FLOPs depend on."""

    d_model: int
    d_ff: int
    heads: int
    d_kv: int
    encoder_layers: int
    decoder_layers: int
    vocab: int

    @classmethod
    def of(cls, config) -> "Shape":
        return cls(config.d_model, config.d_ff, config.num_heads, config.d_kv, config.num_layers,
                   config.num_decoder_layers, config.vocab_size)


def encoder_flops(shape: Shape, tokens: int) -> int:
    """FLOPs of the encoder over one sequence of ``tokens`` tokens."""
    d, f, a = shape.d_model, shape.d_ff, shape.heads * shape.d_kv
    per_token = 4 * d * a * 2 + 3 * d * f * 2  # q, k, v, o projections; gated-gelu feed-forward
    return shape.encoder_layers * (tokens * per_token + 2 * 2 * tokens * tokens * a)


def decoder_flops(shape: Shape, new: int, past: int, source: int, cross_kv: bool) -> int:
    """FLOPs of one decoder call on one sequence: ``new`` tokens after ``past`` cached ones, attending
    to an encoder output of ``source`` tokens; ``cross_kv``: the call computes the cross-attention keys
    and values of that output (the first call with a cache, every call without one)."""
    d, f, a = shape.d_model, shape.d_ff, shape.heads * shape.d_kv
    per_token = 4 * d * a * 2 + 2 * d * a * 2 + 3 * d * f * 2  # self q, k, v, o; cross q, o; feed-forward
    attention = 2 * 2 * new * (past + new) * a + 2 * 2 * new * source * a
    cross = source * 2 * d * a * 2 if cross_kv else 0
    return shape.decoder_layers * (new * per_token + attention + cross) + new * d * shape.vocab * 2


def greedy_flops(shape: Shape, tokens: int, steps: int) -> int:
    """FLOPs of grading one sequence of ``tokens`` tokens: its encoder pass and ``steps`` greedy decoder steps."""
    return encoder_flops(shape, tokens) + sum(decoder_flops(shape, 1, t, tokens, t == 0) for t in range(steps))


class FlopMeter:
    """Counts the FLOPs a T5 model executes, from the calls of its encoder and decoder (forward pre-hooks)."""

    def __init__(self, model) -> None:
        self.shape = Shape.of(model.config)
        self.flops = 0
        self._hooks = [model.get_encoder().register_forward_pre_hook(self._encoder, with_kwargs=True),
                       model.get_decoder().register_forward_pre_hook(self._decoder, with_kwargs=True)]

    def _encoder(self, _module, args, kwargs) -> None:
        batch, tokens = _inputs(args, kwargs).shape[:2]
        self.flops += batch * encoder_flops(self.shape, tokens)

    def _decoder(self, _module, args, kwargs) -> None:
        batch, new = _inputs(args, kwargs).shape[:2]
        source = kwargs["encoder_hidden_states"].shape[1]
        cache = kwargs.get("cache", kwargs.get("past_key_values"))  # transformers 5.24 renamed it
        past = getattr(cache, "self_attention_cache", cache).get_seq_length() if cache is not None else 0
        cross_kv = not getattr(cache, "is_updated", {}).get(0, False)  # T5Attention's own test
        self.flops += batch * decoder_flops(self.shape, new, past, source, cross_kv)

    def close(self) -> None:
        for hook in self._hooks:
            hook.remove()


def _inputs(args, kwargs) -> torch.Tensor:
    for name in ("input_ids", "inputs_embeds"):
        if kwargs.get(name) is not None:
            return kwargs[name]
    return args[0]


# --- the device ---------------------------------------------------------------------------------

def peak_flops(device: torch.device, dtype: torch.dtype) -> tuple[float, str]:
    """The device's peak FLOP/s in ``dtype`` and where the figure comes from."""
    kind = str(dtype).removeprefix("torch.")
    if device.type == "cuda":
        name = torch.cuda.get_device_name(device)
        for key, peak in BF16_PEAKS if dtype == torch.bfloat16 else ():
            if key in name:
                return peak, f"{name}, dense bf16 from the data sheet"
        return _matmul_peak(device, dtype, 8192), f"{name}, measured {kind} 8192² matrix products"
    return (_matmul_peak(device, dtype, 2048),
            f"CPU, measured {kind} 2048² matrix products, {torch.get_num_threads()} threads")


def _matmul_peak(device: torch.device, dtype: torch.dtype, size: int, runs: int = 5) -> float:
    a = torch.randn(size, size, device=device, dtype=dtype)
    b = torch.randn(size, size, device=device, dtype=dtype)
    a @ b  # warm-up
    best = float("inf")
    for _ in range(runs):
        _sync(device)
        start = time.perf_counter()
        a @ b
        _sync(device)
        best = min(best, time.perf_counter() - start)
    return 2 * size**3 / best


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class Measured:
    """Wall time, cores kept busy (process CPU time / wall time: below the thread count when other work
    took the CPU) and peak memory of the block; enter it after loading and warming up. Peak memory: the
    resident set size on CPU (its high-water mark reset on entry where Linux allows it), allocated
    device memory on CUDA."""

    def __init__(self, device: torch.device) -> None:
        self.device = device

    def __enter__(self) -> "Measured":
        gc.collect()
        _sync(self.device)
        if self.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(self.device)
            self.memory = {"kind": "CUDA allocated", "loaded": torch.cuda.memory_allocated(self.device)}
        else:
            try:  # "5" resets the peak resident set size to the current one
                Path("/proc/self/clear_refs").write_text("5")
                since = "grading"
            except OSError:
                since = "process start"
            self.memory = {"kind": f"RSS peak since {since}", "loaded": _memory("VmRSS")}
        self._wall, self._cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc) -> None:
        _sync(self.device)
        self.seconds = time.perf_counter() - self._wall
        self.cores = (time.process_time() - self._cpu) / self.seconds
        if self.device.type == "cuda":
            self.memory["peak"] = torch.cuda.max_memory_allocated(self.device)
        else:
            self.memory["peak"] = _memory("VmHWM")

    def summary(self) -> dict:
        return {"seconds": self.seconds, "cores": self.cores, "memory": self.memory}


def _memory(field: str) -> int:
    """Bytes of this process's resident set (``VmRSS``) or its high-water mark (``VmHWM``) from /proc.
    Not getrusage's ru_maxrss: on Linux it keeps the peak of the process that spawned this one.
    Without /proc: ru_maxrss, the process's whole peak."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) * 1024  # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (1 if sys.platform == "darwin" else 1024)


# --- the two ways (each in a worker process) ----------------------------------------------------

def reference_call(model, tokenizer, device: torch.device) -> tuple[str, Callable[[list[str]], list[str]]]:
    """What runs for (a), and the call the workbench makes per passage: its prompts in, texts out."""
    from transformers.pipelines import SUPPORTED_TASKS

    if "text2text-generation" in SUPPORTED_TASKS:
        pipe = transformers.pipeline("text2text-generation", model=model, tokenizer=tokenizer, device=device,
                                     batch_size=1)
        return ("text2text-generation pipeline",
                lambda prompts: [r["generated_text"] for r in pipe(prompts, **REFERENCE_OPTIONS)])

    def steps(prompts: list[str]) -> list[str]:
        texts = []
        for prompt in prompts:  # what the pipeline does at batch size 1
            inputs = tokenizer(prompt, return_tensors="pt").to(device)
            with torch.no_grad():
                output = model.generate(**inputs, **REFERENCE_OPTIONS)
            texts.append(tokenizer.decode(output[0], skip_special_tokens=True))
        return texts

    return f"pipeline steps (transformers {transformers.__version__} has no text2text-generation)", steps


def run_reference(model_dir: Path, pairs: list[Pair], device: torch.device) -> dict:
    from transformers import AutoTokenizer, T5ForConditionalGeneration

    model = T5ForConditionalGeneration.from_pretrained(model_dir, dtype=torch.float32).to(device).eval()
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    fitter = HFBackend("reference", tokenizer, model, device, batch_size=1)  # exampp's prompt, fitted to 512 tokens
    prompts = [fitter.fit(SELF_RATING, context=p.passage, question=p.question.text) for p in pairs]
    what, call = reference_call(model, tokenizer, device)
    call(prompts[:1])  # warm-up
    meter = FlopMeter(model)
    with Measured(device) as measured:
        texts = [text for passage in by_passage(prompts, pairs) for text in call(passage)]
    return {"what": what, **measured.summary(), "executed_flops": meter.flops,
            "grades": [parse_self_rating(t) for t in texts]}


def run_exampp(model_dir: Path, pairs: list[Pair], device: torch.device, dtype: str, compile: bool = False,
               max_batch_tokens: int | None = None) -> dict:
    from exampp.grading.registry import make_grader
    from exampp.grading.runner import Exam, grade_pool
    from exampp.pool import Pool
    from exampp.stores.grade_store import GradeStore

    passages: dict[str, dict[str, str]] = {}
    questions: dict[str, dict[str, Question]] = {}
    for p in pairs:
        passages.setdefault(p.query_id, {})[p.passage_id] = p.passage
        questions.setdefault(p.query_id, {})[p.question.question_id] = p.question
    pool = Pool(None, passages, {}, {})
    exam = Exam({qid: list(qs.values()) for qid, qs in questions.items()})
    with make_grader("self-rating", "hf", model=str(model_dir), device=str(device), dtype=dtype,
                     compile=compile, max_batch_tokens=max_batch_tokens) as grader, \
            tempfile.TemporaryDirectory() as tmp:
        backend = grader.backend
        grader.grade(pairs[:2])  # warm-up
        meter = FlopMeter(backend.model)
        with GradeStore(Path(tmp) / "grades.db") as store:
            with Measured(device) as measured:
                summary = grade_pool(pool, exam, grader, store, progress=False)
            graded = {(g.query_id, g.passage_id, g.question_id): g for g in store.records(grader.method.method_id)}
        if summary.graded != len(pairs):
            raise RuntimeError(f"exampp graded {summary.graded} of {len(pairs)} pairs (some texts repeat?)")
        grades = [graded[p.query_id, p.passage_id, p.question.question_id] for p in pairs]
        shape = Shape.of(backend.model.config)
        useful = 0
        for pair, grade in zip(pairs, grades):
            prompt = backend.fit(SELF_RATING, context=pair.passage, question=pair.question.text)
            # The fast path's grade is known after one step; a generated answer took its tokens and end-of-sequence.
            steps = 1 if grade.probabilities is not None else len(backend.tokenizer(grade.answer or "")["input_ids"])
            useful += greedy_flops(shape, backend.count_tokens(prompt), steps)
        batcher = backend.batcher
        kind = "int8 (dynamic quantisation)" if dtype == "int8" else str(backend.model.dtype)
        what = (f"grade_pool, self-rating fast path, {kind}{', compiled' if compile else ''}, batches of at most "
                f"{batcher.batch_size} prompts"
                + (f" and {batcher.max_tokens} padded tokens" if batcher.max_tokens else ""))
        return {"what": what, **measured.summary(), "executed_flops": meter.flops, "useful_flops": useful,
                "grades": [g.grade for g in grades], "read": sum(g.probabilities is not None for g in grades)}


def worker(args: argparse.Namespace) -> None:
    if args.threads:
        torch.set_num_threads(args.threads)
    pairs = dl19_pairs(args.data, args.pairs, args.seed)
    device = torch.device(args.device)
    if args.worker == "reference":
        result = run_reference(args.model_dir, pairs, device)
    elif args.worker == "exampp-fp32":
        result = run_exampp(args.model_dir, pairs, device, "fp32", max_batch_tokens=args.max_batch_tokens)
    else:
        result = run_exampp(args.model_dir, pairs, device, args.dtype, args.compile, args.max_batch_tokens)
    args.result.write_text(json.dumps(result), encoding="utf-8")


# --- the driver ---------------------------------------------------------------------------------

def prepare(label: str, pairs: list[Pair], data: Path, seed: int, folder: Path) -> dict:
    """Build the random model of shape ``label``, make it answer like FLAN-T5, save it to ``folder``."""
    from transformers import AutoTokenizer

    model = HFBackend(f"random-flan-t5-{label}", AutoTokenizer.from_pretrained(TOKENIZER), t5_model(**SHAPES[label]),
                      torch.device("cpu"))
    def prompts(of: list[Pair]) -> list[str]:
        return [model.fit(SELF_RATING, context=p.passage, question=p.question.text) for p in of]

    # The first question of each passage: the first-step states vary between passages far more than
    # between a passage's questions, so fitted on one passage's questions the rater would answer by passage.
    rater_pairs = dl19_pairs(data, 10 * RATER_PASSAGES, seed)[::10]
    make_rater(model, prompts(rater_pairs), model.tokenizer.convert_tokens_to_ids(list(ANSWERS)),
               sharpness=RATER_SHARPNESS)
    save_t5(model.model, folder, TOKENIZER)
    lengths = [model.count_tokens(p) for p in prompts(pairs)]
    return {"parameters": sum(p.numel() for p in model.model.parameters()), "lengths": lengths}


def run_way(way: str, folder: Path, args: argparse.Namespace, pairs: int) -> dict:
    result = folder.parent / f"{folder.name}-{way}.json"
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", way, "--model-dir", str(folder),
               "--result", str(result), "--data", str(args.data), "--pairs", str(pairs), "--seed", str(args.seed),
               "--device", args.device, "--dtype", args.dtype]
    if args.threads:
        command += ["--threads", str(args.threads)]
    if args.compile:
        command.append("--compile")
    if args.max_batch_tokens:
        command += ["--max-batch-tokens", str(args.max_batch_tokens)]
    subprocess.run(command, check=True)
    return json.loads(result.read_text(encoding="utf-8"))


def bench(label: str, n: int, args: argparse.Namespace, peak: float, tmp: Path) -> dict:
    start = time.perf_counter()
    pairs = dl19_pairs(args.data, n, args.seed)
    folder = tmp / label
    info = prepare(label, pairs, args.data, args.seed, folder)
    gc.collect()
    lengths = info["lengths"]
    shape = SHAPES[label]
    print(f"\n## FLAN-T5-{label} shape: d_model {shape['d_model']}, {shape['num_layers']}+{shape['num_layers']} "
          f"layers, {info['parameters'] / 1e6:.0f}M parameters, random weights answering like FLAN-T5; "
          f"{len(pairs)} pairs ({len(pairs) // 10} passages × 10 questions, seed {args.seed}), prompt tokens "
          f"{min(lengths)}-{max(lengths)} (mean {sum(lengths) / len(lengths):.0f}); model prepared in "
          f"{time.perf_counter() - start:.0f} s", flush=True)
    runs: dict[str, list[dict]] = {"reference": [], "exampp": []}
    if not plain_fp32(args):  # exampp's grades are compared with its own in fp32, on the same pairs
        runs["exampp-fp32"] = []
    for _ in range(args.repeat):  # alternating, so that a busy spell of the machine hits both ways alike
        for way, done in runs.items():
            done.append(run_way(way, folder, args, n))
    ref, ours, *fp32 = (min(done, key=lambda r: r["seconds"]) for done in runs.values())
    rows = [("(a) reference", ref), ("(b) exampp", ours)] + [("(c) exampp fp32", r) for r in fp32]
    width = max(len(name) for name, _ in rows)
    print(f"(a) {ref['what']}, batch 1, beam 5, fp32\n(b) {ours['what']}"
          + "".join(f"\n(c) {r['what']}" for r in fp32))
    print(f"{'way':<{width}}  {'pairs/s':>8}  {'× (a)':>6}  {'GFLOP/pair':>10}  {'GFLOP/s':>8}  {'cores':>5}  "
          f"{'peak memory':>11}  {'loaded':>9}")
    for name, r in rows:
        print(f"{name:<{width}}  {len(pairs) / r['seconds']:8.3f}  {ref['seconds'] / r['seconds']:6.2f}  "
              f"{r['executed_flops'] / len(pairs) / 1e9:10.1f}  {r['executed_flops'] / r['seconds'] / 1e9:8.1f}  "
              f"{r['cores']:5.2f}  {_mib(r['memory']['peak']):>11}  {_mib(r['memory']['loaded']):>9}")
    achieved = ours["useful_flops"] / ours["seconds"]
    mfu = achieved / peak
    agree = sum(a == b for a, b in zip(ref["grades"], ours["grades"]))
    print(f"GFLOP/pair and GFLOP/s: executed (padding, beams, repeated steps included); cores: CPU time / wall "
          f"time; memory: {ours['memory']['kind']}, loaded = before grading")
    print(f"exampp useful work: {ours['useful_flops'] / len(pairs) / 1e9:.1f} GFLOP/pair, {achieved / 1e9:.1f} GFLOP/s "
          f"= MFU {mfu:.1%} of {peak / 1e9:.0f} GFLOP/s")
    print(f"grades: exampp == reference on {agree}/{len(pairs)} pairs; exampp read {ours['read']} from first-token "
          f"logits, generated {len(pairs) - ours['read']}; grade counts "
          f"{dict(sorted(Counter(int(g) for g in ours['grades']).items()))}", flush=True)
    figures = {"baseline_pairs_per_s": round(len(pairs) / ref["seconds"], 3),
               "exampp_pairs_per_s": round(len(pairs) / ours["seconds"], 3),
               "speedup": round(ref["seconds"] / ours["seconds"], 2), "mfu": round(mfu, 4)}
    for r in fp32:
        same = sum(a == b for a, b in zip(r["grades"], ours["grades"]))
        print(f"grades: exampp ({args.dtype}{', compiled' if args.compile else ''}) == exampp fp32 on "
              f"{same}/{len(pairs)} pairs; {r['seconds'] / ours['seconds']:.2f}× its speed", flush=True)
        figures.update(fp32_agreement=round(same / len(pairs), 4), fp32_pairs_per_s=round(len(pairs) / r["seconds"], 3))
    return figures


def plain_fp32(args: argparse.Namespace) -> bool:
    """Whether exampp runs as the reference way computes: fp32, eager."""
    return (not args.compile and args.dtype != "int8"
            and resolve_dtype(args.dtype, torch.device(args.device)) == torch.float32)


def _mib(size: int) -> str:
    return f"{size / 2**20:,.0f} MiB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"FLAN-T5-base shape, {QUICK_PAIRS} pairs; ends with one JSON line")
    parser.add_argument("--shapes", default="base,large", help="comma-separated: base, large")
    parser.add_argument("--pairs", type=int, default=200, help="pairs per shape (whole passages: rounded up)")
    parser.add_argument("--large-pairs", type=int, default=100, help="pairs for the large shape")
    parser.add_argument("--seed", type=int, default=19, help="seed of the passage draw")
    parser.add_argument("--data", type=Path, default=SHARED / "data" / "dl19", help="folder of the DL19 files")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--dtype", default="auto",
                        help="exampp's dtype (auto, as exampp grade: fp32 on CPU, bf16 on GPU; or bf16, fp32, int8: "
                             "dynamic quantisation on CPU); the peak for MFU is taken in it (int8: the fp32 peak). "
                             "Other than fp32, exampp also runs in fp32 and its grades are compared")
    parser.add_argument("--compile", action="store_true", help="exampp's model torch.compile'd (compiling is timed)")
    parser.add_argument("--max-batch-tokens", type=int, default=None,
                        help="exampp's token budget per batch (default: the hf backend's, 4096 on CPU)")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each way (alternating); the fastest counts")
    parser.add_argument("--worker", choices=("reference", "exampp", "exampp-fp32"), help=argparse.SUPPRESS)
    parser.add_argument("--model-dir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    transformers.logging.set_verbosity_error()  # loading notes about T5's tied-weights flag
    transformers.logging.disable_progress_bar()
    if args.worker:
        worker(args)
        return
    tokenizer()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    peak, where = peak_flops(device, torch.float32 if args.dtype == "int8" else resolve_dtype(args.dtype, device))
    print(f"# self-rating throughput, pairs/s (higher is better); torch {torch.__version__}, transformers "
          f"{transformers.__version__}, device {args.device}, {torch.get_num_threads()} threads, load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; peak {peak / 1e9:,.0f} GFLOP/s ({where})")
    shapes = ["base"] if args.quick else args.shapes.split(",")
    counts = {"base": QUICK_PAIRS if args.quick else args.pairs, "large": args.large_pairs}
    with tempfile.TemporaryDirectory(prefix="exampp-grading-bench-") as tmp:
        results = {label: bench(label, counts[label], args, peak, Path(tmp)) for label in shapes}
    if args.quick:
        print(json.dumps(results["base"]))
    elif len(results) > 1:
        fp32 = all("fp32_agreement" in r for r in results.values())
        print("\n| shape | reference pairs/s | exampp pairs/s | speedup | exampp MFU |"
              + (" grades == exampp fp32 |\n|---|---|---|---|---|---|" if fp32 else "\n|---|---|---|---|---|"))
        for label, r in results.items():
            print(f"| FLAN-T5-{label} | {r['baseline_pairs_per_s']:.3f} | {r['exampp_pairs_per_s']:.3f} | "
                  f"{r['speedup']:.2f}× | {r['mfu']:.1%} |" + (f" {r['fp32_agreement']:.1%} |" if fp32 else ""))


if __name__ == "__main__":
    main()
