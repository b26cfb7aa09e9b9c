"""Questions out of a generating LLM's answer, however it was written.

The EXAM++ generation prompt asks for ``{"questions": [...]}`` in a fenced JSON block; models
answer with that, with bare JSON, a JSON list (of strings, or of objects with a question), JSON
cut off mid-way (a token limit), numbered or bulleted lines, and prose around any of these.
:func:`parse_questions` tries, in order: every fenced block, then the first JSON value in the text
(prose after it is ignored), then the complete strings of truncated JSON, then list-like lines;
the first that yields questions wins. An empty result means the answer held none: the caller asks
again with a corrective message. :func:`parse_nuggets` reads nuggets the same way, each with its
importance where the answer gives one (AutoNuggetizer's ``vital``/``okay``: an object's
``importance``, lists under ``vital`` and ``okay``, or a ``[vital]``/``(okay)`` mark on a line).
:func:`remove_near_duplicates` drops questions that differ from an earlier one only in case,
punctuation or a word or two.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from exampp.collection.ids import valid_text

_FENCE = re.compile(r"```[a-zA-Z]*\s*\n?(.*?)(?:```|\Z)", re.DOTALL)
_MARKER = re.compile(r"^\s*(?:[-*•·]|\(?\d{1,3}[.):]|\(?[a-zA-Z][.)]|Q\d{1,3}[.):]?)\s+(.*)$")
_QUESTION_KEYS = ("questions", "question_set", "items", "nuggets")
_TEXT_KEYS = ("question", "text", "nugget", "q", "question_text", "nugget_text")
IMPORTANCE = ("vital", "okay")  # AutoNuggetizer's labels: a nugget an answer must have, or one good to have
_IMPORTANCE_KEYS = ("importance", "label")
_MARK = re.compile(r"^[\[(](vital|okay)[\])]\s*(.*)$|^(.*?)\s*[\[(](vital|okay)[\])]$", re.IGNORECASE | re.DOTALL)
_WORD = re.compile(r"\w+")
# C0 and C1 control characters; those that are white space (tab, line breaks) become a space first
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def plain_text(text: str) -> str:
    """``text`` as one plain line: white space runs (line breaks included) one space, control
    characters gone, lone surrogates U+FFFD."""
    text = _CONTROL.sub(lambda control: " " if control.group().isspace() else "", valid_text(text))
    return " ".join(text.split())


def _clean(text: str) -> str:
    """One plain line, outer quotes and spaces gone."""
    text = plain_text(text)
    while len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'`":
        text = text[1:-1].strip()
    return text


Entry = tuple[str, str | None]  # an item's text and its importance (vital, okay) where given


def _importance(value: Any) -> str | None:
    return value.lower() if isinstance(value, str) and value.lower() in IMPORTANCE else None


def _entries(items: Iterable[Any]) -> list[Entry]:
    """Text and importance of each item: a string (perhaps marked [vital]), or an object holding them."""
    out: list[Entry] = []
    for item in items:
        importance = None
        if isinstance(item, dict):
            keys = {k.lower(): k for k in item if isinstance(k, str)}
            importance = next((_importance(item[keys[k]]) for k in _IMPORTANCE_KEYS if k in keys), None)
            item = next((item[k] for k in item if isinstance(k, str) and k.lower() in _TEXT_KEYS), None)
        if not isinstance(item, str):
            continue
        text = _clean(item)
        mark = _MARK.match(text) if importance is None else None
        if mark:
            importance = (mark.group(1) or mark.group(4)).lower()
            text = _clean(mark.group(2) if mark.group(1) else mark.group(3))
        if text:
            out.append((text, importance))
    return out


def _question_key(key: object) -> bool:
    """Whether an object's ``key`` names its list of questions ("questions", "nuggets", ...; any case)."""
    return isinstance(key, str) and key.lower() in _QUESTION_KEYS


def _from_json(value: Any) -> list[Entry]:
    """Entries of a parsed JSON value: a list, or an object holding one (or lists by importance)."""
    if isinstance(value, list):
        return _entries(value)
    if isinstance(value, dict):
        for key, inner in value.items():
            if _question_key(key) and isinstance(inner, (list, dict)):
                return _from_json(inner)
        graded = [(key.lower(), inner) for key, inner in value.items()
                  if isinstance(key, str) and key.lower() in IMPORTANCE and isinstance(inner, list)]
        if graded:  # {"vital": [...], "okay": [...]}
            return _entries({"text": item, "importance": key} if isinstance(item, str) else item
                            for key, inner in graded for item in inner)
        lists = [inner for inner in value.values() if isinstance(inner, list)]
        if len(lists) == 1:  # one list under another name
            return _entries(lists[0])
    return []


