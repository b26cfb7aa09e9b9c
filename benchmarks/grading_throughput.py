"""Self-rating throughput: the reference tool's way vs exampp's generation and fast paths, same pairs.

For each model, the same (passage, question) pairs of the example collection (top passages of
``runs/bm25.run`` × the questions of their query, spread over all queries) are graded three ways:

(a) the reference tool's way: HF ``text2text-generation`` pipeline, one prompt at a time, beam search
    with 5 beams, ``max_length=512, early_stopping=True``, fp32. transformers 5 removed that pipeline;
    there the same computation runs as the pipeline ran it (tokenise one prompt, ``model.generate``,
    decode), and the output says which ran;
(b) exampp's generation path: ``SelfRatingGrader(fast=False)``, greedy, length-sorted batches;
(c) exampp's fast path: ``SelfRatingGrader(fast=True)``, first-step logits, generation only where the
    first token is no grade.

Models have random weights, built at run time: the tests' tiny FLAN-T5 shape (d_model 64, 1+1 layers)
and FLAN-T5-base's shape (d_model 768, 12+12 layers, 12 heads, d_ff 2048, gated-gelu, vocab 32128).
Random weights would babble up to the length limit, so each is first made to answer like FLAN-T5 does
(one of "0".."5" or "no", chosen by the prompt, then end-of-sequence; ``tests/tiny_models.make_rater``):
decoding lengths are then realistic and about one pair in seven takes the fast path's fallback.

Usage (from the repository root; a full run takes a few minutes on 2 CPU cores):
    python benchmarks/grading_throughput.py [--tiny-pairs 64] [--base-pairs 32] [--models tiny,base] [--threads N]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import torch
import transformers

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # the random-model builders live with the tests

from tiny_models import FLAN_T5_BASE_SHAPE, make_rater, t5_model  # noqa: E402

from exampp.collection.corpus import read_passages  # noqa: E402
from exampp.collection.question_bank import read_question_bank  # noqa: E402
from exampp.collection.runs import read_run  # noqa: E402
from exampp.grading.base import Pair  # noqa: E402
from exampp.grading.parsing import parse_self_rating  # noqa: E402
from exampp.grading.methods.self_rating import SelfRating  # noqa: E402
from exampp.grading.prompts import SELF_RATING  # noqa: E402
from exampp.llm.backends.hf import HFBackend  # noqa: E402

TOKENIZER = Path(os.environ.get("EXAMPP_SHARED", REPO.parent / "shared")) / "models" / "t5-tokenizer"
MODELS = {"tiny": {}, "base": FLAN_T5_BASE_SHAPE}
ANSWERS = ("0", "▁1", "▁2", "▁3", "▁4", "▁5", "▁no")  # "0" is a piece of its own; "▁0" is not in the vocabulary
REFERENCE_OPTIONS = {"max_length": 512, "num_beams": 5, "early_stopping": True}


def example_pairs(n: int, depth: int = 10) -> list[Pair]:
    """``n`` pairs spread evenly over all (top-``depth`` bm25 passage, question of its query) pairs."""
    passages = read_passages(REPO / "corpus" / "passages.jsonl")
    questions = read_question_bank(REPO / "question_banks" / "questions.jsonl").by_query()
    run = read_run(REPO / "runs" / "bm25.run")
    every = [Pair(qid, doc.docid, passages[doc.docid], question)
             for qid, ranking in run.rankings.items() for doc in ranking[:depth] if doc.docid in passages
             for question in questions.get(qid, [])]
    step = max(1, len(every) // n)
    return every[::step][:n]


def reference_way(model: HFBackend) -> tuple[str, Callable[[list[str]], list[str]]]:
    """What ran for (a) and a function doing it: the pipeline where transformers has it, else its steps."""
    from transformers.pipelines import SUPPORTED_TASKS

    if "text2text-generation" in SUPPORTED_TASKS:
        pipe = transformers.pipeline("text2text-generation", model=model.model, tokenizer=model.tokenizer,
                                     device=model.device)
        return ("text2text-generation pipeline",
                lambda prompts: [pipe(p, **REFERENCE_OPTIONS)[0]["generated_text"] for p in prompts])

    def one_by_one(prompts: list[str]) -> list[str]:
        texts = []
        for prompt in prompts:
            inputs = model.tokenizer(prompt, return_tensors="pt").to(model.device)
            with torch.inference_mode():
                output = model.model.generate(**inputs, **REFERENCE_OPTIONS)
            texts.append(model.tokenizer.decode(output[0], skip_special_tokens=True))
        return texts

    return f"pipeline steps by hand (transformers {transformers.__version__} has no text2text-generation)", one_by_one


def timed(fn: Callable[[], object]) -> tuple[object, float]:
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def bench(label: str, shape: dict, n: int) -> None:
    from transformers import AutoTokenizer

    model_build = time.perf_counter()
    model = HFBackend(f"random-{label}", AutoTokenizer.from_pretrained(TOKENIZER), t5_model(**shape),
                    torch.device("cpu"))
    pairs = example_pairs(n)
    prompts = [model.fit(SELF_RATING, context=pair.passage, question=pair.question.text) for pair in pairs]
    make_rater(model, prompts, model.tokenizer.convert_tokens_to_ids(list(ANSWERS)))
    lengths = [model.count_tokens(p) for p in prompts]
    print(f"\n## {label}: d_model {model.model.config.d_model}, {model.model.config.num_layers}+"
          f"{model.model.config.num_decoder_layers} layers, {sum(p.numel() for p in model.model.parameters()) / 1e6:.0f}M "
          f"parameters, fp32, batch size {model.batcher.batch_size}; {len(pairs)} pairs, prompt tokens "
          f"{min(lengths)}-{max(lengths)} (mean {sum(lengths) / len(lengths):.0f}); "
          f"prepared in {time.perf_counter() - model_build:.0f} s")
    which, reference = reference_way(model)
    generation, fast = SelfRating(fast=False).bind(model), SelfRating(fast=True).bind(model)
    for warm_up in (lambda: reference(prompts[:1]), lambda: generation.grade(pairs[:2]), lambda: fast.grade(pairs[:2])):
        warm_up()
    texts, t_ref = timed(lambda: reference(prompts))
    slow, t_gen = timed(lambda: generation.grade(pairs))
    quick, t_fast = timed(lambda: fast.grade(pairs))
    rows = [(f"(a) reference: {which}, batch 1, beam 5", t_ref),
            ("(b) exampp generation path, greedy, batched", t_gen),
            ("(c) exampp fast path (first-step logits), batched", t_fast)]
    print(f"{'method':<{max(len(r[0]) for r in rows)}}  {'pairs/s':>8}  {'× (a)':>6}")
    for name, seconds in rows:
        print(f"{name:<{max(len(r[0]) for r in rows)}}  {len(pairs) / seconds:8.2f}  {t_ref / seconds:6.1f}")
    read = sum(j.probabilities is not None for j in quick)
    reference_grades = [parse_self_rating(t) for t in texts]
    print(f"fast path read {read}/{len(pairs)} pairs from logits, generated {len(pairs) - read}; "
          f"grades (c) == (b) on {sum(a.grade == b.grade for a, b in zip(quick, slow))}/{len(pairs)} pairs, "
          f"(c) == (a) on {sum(a.grade == g for a, g in zip(quick, reference_grades))}/{len(pairs)}; "
          f"grade counts {dict(sorted(Counter(int(j.grade) for j in quick).items()))}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny-pairs", type=int, default=64)
    parser.add_argument("--base-pairs", type=int, default=32)
    parser.add_argument("--models", default="tiny,base", help="comma-separated: tiny, base")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch CPU threads (default: torch's choice); 1 is steadier on a busy machine")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"# self-rating throughput, pairs/s (higher is better); torch {torch.__version__}, transformers "
          f"{transformers.__version__}, {torch.get_num_threads()} threads, load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    counts = {"tiny": args.tiny_pairs, "base": args.base_pairs}
    for label in args.models.split(","):
        bench(label, MODELS[label], counts[label])


if __name__ == "__main__":
    main()
