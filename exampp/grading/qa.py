"""Question-answering grading: the model answers the question from the passage, the answer is verified.

:class:`QAGrader` prompts a generative model with the method's QUESTION_ANSWERING prompt (greedy
decoding) and verifies the extracted answer against the question's answer key, either by
normalised string matching (:mod:`exampp.grading.verify`) or by asking the same model the
ANSWER_VERIFICATION prompt for each gold answer until one gets a yes. :class:`ExtractiveQAGrader`
extracts a span with a SQuAD2-fine-tuned extractive model (:class:`ExtractiveReader`);
its empty answer means unanswerable. Grades are 1 (correct) or 0; the extracted answer is kept.
"""
from __future__ import annotations

from collections.abc import Sequence

import torch

from exampp.grades import QA, Method
from exampp.grading.base import Grader, Judgment, Pair
from exampp.grading.parsing import is_unanswerable
from exampp.grading.prompts import ANSWER_VERIFICATION, QUESTION_ANSWERING
from exampp.grading.verify import is_correct, is_ill_formed

__all__ = ["ExtractiveQAGrader", "ExtractiveReader", "QAGrader", "STRING_VERIFIER", "VERIFIERS", "chunk_candidates",
           "llm_verify", "require_answers"]

VERIFIERS = ("string", "llm")
STRING_VERIFIER = "string@v1"  # the version of exampp.grading.verify's rules; bump it when they change
_YES, _NO = ("yes", "Yes", "YES"), ("no", "No", "NO")


def require_answers(pairs: Sequence[Pair]) -> None:
    """ValueError naming how many questions lack an answer key (the runner leaves such questions out)."""
    missing = sorted({pair.question.question_id for pair in pairs if not pair.question.answers})
    if missing:
        examples = ", ".join(missing[:3]) + (", ..." if len(missing) > 3 else "")
        raise ValueError(f"{len(missing)} question(s) have no answer key ('answers'), e.g. {examples}: "
                         "question-answering grading verifies answers against it; leave them out or "
                         "grade them with another grader")


def _answer_token_ids(tokenizer, spellings: Sequence[str]) -> list[int]:
    """Ids of the single-token spellings of a word, bare or after a space (as a next token may be)."""
    ids = set()
    for spelling in spellings:
        for text in (spelling, " " + spelling):
            encoded = tokenizer(text, add_special_tokens=False)["input_ids"]
            if len(encoded) == 1:
                ids.add(encoded[0])
    if not ids:
        raise ValueError(f"the tokenizer has no single token for {spellings[0]!r}: LLM verification needs one")
    return sorted(ids)


def llm_verify(model, pairs: Sequence[Pair], answers: Sequence[str]) -> list[bool]:
    """Per pair: does the model call its answer an equally correct response for one of the gold answers?

    The model is asked ANSWER_VERIFICATION for gold answers in order until it says yes. Its yes/no
    is read from the first generated token: yes when the summed probability of the "yes" tokens
    exceeds that of the "no" tokens. Ill-formed and unanswerable answers are wrong without asking.
    """
    yes_ids = _answer_token_ids(model.tokenizer, _YES)
    no_ids = _answer_token_ids(model.tokenizer, _NO)
    correct = [False] * len(pairs)
    pending = [i for i, answer in enumerate(answers) if not (is_unanswerable(answer) or is_ill_formed(answer))]
    round_ = 0
    while pending:
        prompts = [ANSWER_VERIFICATION.render(question=pairs[i].question.text,
                                              correct_answer=pairs[i].question.answers[round_],
                                              answer=answers[i]) for i in pending]
        logprobs = model.first_token_logprobs(prompts)
        says_yes = torch.logsumexp(logprobs[:, yes_ids], dim=-1) > torch.logsumexp(logprobs[:, no_ids], dim=-1)
        for i, yes in zip(pending, says_yes.tolist()):
            correct[i] = yes
        round_ += 1
        pending = [i for i in pending if not correct[i] and round_ < len(pairs[i].question.answers)]
    return correct


