"""Running every detector over a pool: :func:`audit_texts`, and the thresholds they use.

The thresholds were fitted on the untouched DL19 workspace (43 queries, the pool of its 36 runs
at depth 20, the generated question bank) by ``benchmarks/audit_false_positives.py``; each says
how in its comment.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from exampp.audit import duplicates
from exampp.audit.addressing import addresses_evaluator
from exampp.audit.flags import Flag, quote
from exampp.audit.injection import find_injections
from exampp.audit.leakage import containments, words
from exampp.audit.normalise import Folded, fold
from exampp.audit.stuffing import term_density


@dataclass(frozen=True)
class Thresholds:
    # Leakage: a question counts as copied at this containment of its word 3-grams. No passage of
    # DL19's pool reaches 0.7 (the highest: 0.625; of the officially relevant ones 0.600, and 0.19%
    # of these reach 0.6, 0.56% 0.5); 0.7 also catches a 12-word question with one word changed (7 of
    # its 10 3-grams left).
    leakage: float = 0.7
    # ... and a text is flagged when it holds this many such questions: one, for a bank of
    # generated questions (see NUGGET_EXAM for nuggets).
    leakage_questions: int = 1
    # Questions (nuggets) of fewer words are not checked for leakage.
    leakage_min_words: int = 4
    # Stuffing: the 99.9th percentiles of query-term density and of top-term repetition over the
    # 3,125 passages of DL19's pool (its maxima: 0.440 and 0.304); flagged beyond them by the
    # margin, and only with at least stuffing_min_hits occurrences (the pool's median of query-term
    # hits is 4, its p99 16), so that a short text made of the query's words is no stuffing.
    density_p999: float = 0.384
    repetition_p999: float = 0.247
    stuffing_margin: float = 1.5
    stuffing_min_hits: int = 8
    # ... or the query said this many times in a row (a run of query terms, in query lengths), in a
    # run of at least stuffing_min_run words. DL19's pool: at most 2.33 (a title and a first
    # sentence that both say the query), p99.9 2.0.
    stuffing_repeats: float = 3.0
    stuffing_min_run: int = 6
    # Duplicates within a ranking: a text this many times in one ranking (DL19's runs hold MS MARCO's
    # duplicate passages twice, never three times).
    duplicate_min_copies: int = 3
    # Duplicates across queries: a text pooled for this share of the queries, and at least for
    # duplicate_min_queries. On DL19 one run (UNH_exDL_bm25) ranks the same 30 off-topic passages
    # for 3 to 6 of the 43 queries (14%), all judged non-relevant; 20% leaves them out and is 3 of
    # the 11 RAG 2024 topics.
    duplicate_share: float = 0.2
    duplicate_min_queries: int = 3


DEFAULT = Thresholds()
# The detectors read a text's first WINDOW characters: their time and memory grow with what they
# read (issue 34: one 10 MB passage took two minutes and 888 MB), and a judge reads far less (FLAN-T5
# 512 tokens, about 2,500 characters; DL19's longest pooled passage has 1,400 characters, RAG 2024's
# longest answer about 11,000). :func:`long_texts` names the texts cut, for the audit to say so.
WINDOW = 50_000
# For an exam of nuggets (TREC RAG): one nugget found word for word in an honest answer is common
# (10.7% of the 487 RAG 2024 answers hold one at 0.8, 2.7% hold one of 10 words or more), three
# are not (no answer holds three at 0.8; three hold three at 0.7).
NUGGET_EXAM = replace(DEFAULT, leakage=0.8, leakage_questions=3)


def audit_texts(texts: Mapping[str, Mapping[str, str]],
                queries: Mapping[str, str],
                exam: Mapping[str, Mapping[str, str]],
                rankings: Mapping[str, Mapping[str, Sequence[str]]],
                *, thresholds: Thresholds = DEFAULT) -> list[Flag]:
    """Every flag of every detector over the pool ``texts`` (query id -> text id -> text), each
    query's text ``queries``, its ``exam`` (query id -> question id -> question or nugget) and the
    runs' ``rankings`` (run -> query id -> text ids in rank order, cut at the pool depth); sorted
    by query, text, class and run. Each text is read up to :data:`WINDOW` characters."""
    flags: list[Flag] = []
    keys: dict[str, dict[str, str]] = {}
    for query_id in sorted(texts):
        keys[query_id] = {}
        questions = {question_id: words(question) for question_id, question in exam.get(query_id, {}).items()}
        for text_id in sorted(texts[query_id]):
            whole = texts[query_id][text_id]
            text = whole[:WINDOW]
            folded = fold(text)
            text_words = words(folded)
            # a text cut to the window is the same as another only if it is as long as well
            keys[query_id][text_id] = " ".join(text_words) + (f" ({len(whole)})" if len(whole) > WINDOW else "")
            flags += injection_flags(query_id, text_id, text, folded)
            flags += leakage_flags(query_id, text_id, text_words, questions, thresholds)
            flags += stuffing_flags(query_id, text_id, text_words, queries.get(query_id, ""), thresholds)
    flags += duplicates.within_rankings(rankings, keys, thresholds.duplicate_min_copies)
    min_queries = max(thresholds.duplicate_min_queries, math.ceil(thresholds.duplicate_share * len(texts)))
    flags += duplicates.across_queries(keys, min_queries)
    return sorted(flags, key=lambda f: (f.query_id, f.text_id, f.kind, f.run or "", f.other or ""))


def long_texts(texts: Mapping[str, Mapping[str, str]]) -> list[tuple[str, str]]:
    """The (query id, text id) of the texts longer than :data:`WINDOW`, of which the detectors
    read the first :data:`WINDOW` characters only."""
    return [(query_id, text_id) for query_id in sorted(texts) for text_id in sorted(texts[query_id])
            if len(texts[query_id][text_id]) > WINDOW]


def injection_flags(query_id: str, text_id: str, text: str, folded: Folded) -> list[Flag]:
    """One flag for a text that any rule matches, quoting the first match (and counting the others);
    else for a text the classifier finds addressing an evaluator, quoting its window."""
    found = find_injections(text, folded)
    if not found:
        address = addresses_evaluator(text, folded)
        if address is None:
            return []
        evidence = (f"{quote(text[address.start:address.end])} (addresses an evaluator: p={address.probability:.2f}; "
                    f"{', '.join(sorted(address.features))})")
        return [Flag("injection", query_id, text_id, evidence, address.probability)]
    first = found[0]
    more = f"; {len(found) - 1} more match{'es' if len(found) > 2 else ''}" if len(found) > 1 else ""
    evidence = f"{quote(text[first.start:first.end])} ({first.rule.kind}, {first.rule.language}{more})"
    return [Flag("injection", query_id, text_id, evidence, 1.0)]


def leakage_flags(query_id: str, text_id: str, text_words: Sequence[str], questions: Mapping[str, Sequence[str]],
                  thresholds: Thresholds) -> list[Flag]:
    """A flag when the text holds enough of its query's questions at the leakage threshold; the
    most contained one (the smaller id of two alike) is ``other``."""
    shares = containments(text_words, questions, thresholds.leakage_min_words)
    reached = sorted(((share, question_id) for question_id, share in shares.items() if share >= thresholds.leakage),
                     key=lambda item: (-item[0], item[1]))
    if not reached or len(reached) < thresholds.leakage_questions:
        return []
    share, question_id = reached[0]
    if len(reached) == 1:
        evidence = f"question {question_id} {share:.0%} contained (word 3-grams)"
    else:
        evidence = (f"{len(reached)} questions at least {thresholds.leakage:.0%} contained (word 3-grams), "
                    f"most {question_id} {share:.0%}")
    return [Flag("leakage", query_id, text_id, evidence, share, other=question_id)]


def stuffing_flags(query_id: str, text_id: str, text_words: Sequence[str], query: str,
                   thresholds: Thresholds) -> list[Flag]:
    """A flag when query-term density or top-term repetition exceeds the collection's p99.9 by the
    margin, with enough occurrences, or when the query is said too many times in a row; the
    evidence is the largest excess."""
    counts = term_density(text_words, query)
    found = []
    if (counts.hits >= thresholds.stuffing_min_hits
            and counts.density > thresholds.density_p999 * thresholds.stuffing_margin):
        found.append((counts.density / thresholds.density_p999,
                      f"query terms {counts.density:.0%} of {counts.words} words "
                      f"(collection p99.9: {thresholds.density_p999:.0%})"))
    if (counts.top_count >= thresholds.stuffing_min_hits
            and counts.repetition > thresholds.repetition_p999 * thresholds.stuffing_margin):
        found.append((counts.repetition / thresholds.repetition_p999,
                      f"{counts.top_term!r} {counts.top_count} times in {counts.words} words ({counts.repetition:.0%}; "
                      f"collection p99.9: {thresholds.repetition_p999:.0%})"))
    if counts.run >= thresholds.stuffing_min_run and counts.repeats >= thresholds.stuffing_repeats:
        found.append((counts.repeats / thresholds.stuffing_repeats,
                      f"query terms {counts.run} words in a row ({counts.repeats:.1f} times the query; "
                      f"flagged from {thresholds.stuffing_repeats:.1f})"))
    if not found:
        return []
    strength, evidence = max(found)
    return [Flag("stuffing", query_id, text_id, evidence, strength)]
