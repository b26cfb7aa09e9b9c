"""Generated responses (RAG answers) split into paragraph-sized passages, graded like retrieved ones.

Responses are read by :mod:`exampp.formats.rag_responses`. Segmentation of one response (all
sizes in words, i.e. whitespace-separated tokens):

1. split on blank lines into paragraphs; inside a paragraph, runs of whitespace become one space;
2. a paragraph longer than ``max_words`` (120) is cut at sentence ends (``.``, ``!`` or ``?``,
   optionally followed by closing quotes or brackets, then whitespace) into pieces of about
   equal size: a sentence starts a new piece when it would overflow ``max_words``, or when it
   would end further past the piece's target size (words left / pieces still needed) than it
   starts before it. A single sentence longer than ``max_words`` is first cut into equal parts;
3. a piece shorter than ``min_words`` (20), e.g. a heading, is joined to the next piece of the
   same response when the two together stay within ``max_words``, else to the previous piece
   when they do; otherwise it stays a passage of its own.

Passage ids are ``<run_id>:<query_id>:<n>:<md5>``: ``n`` is the 1-based position of the
passage in the response, ``md5`` the first 8 hex digits of the MD5 of the passage text (UTF-8).
The EXAM labels of a workspace's runs leave out the grades of such ids (:func:`is_segment_id`),
so that answers graded into the same store never enter the runs' qrels.
Ids depend only on the response itself: adding runs or queries changes none, and editing a
response changes the ids of exactly the passages whose text or position changed. Grades are
filed by text, so only passages with new text are graded again. Each response becomes a ranking
of its passages in order (scores n_passages .. 1), so responses pool, grade and score like
retrieved runs.
"""
from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from exampp.collection.corpus import MemoryCorpus
from exampp.collection.runs import RankedDoc, Run
from exampp.files.io import PathLike
from exampp.formats.rag_responses import Response, read_responses

MAX_WORDS = 120
MIN_WORDS = 20

_PARAGRAPH_BREAK = re.compile(r"\n[ \t\f\v\r]*\n")
_SENTENCE = re.compile(r"""\S.*?(?:[.!?]["'”’)\]]*(?=\s|$)|$)""")


@dataclass(frozen=True)
class Segmented:
    """Passages of responses as a corpus, and one run per response run id."""

    corpus: MemoryCorpus
    runs: dict[str, Run]


def _words(text: str) -> int:
    return len(text.split())


def _split_long(paragraph: str, max_words: int) -> list[str]:
    """Cut a paragraph into pieces of about equal size (at most ``max_words``) at sentence ends."""
    total = _words(paragraph)
    if total <= max_words:
        return [paragraph]
    sentences: list[str] = []
    for sentence in _SENTENCE.findall(paragraph):
        words = sentence.split()
        parts = math.ceil(len(words) / max_words)
        bounds = [round(i * len(words) / parts) for i in range(parts + 1)]
        sentences.extend(" ".join(words[a:b]) for a, b in zip(bounds, bounds[1:]))
    pieces: list[str] = []
    current: list[str] = []
    size, remaining, target = 0, total, 0.0
    for sentence in sentences:
        n = _words(sentence)
        # Close the piece where the sentence would overflow it, or would end past the target
        # size by more than it starts before it.
        if current and (size + n > max_words or size + n / 2 > target):
            pieces.append(" ".join(current))
            remaining -= size
            current, size = [], 0
        if not current:  # even sizes for what is left, so no tiny remainder at the end
            target = remaining / math.ceil(remaining / max_words)
        current.append(sentence)
        size += n
    pieces.append(" ".join(current))
    return pieces


