"""The extractive question-answering backend (``--backend extractive``): a SQuAD2-fine-tuned span reader.

The method ``qa-extractive`` reads answers with it (the reference EXAM++ tool's
``sjrhuschlee/flan-t5-large-squad2``); its empty answer means unanswerable.
"""
from __future__ import annotations

from collections.abc import Sequence

import torch

from exampp.defaults import EXTRACTIVE_MODEL
from exampp.llm.backend import Backend, Capability, Usage
from exampp.llm.batching import Batcher, auto_batch_size

EXTRACTIVE_REMEDY = ("Give a local copy of a SQuAD2-fine-tuned model with --model PATH, "
                     "or grade offline with --grader embedding.")
# The transformers question-answering pipeline's defaults, which the reference tool ran with; it keeps
# 2·top_k + 10 candidate spans per chunk before aligning them to words.
MAX_SEQ_LEN, DOC_STRIDE, MAX_ANSWER_LEN, CANDIDATES = 384, 128, 15, 12


def chunk_candidates(start_logits: torch.Tensor, end_logits: torch.Tensor, in_context: torch.Tensor, *,
                     max_answer_len: int = MAX_ANSWER_LEN,
                     candidates: int = CANDIDATES) -> tuple[float, list[tuple[int, int, float]]]:
    """Score one chunk as the question-answering pipeline does: ``(null score, best spans)``.

    Start and end probabilities are softmaxes over the context tokens plus position 0, which stands
    for "no answer" (the ``<cls>`` token SQuAD2 models are trained with). The null score is
    p_start(0)·p_end(0); a span (s, e) with s ≤ e < s + ``max_answer_len`` inside the context scores
    p_start(s)·p_end(e). Returns up to ``candidates`` spans ``(s, e, score)``, best first.
    """
    keep = in_context.clone()
    keep[0] = True
    start = torch.softmax(start_logits.float().masked_fill(~keep, float("-inf")), dim=-1)
    end = torch.softmax(end_logits.float().masked_fill(~keep, float("-inf")), dim=-1)
    null = float(start[0] * end[0])
    span_ok = in_context.clone()
    span_ok[0] = False
    scores = torch.outer(start * span_ok, end * span_ok).triu().tril(max_answer_len - 1).flatten()
    top = torch.topk(scores, min(candidates, len(scores)))
    width = len(in_context)
    return null, [(i // width, i % width, score) for score, i in zip(top.values.tolist(), top.indices.tolist())
                  if score > 0]


class ExtractiveReader(Backend):
    """A SQuAD2-fine-tuned extractive model (``AutoModelForQuestionAnswering``) with its tokenizer.

    This re-implements the transformers ``question-answering`` pipeline with
    ``handle_impossible_answer=True`` (the pipeline is gone from transformers 5): long passages are
    read in overlapping chunks (:data:`MAX_SEQ_LEN` tokens, :data:`DOC_STRIDE` overlap); each chunk's
    best spans (:func:`chunk_candidates`) are widened to whole words, spans with the same text (any
    case) add up their scores, and the best text wins unless the "no answer" score (lowest over the
    chunks) is higher — then the answer is "". Questions are prefixed with the tokenizer's
    ``cls_token`` when it does not put one first itself, as sjrhuschlee/flan-t5-*-squad2 expect.
    """

    capabilities = frozenset({Capability.EXTRACT})

    def __init__(self, name: str, tokenizer, model, device: torch.device, batch_size: int | None = None) -> None:
        if not tokenizer.is_fast:
            raise ValueError(f"model {name!r}: extractive reading needs a fast tokenizer (character offsets)")
        self.name, self.tokenizer, self.model, self.device = name, tokenizer, model, device
        self.usage = Usage(unit="prompts")  # a local model: no request is made
        first = tokenizer("q", "c")["input_ids"][0]
        needs_cls = tokenizer.cls_token is not None and first != tokenizer.cls_token_id
        self.question_prefix = tokenizer.cls_token if needs_cls else ""
        dtype_bytes = torch.tensor([], dtype=model.dtype).element_size()
        self.batcher = Batcher(batch_size or auto_batch_size(device, model.config, MAX_SEQ_LEN,
                                                             dtype_bytes=dtype_bytes))

    @classmethod
    def open(cls, model: str | None = None, *, device: str = "auto", dtype: str = "auto",
             batch_size: int | None = None) -> "ExtractiveReader":
        return cls.load(model or EXTRACTIVE_MODEL, device=device, dtype=dtype, batch_size=batch_size)

    @classmethod
    def load(cls, name_or_path: str, *, device: str = "auto", dtype: str = "auto",
             batch_size: int | None = None) -> "ExtractiveReader":
        from transformers import AutoModelForQuestionAnswering, AutoTokenizer

        from exampp.llm.backends.hf import resolve_dtype
        from exampp.llm.device import resolve_device
        from exampp.llm.locate import locate_model

        torch_device = resolve_device(device)
        source = locate_model(name_or_path, kind="extractive question-answering model", remedy=EXTRACTIVE_REMEDY)
        with source.loading():  # also a model without a question-answering head
            tokenizer = AutoTokenizer.from_pretrained(source.name_or_path, **source.options)
            model = AutoModelForQuestionAnswering.from_pretrained(
                source.name_or_path, dtype=resolve_dtype(dtype, torch_device), **source.options)
        model.to(torch_device).eval()
        return cls(name_or_path, tokenizer, model, torch_device, batch_size)

    def extract(self, questions: Sequence[str], contexts: Sequence[str]) -> list[str]:
        """The answer span per (question, context), "" where the model finds the question unanswerable."""
        items = list(zip(questions, contexts))
        self.usage.requests += len(items)
        return self.batcher.map(self._extract_batch, items, [len(q) + len(c) for q, c in items])

    @torch.inference_mode()
    def _extract_batch(self, batch: list[tuple[str, str]]) -> list[str]:
        contexts = [c for _, c in batch]
        encoded = self.tokenizer([self.question_prefix + q for q, _ in batch], contexts,
                                 truncation="only_second", max_length=MAX_SEQ_LEN, stride=DOC_STRIDE,
                                 return_overflowing_tokens=True, return_offsets_mapping=True,
                                 padding=True, return_tensors="pt")
        output = self.model(input_ids=encoded["input_ids"].to(self.device),
                            attention_mask=encoded["attention_mask"].to(self.device))
        start_logits, end_logits = output.start_logits.cpu(), output.end_logits.cpu()
        spans: list[dict[str, list]] = [{} for _ in batch]  # per item: lower-cased text -> [score, text]
        null = [float("inf")] * len(batch)
        for chunk, item in enumerate(encoded["overflow_to_sample_mapping"].tolist()):
            in_context = torch.tensor([sid == 1 for sid in encoded.sequence_ids(chunk)])
            chunk_null, candidates = chunk_candidates(start_logits[chunk], end_logits[chunk], in_context)
            null[item] = min(null[item], chunk_null)
            for s, e, score in candidates:
                first, last = self._word_chars(encoded, chunk, s, e)
                text = contexts[item][first:last]
                spans[item].setdefault(text.lower(), [0.0, text])[0] += score
        answers = []
        for item_spans, item_null in zip(spans, null):
            # Python's max keeps the first of equal scores, and the pipeline sorts its null answer last.
            score, text = max(item_spans.values(), key=lambda entry: entry[0], default=(0.0, ""))
            answers.append("" if item_null > score else text.strip())
        return answers

    @staticmethod
    def _word_chars(encoded, chunk: int, s: int, e: int) -> tuple[int, int]:
        """Characters of the context from the word of token ``s`` to the word of token ``e``."""
        first_word, last_word = encoded.token_to_word(chunk, s), encoded.token_to_word(chunk, e)
        if first_word is None or last_word is None:  # tokenizers without words: token offsets
            offsets = encoded["offset_mapping"][chunk]
            return int(offsets[s][0]), int(offsets[e][1])
        return (encoded.word_to_chars(chunk, first_word, sequence_index=1).start,
                encoded.word_to_chars(chunk, last_word, sequence_index=1).end)


BACKEND = ExtractiveReader