class QAGrader(Grader):
    """Answer extraction with a generative model, verified by string matching or by the model itself."""

    name = QA
    requires_answers = True  # the runner leaves out questions without an answer key

    def __init__(self, model, verifier: str = "string", *, max_new_tokens: int = 32) -> None:
        if verifier not in VERIFIERS:
            raise ValueError(f"unknown verifier {verifier!r}: use one of {', '.join(VERIFIERS)}")
        self.model = model
        self.verifier = verifier
        self.max_new_tokens = max_new_tokens

    @property
    def method(self) -> Method:
        verifier = STRING_VERIFIER if self.verifier == "string" else ANSWER_VERIFICATION.prompt_id
        return Method(QA, self.model.name, f"{QUESTION_ANSWERING.prompt_id}+{verifier}")

    def extract(self, pairs: Sequence[Pair]) -> list[str]:
        """The model's answer to each pair's question from its passage (greedy decoding)."""
        prompts = [self.model.fit(QUESTION_ANSWERING, context=pair.passage, question=pair.question.text)
                   for pair in pairs]
        return [answer.strip() for answer in self.model.generate(prompts, max_new_tokens=self.max_new_tokens)]

    def grade(self, pairs: Sequence[Pair]) -> list[Judgment]:
        require_answers(pairs)
        answers = self.extract(pairs)
        if self.verifier == "llm":
            correct = llm_verify(self.model, pairs, answers)
        else:
            correct = [is_correct(answer, pair.question.answers) for pair, answer in zip(pairs, answers)]
        return [Judgment(float(ok), answer=answer) for ok, answer in zip(correct, answers)]


# --- extractive question answering (SQuAD2 style) ------------------------------------------------

EXTRACTIVE_ID = "extractive-squad2@v1"
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


class ExtractiveReader:
    """A SQuAD2-fine-tuned extractive model (``AutoModelForQuestionAnswering``) with its tokenizer.

    This re-implements the transformers ``question-answering`` pipeline with
    ``handle_impossible_answer=True`` (the pipeline is gone from transformers 5): long passages are
    read in overlapping chunks (:data:`MAX_SEQ_LEN` tokens, :data:`DOC_STRIDE` overlap); each chunk's
    best spans (:func:`chunk_candidates`) are widened to whole words, spans with the same text (any
    case) add up their scores, and the best text wins unless the "no answer" score (lowest over the
    chunks) is higher — then the answer is "". Questions are prefixed with the tokenizer's
    ``cls_token`` when it does not put one first itself, as sjrhuschlee/flan-t5-*-squad2 expect.
    """

    def __init__(self, name: str, tokenizer, model, device: torch.device, batch_size: int | None = None) -> None:
        from exampp.llm.batching import Batcher, auto_batch_size

        if not tokenizer.is_fast:
            raise ValueError(f"model {name!r}: extractive reading needs a fast tokenizer (character offsets)")
        self.name, self.tokenizer, self.model, self.device = name, tokenizer, model, device
        first = tokenizer("q", "c")["input_ids"][0]
        needs_cls = tokenizer.cls_token is not None and first != tokenizer.cls_token_id
        self.question_prefix = tokenizer.cls_token if needs_cls else ""
        dtype_bytes = torch.tensor([], dtype=model.dtype).element_size()
        self.batcher = Batcher(batch_size or auto_batch_size(device, model.config, MAX_SEQ_LEN,
                                                             dtype_bytes=dtype_bytes))

    @classmethod
    def load(cls, name_or_path: str, *, device: str = "auto", dtype: str = "auto",
             batch_size: int | None = None) -> "ExtractiveReader":
        from transformers import AutoModelForQuestionAnswering, AutoTokenizer

        from exampp.llm.device import resolve_device
        from exampp.llm.hf import resolve_dtype
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


class ExtractiveQAGrader(Grader):
    """Span extraction with a SQuAD2-fine-tuned model (e.g. sjrhuschlee/flan-t5-large-squad2): an
    empty span means unanswerable (grade 0); any other span is verified by string matching."""

    name = QA
    requires_answers = True

    def __init__(self, model: str | ExtractiveReader, *, device: str = "auto", dtype: str = "auto",
                 batch_size: int | None = None) -> None:
        """``model``: a loaded reader, or a model name or folder to load with the other arguments."""
        self.reader = model if isinstance(model, ExtractiveReader) else ExtractiveReader.load(
            model, device=device, dtype=dtype, batch_size=batch_size)

    @property
    def method(self) -> Method:
        return Method(QA, self.reader.name, f"{EXTRACTIVE_ID}+{STRING_VERIFIER}")

    def grade(self, pairs: Sequence[Pair]) -> list[Judgment]:
        require_answers(pairs)
        answers = self.reader.extract([pair.question.text for pair in pairs], [pair.passage for pair in pairs])
        return [Judgment(float(bool(answer) and is_correct(answer, pair.question.answers)), answer=answer)
                for pair, answer in zip(pairs, answers)]
