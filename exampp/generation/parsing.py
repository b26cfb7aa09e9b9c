"""Questions out of a generating LLM's answer, however it was written.

The EXAM++ generation prompt asks for ``{"questions": [...]}`` in a fenced JSON block; models
answer with that, with bare JSON, a JSON list (of strings, or of objects with a question), JSON
cut off mid-way (a token limit), numbered or bulleted lines, and prose around any of these.
:func:`parse_questions` tries, in order: every fenced block, then the first JSON value in the text
(prose after it is ignored), then the complete strings of truncated JSON, then list-like lines;
the first that yields questions wins. An empty result means the answer held none: the caller asks
again with a corrective message. :func:`remove_near_duplicates` drops questions that differ from
an earlier one only in case, punctuation or a word or two.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

_FENCE = re.compile(r"```[a-zA-Z]*\s*\n?(.*?)(?:```|\Z)", re.DOTALL)
_MARKER = re.compile(r"^\s*(?:[-*•·]|\(?\d{1,3}[.):]|\(?[a-zA-Z][.)]|Q\d{1,3}[.):]?)\s+(.*)$")
_QUESTION_KEYS = ("questions", "question_set", "items", "nuggets")
_TEXT_KEYS = ("question", "text", "nugget", "q")
_WORD = re.compile(r"\w+")


def _clean(text: str) -> str:
    """One line, outer quotes and spaces gone."""
    text = " ".join(text.split())
    while len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'`":
        text = text[1:-1].strip()
    return text


def _texts(items: Iterable[Any]) -> list[str]:
    out = []
    for item in items:
        if isinstance(item, dict):
            item = next((item[k] for k in item if isinstance(k, str) and k.lower() in _TEXT_KEYS), None)
        text = _clean(item) if isinstance(item, str) else ""
        if text:
            out.append(text)
    return out


def _from_json(value: Any) -> list[str]:
    """Questions of a parsed JSON value: a list, or an object holding one."""
    if isinstance(value, list):
        return _texts(value)
    if isinstance(value, dict):
        for key, inner in value.items():
            if isinstance(key, str) and key.lower() in _QUESTION_KEYS and isinstance(inner, list):
                return _texts(inner)
        lists = [inner for inner in value.values() if isinstance(inner, list)]
        if len(lists) == 1:  # one list under another name
            return _texts(lists[0])
    return []


def _first_json(text: str) -> list[str]:
    """The questions of the first JSON object or list in ``text`` (anything after it ignored)."""
    decoder = json.JSONDecoder()
    for match in re.finditer(r"[\[{]", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        found = _from_json(value)
        if found:
            return found
    return []


def _truncated_json(text: str) -> list[str]:
    """The complete elements (strings, or objects holding a question) of a JSON list cut off mid-way."""
    start = text.find("[")
    if start < 0 or "]" in text[start:]:
        return []
    decoder, items, at = json.JSONDecoder(), [], start + 1
    while True:
        while at < len(text) and (text[at].isspace() or text[at] == ","):
            at += 1
        try:
            item, at = decoder.raw_decode(text, at)
        except json.JSONDecodeError:  # the element cut off, or the end
            return _texts(items)
        items.append(item)


def _lines(text: str) -> list[str]:
    """Numbered or bulleted lines; else lines that end with a question mark."""
    marked = [m.group(1) for line in text.splitlines() if (m := _MARKER.match(line))]
    if marked:
        return _texts(marked)
    return _texts(line for line in text.splitlines() if line.strip().endswith("?"))


def parse_questions(text: str) -> list[str]:
    """The questions in a generating LLM's answer, in order; [] when it holds none."""
    for block in _FENCE.findall(text):
        found = _first_json(block) or _truncated_json(block) or _lines(block)
        if found:
            return found
    return _first_json(text) or _truncated_json(text) or _lines(text)


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


def remove_near_duplicates(questions: Sequence[str], threshold: float = 0.9) -> list[str]:
    """``questions`` without those whose word set has a Jaccard similarity of at least ``threshold``
    with an earlier kept one (equal word sets always: case and punctuation do not count)."""
    kept: list[str] = []
    seen: list[frozenset[str]] = []
    for question in questions:
        words = _words(question)
        if not words:
            continue
        if any(len(words & other) >= threshold * len(words | other) for other in seen):
            continue
        kept.append(question)
        seen.append(words)
    return kept
