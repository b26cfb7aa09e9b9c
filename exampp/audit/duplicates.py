"""Duplicates: one text several times in a run's ranking of a query, or pooled for many queries.

Texts are compared by their words (:func:`exampp.audit.leakage.words`: case, white space,
punctuation and the spellings of :mod:`exampp.audit.normalise` do not count). A ranking that
lists one text many times counts it many times for a judge that grades each entry; the flag
belongs to that run (``Flag.run``) and marks the later entries. Twice is not enough: MS MARCO
holds some passages twice under two ids, and honest runs rank both (164 such pairs in the
rankings of DL19's runs at depth 20, never three copies). The same id twice is flagged always. A
text pooled for many queries is flagged for each of them (no run: the pool holds it): a text
written to be retrieved and graded relevant for everything. A text without words is no
duplicate of anything.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from exampp.audit.flags import Flag


def within_rankings(rankings: Mapping[str, Mapping[str, Sequence[str]]],
                    keys: Mapping[str, Mapping[str, str]], min_copies: int) -> list[Flag]:
    """A flag for each later entry of a text that a ranking lists at least ``min_copies`` times
    (``keys``: query -> text id -> comparison key), and for each entry whose id came earlier in
    the ranking (never honest: a run file may not list a document twice)."""
    flags = []
    for run in sorted(rankings):
        for query_id in sorted(rankings[run]):
            query_keys = keys.get(query_id, {})
            entries: dict[str, list[tuple[int, str]]] = defaultdict(list)  # key -> (rank, id) of its entries
            for rank, text_id in enumerate(rankings[run][query_id], start=1):
                entries[query_keys.get(text_id) or f"\0{text_id}"].append((rank, text_id))  # no words: by id
            for copies in entries.values():
                first, first_id = copies[0]
                seen_ids = {first_id}
                for rank, text_id in copies[1:]:
                    if text_id in seen_ids:
                        evidence = f"listed again (rank {first}) at rank {rank}"
                    elif len(copies) >= min_copies:
                        evidence = f"same text as {first_id} (rank {first}) at rank {rank}, {len(copies)} copies"
                    else:
                        seen_ids.add(text_id)
                        continue
                    seen_ids.add(text_id)
                    flags.append(Flag("duplicate", query_id, text_id, evidence, float(len(copies)),
                                      run=run, other=first_id))
    return flags


def across_queries(keys: Mapping[str, Mapping[str, str]], min_queries: int) -> list[Flag]:
    """A flag for each (query, text id) whose text is pooled for at least ``min_queries`` queries;
    ``other`` is the id it has for the first of the other queries."""
    holders: dict[str, dict[str, str]] = defaultdict(dict)  # key -> query -> first text id (sorted)
    for query_id in sorted(keys):
        for text_id in sorted(keys[query_id]):
            key = keys[query_id][text_id]
            if key:
                holders[key].setdefault(query_id, text_id)
    flags = []
    for queries in holders.values():
        if len(queries) < min_queries:
            continue
        for query_id, text_id in queries.items():
            others = [q for q in queries if q != query_id]
            shown = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
            evidence = f"same text pooled for {len(queries)} queries: also {shown}"
            flags.append(Flag("duplicate", query_id, text_id, evidence, float(len(queries)), other=queries[others[0]]))
    return flags
