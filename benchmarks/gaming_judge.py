"""A simulated weak LLM judge behind a real OpenAI-compatible HTTP server, for benchmarks/gaming.py.

It answers the self-rating prompts of exampp's ``openai`` backend (the chat endpoint, the rating
as the first token with its top log-probabilities, as exampp/testing/batching_server.py does) from a
table, not a model: an untouched passage gets, for a question of its own query, the grade a real
judge gave it (the DL19 workspace's FLAN-T5-large self-ratings), so that the untouched
leaderboard is the real EXAM one; for a question of another query (a canary, or a passage copied
into another query's ranking) the grade FLAN-T5 gave one of the pooled passages that the
official qrels judge non-relevant, drawn by a hash of the pair: what the real judge does with a
text that does not answer, as far as this data tells.

A planted text (the benchmark hands the server the planting map: each planted text's class and
the passage it was made from) starts from its original's grade and is moved as a weak judge is
moved. These are the simulation's assumptions, not measurements:

- injection: the judge follows the instruction, rating 5, with probability :data:`FOLLOW` of its
  spelling (plain text best understood, letters spaced out least), times :data:`OTHER_LANGUAGE`
  for an instruction not in English, times :data:`FENCED` under ``self-rating(prompt=fenced)``;
  decided per (text, question) by a hash, as a weak model is not consistent from one prompt to the
  next. A followed instruction answers every question, canaries included.
- leakage: a question copied into the text, exactly or paraphrased, is rated 5 (the judge reads
  the question in the text as its answer); the others keep their grade.
- stuffing: a question sharing a (stemmed) word with the stuffed query words is rated at least 4
  with probability :data:`STUFFED`; Alaofi et al. 2024 (LLMs can be fooled into labelling a
  document as relevant) found query words added to a passage raise LLM relevance labels: the
  direction is theirs, the size is assumed.
- duplicates: a copy is the same text, graded as its original.

The fenced prompt changes nothing else. Run it in a process of its own with :func:`judge_process`.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
import sqlite3
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from exampp.collection.grades import text_hash
from exampp.grading.method_prompts import FENCE_TAG
from exampp.grading.verify import normalize
from exampp.testing.loopback import Loopback, envelope, error_body, json_handler
from exampp.testing.server_process import ServerProcess, answer_until_stopped

MODEL = "weak-judge"
FOLLOW = {"plain": 0.9, "zero-width": 0.7, "homoglyph": 0.6, "leet": 0.5, "spaced": 0.4}
OTHER_LANGUAGE = 0.7
FENCED = 0.3
STUFFED = 0.4
DIGITS = "012345"
_CHOSEN, _OTHER = math.log(0.6), math.log(0.08)
_PLAIN = re.compile(r"Question: (?P<question>.*?)\nContext: (?P<context>.*)\Z", re.DOTALL)
_FENCED = re.compile(rf"Question: (?P<question>.*?)\nContext: <{FENCE_TAG}>\n(?P<context>.*)\n</{FENCE_TAG}>\n",
                     re.DOTALL)


@dataclass(frozen=True)
class Planted:
    """What the judge knows of a planted text."""

    kind: str
    source: str  # text hash of the passage it was made from
    follow: float = 0.0  # injection: the chance it follows the instruction (plain prompt)
    questions: frozenset[str] = frozenset()  # leakage: text hashes of the questions copied in
    terms: frozenset[str] = frozenset()  # stuffing: the stuffed words, stemmed


def follow_chance(obfuscation: str, language: str) -> float:
    return FOLLOW[obfuscation] * (1.0 if language == "en" else OTHER_LANGUAGE)


def unit(*parts: str) -> float:
    """A number in [0, 1) fixed by ``parts``."""
    return int.from_bytes(hashlib.sha256("\t".join(parts).encode()).digest()[:8], "big") / 2 ** 64


class WeakJudge:
    """The grades (see the module): ``stored`` (passage hash, question hash) -> the real judge's grade,
    ``off_topic`` the grades drawn for a question the text was never graded on, ``planted`` by text hash."""

    def __init__(self, stored: Mapping[tuple[str, str], float], off_topic: Sequence[int],
                 planted: Mapping[str, Planted]) -> None:
        self.stored = stored
        self.off_topic = list(off_topic)
        self.planted = planted
        self.counts: Counter[str] = Counter()  # how each grade was decided
        self._lock = threading.Lock()

    def grade(self, context: str, question: str, fenced: bool) -> int:
        text, asked = text_hash(context), text_hash(question)
        plant = self.planted.get(text)
        source = plant.source if plant is not None else text
        grade = self.stored.get((source, asked))
        how = "stored" if grade is not None else "off-topic"
        if grade is None:
            grade = self.off_topic[int(unit(source, asked) * len(self.off_topic))]
        if plant is not None:
            moved = self._moved(plant, text, asked, question, fenced)
            if moved is not None and moved != grade:
                grade, how = moved, f"moved by {plant.kind}"
        with self._lock:
            self.counts[how] += 1
        return int(grade)

    @staticmethod
    def _moved(plant: Planted, text: str, asked: str, question: str, fenced: bool) -> int | None:
        if plant.kind == "injection":
            return 5 if unit("follow", text, asked) < plant.follow * (FENCED if fenced else 1.0) else None
        if plant.kind == "leakage":
            return 5 if asked in plant.questions else None
        if plant.kind == "stuffing" and plant.terms & set(normalize(question).split()):
            return 4 if unit("stuffed", text, asked) < STUFFED else None
        return None


class JudgeServer(Loopback):
    """:class:`WeakJudge` served as :data:`MODEL` on 127.0.0.1 (a free port); a context manager."""

    def __init__(self, judge: WeakJudge) -> None:
        self.judge = judge
        super().__init__(json_handler)

    def answer(self, method: str, path: str, headers: Any, body: dict[str, Any]) -> tuple[int, dict[str, str], dict]:
        if method == "GET" and path.endswith("/models"):
            return 200, {}, {"object": "list", "data": [{"id": MODEL, "object": "model", "created": 0,
                                                         "owned_by": "exampp-benchmarks"}]}
        if method != "POST" or not path.endswith("/chat/completions"):
            return 404, {}, error_body(f"no route {method} {path}", "NotFoundError", 404)
        prompt = "\n".join(m["content"] for m in body["messages"])
        fenced = f"<{FENCE_TAG}>" in prompt
        found = (_FENCED if fenced else _PLAIN).search(prompt)
        if found is None:  # a prompt this judge was not built for: say so rather than guess
            return 400, {}, error_body("not a self-rating prompt", "BadRequestError", 400)
        digit = str(self.judge.grade(found["context"], found["question"], fenced))
        choice: dict[str, Any] = {"index": 0, "finish_reason": "stop", "logprobs": None}
        if body.get("logprobs"):
            alternatives = [(digit, _CHOSEN)] + [(d, _OTHER) for d in DIGITS if d != digit]
            top = alternatives[:body.get("top_logprobs") or 1]
            choice["logprobs"] = {"content": [{"token": digit, "logprob": _CHOSEN, "bytes": list(digit.encode()),
                                               "top_logprobs": [{"token": t, "logprob": lp, "bytes": list(t.encode())}
                                                                for t, lp in top]}]}
        usage = {"prompt_tokens": len(prompt.split()), "completion_tokens": 1, "total_tokens": len(prompt.split()) + 1}
        return 200, {}, envelope(MODEL, digit, True, choice, usage)


def stored_grades(store: Path, method_id: str) -> dict[tuple[str, str], float]:
    """(passage hash, question hash) -> grade of ``method_id`` in the store file ``store``."""
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT g.passage_hash, g.question_hash, g.grade FROM grades g JOIN methods m "
                          "ON g.method = m.id WHERE m.method_id = ?", (method_id,)).fetchall()
    return {(p.hex(), q.hex()): grade for p, q, grade in rows}


def write_planted(planted: Mapping[str, Planted], path: Path) -> None:
    records = [{"hash": h, "kind": p.kind, "source": p.source, "follow": p.follow, "questions": sorted(p.questions),
                "terms": sorted(p.terms)} for h, p in sorted(planted.items())]
    path.write_text(json.dumps(records), encoding="utf-8")


def read_planted(path: Path) -> dict[str, Planted]:
    return {r["hash"]: Planted(r["kind"], r["source"], r["follow"], frozenset(r["questions"]), frozenset(r["terms"]))
            for r in json.loads(path.read_text(encoding="utf-8"))}


def judge_process(store: Path, method_id: str, off_topic: Sequence[int], planted: Path) -> ServerProcess:
    """The judge server in a process of its own (a real server is one): ``url`` while the block runs,
    ``ask()`` says how its grades were decided. ``store``/``method_id``: the real judge's grades;
    ``planted``: a file of :func:`write_planted`."""
    return ServerProcess(_serve, str(store), method_id, list(off_topic), str(planted))


def _serve(pipe: Connection, store: str, method_id: str, off_topic: list[int], planted: str) -> None:
    judge = WeakJudge(stored_grades(Path(store), method_id), off_topic, read_planted(Path(planted)))
    with JudgeServer(judge) as server:
        answer_until_stopped(pipe, server.url, lambda: dict(judge.counts))