def _merge_tiny(pieces: list[str], min_words: int, max_words: int) -> list[str]:
    merged = list(pieces)

    def fits(i: int) -> bool:  # can pieces i and i + 1 be one passage?
        return _words(merged[i]) + _words(merged[i + 1]) <= max_words

    i = 0
    while i < len(merged):
        if _words(merged[i]) < min_words:
            if i + 1 < len(merged) and fits(i):
                merged[i:i + 2] = [f"{merged[i]} {merged[i + 1]}"]
                continue  # the joined piece may still be tiny
            if i > 0 and fits(i - 1):
                merged[i - 1:i + 1] = [f"{merged[i - 1]} {merged[i]}"]
                continue  # index i now holds the next piece
        i += 1
    return merged


def segment_text(text: str, max_words: int = MAX_WORDS, min_words: int = MIN_WORDS) -> list[str]:
    """Paragraph-sized passages of one response, in order (see the module docstring).

    :param text: The response's text.
    :param max_words: A longer paragraph is cut at sentence ends.
    :param min_words: A shorter piece is joined to a neighbour where the two fit within ``max_words``.
    :raises ValueError: ``max_words`` < 1 or ``min_words`` < 0.
    """
    if max_words < 1 or min_words < 0:
        raise ValueError("max_words must be >= 1 and min_words >= 0")
    paragraphs = [" ".join(p.split()) for p in _PARAGRAPH_BREAK.split(text.replace("\r\n", "\n"))]
    pieces = [piece for p in paragraphs if p for piece in _split_long(p, max_words)]
    return _merge_tiny(pieces, min_words, max_words)


def segment_id(run_id: str, query_id: str, position: int, text: str) -> str:
    """``<run_id>:<query_id>:<position>:<first 8 hex digits of md5(text)>``."""
    return f"{run_id}:{query_id}:{position}:{hashlib.md5(text.encode('utf-8')).hexdigest()[:8]}"


_SEGMENT_SUFFIX = re.compile(r":[1-9][0-9]*:[0-9a-f]{8}\Z")


def is_segment_id(query_id: str, passage_id: str) -> bool:
    """Whether ``passage_id`` is the id :func:`segment_id` gives a passage of an answer to ``query_id``
    (``<run_id>:<query_id>:<n>:<md5>``): the answers' grades are told from the runs' by it."""
    suffix = _SEGMENT_SUFFIX.search(passage_id)
    return suffix is not None and passage_id[:suffix.start()].endswith(":" + query_id) \
        and len(passage_id[:suffix.start()]) > len(query_id) + 1


def segment_responses(
    responses: Iterable[Response], max_words: int = MAX_WORDS, min_words: int = MIN_WORDS
) -> Segmented:
    """Segment every response; a response without text gives an empty ranking.

    :param responses: The responses (:func:`~exampp.formats.rag_responses.read_responses`).
    :param max_words: A longer paragraph is cut, as :func:`segment_text` does.
    :param min_words: A shorter piece is joined to a neighbour, as :func:`segment_text` does.
    :returns: The passages as a corpus, and each response as a ranking of its passages, by run.
    """
    texts: dict[str, str] = {}
    rankings: dict[str, dict[str, list[RankedDoc]]] = {}
    for response in responses:
        pieces = segment_text(response.text, max_words, min_words)
        docs = []
        for n, piece in enumerate(pieces, start=1):
            pid = segment_id(response.run_id, response.query_id, n, piece)
            texts[pid] = piece
            docs.append(RankedDoc(pid, float(len(pieces) - n + 1)))
        rankings.setdefault(response.run_id, {})[response.query_id] = docs
    runs = {name: Run(name, ranking) for name, ranking in sorted(rankings.items())}
    return Segmented(MemoryCorpus(texts), runs)


def load_responses(path: PathLike, max_words: int = MAX_WORDS, min_words: int = MIN_WORDS) -> Segmented:
    """Read and segment a responses file.

    :param path: The responses file (:func:`~exampp.formats.rag_responses.read_responses`).
    :param max_words: A longer paragraph is cut, as :func:`segment_text` does.
    :param min_words: A shorter piece is joined to a neighbour, as :func:`segment_text` does.
    """

    return segment_responses(read_responses(path), max_words, min_words)