def _first_json(text: str) -> list[Entry]:
    """The entries of the first JSON object or list in ``text`` (anything after it ignored)."""
    decoder = json.JSONDecoder()
    # Where the last list of questions read ends (a list, or an object under a questions key): what is
    # nested in it ("x" of {"questions": [1, ["x"]]}) is no question. An object of another kind may wrap one.
    claimed = 0
    for match in re.finditer(r"[\[{]", text):
        if match.start() < claimed:
            continue
        try:
            value, end = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        except RecursionError:  # nested deeper than Python parses; so would be a start within it: no JSON here
            return []
        found = _from_json(value)
        if found:
            return found
        if isinstance(value, list) or any(_question_key(key) for key in value):
            claimed = end
    return []


def _truncated_json(text: str) -> list[Entry]:
    """The complete elements (strings, or objects holding a question) of a JSON list cut off mid-way."""
    start = text.find("[")
    if start < 0 or "]" in text[start:]:
        return []
    decoder, at = json.JSONDecoder(), start + 1
    items: list[Any] = []
    while True:
        while at < len(text) and (text[at].isspace() or text[at] == ","):
            at += 1
        try:
            item, at = decoder.raw_decode(text, at)
        except (json.JSONDecodeError, RecursionError):  # the element cut off, or the end (or too deep)
            return _entries(items)
        items.append(item)


def _lines(text: str) -> list[Entry]:
    """Numbered or bulleted lines; else lines that end with a question mark."""
    marked = [m.group(1) for line in text.splitlines() if (m := _MARKER.match(line))]
    if marked:
        return _entries(marked)
    return _entries(line for line in text.splitlines() if line.strip().endswith("?"))


def parse_nuggets(text: str) -> list[Entry]:
    """The items (questions or nuggets) in a generating LLM's answer, in order, each with its
    importance (``vital``, ``okay`` or None); [] when it holds none."""
    for block in _FENCE.findall(text):
        found = _first_json(block) or _truncated_json(block) or _lines(block)
        if found:
            return found
    return _first_json(text) or _truncated_json(text) or _lines(text)


def parse_questions(text: str) -> list[str]:
    """The questions in a generating LLM's answer, in order; [] when it holds none."""
    return [question for question, _ in parse_nuggets(text)]


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


def remove_near_duplicates(questions: Sequence[str], threshold: float = 0.9, *,
                           kept_before: Iterable[str] = ()) -> list[str]:
    """``questions`` without those whose word set has a Jaccard similarity of at least ``threshold``
    (above 0, at most 1) with an earlier kept one, or with one of ``kept_before`` (questions kept
    already, e.g. for the query's other subtopics); equal word sets always count: case and
    punctuation do not."""
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be above 0 and at most 1, not {threshold}")
    before = [words for words in map(_words, kept_before) if words]
    candidates = [_words(question) for question in questions]
    index = _SimilarSets(threshold, Counter(word for words in before + candidates for word in words))
    for words in before:
        index.add(words)
    kept: list[str] = []
    for question, words in zip(questions, candidates):
        if words and not index.near(words):
            kept.append(question)
            index.add(words)
    return kept


class _SimilarSets:
    """Word sets, found again by similarity without comparing each with all (prefix filtering).

    Two sets A and B with ``|A & B| >= t * |A | B|`` share at least ``ceil(t * |A|)`` words, so
    any ``|A| - ceil(t * |A|) + 1`` words of A (its *prefix*) hold one of them; when both prefixes
    are taken in one order of the words, the prefixes of A and B themselves share a word. Taking
    the rarest words first keeps the sets that share a prefix word few: only those are compared.
    """

    def __init__(self, threshold: float, frequency: Counter[str]):
        self.threshold = threshold
        self.frequency = frequency
        self.by_word: dict[str, list[frozenset[str]]] = {}

    def _prefix(self, words: frozenset[str]) -> list[str]:
        size = len(words) - int(self.threshold * len(words)) + 1  # int() rounds down: a longer prefix is safe
        return sorted(words, key=lambda word: (self.frequency[word], word))[:size]

    def near(self, words: frozenset[str]) -> bool:
        t = self.threshold
        return any(len(words & other) >= t * len(words | other)
                   for word in self._prefix(words) for other in self.by_word.get(word, ()))

    def add(self, words: frozenset[str]) -> None:
        for word in self._prefix(words):
            self.by_word.setdefault(word, []).append(words)
