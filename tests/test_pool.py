"""Pooling: top-k union per query, deterministic order, contributing runs, passages without text."""
from __future__ import annotations

import pytest

from exampp.collection.corpus import MemoryCorpus
from exampp.collection.runs import from_scores
from exampp.errors import InputError
from exampp.formats.trec_run import read_run
from exampp.pool import build_pool, pool_ids

# a: d3 > d1 > d2 (q1); b: d4 > d1 > d5 (q1), d9 (q2)
RUN_A = from_scores("a", {"q1": {"d1": 2.0, "d2": 1.0, "d3": 3.0}})
RUN_B = from_scores("b", {"q1": {"d4": 9.0, "d1": 8.0, "d5": 7.0}, "q2": {"d9": 1.0}})
TEXTS = {f"d{i}": f"text {i}" for i in range(1, 10)}


def test_top_k_union_in_id_order_with_contributors():
    pool = build_pool({"a": RUN_A, "b": RUN_B}, MemoryCorpus(TEXTS), depth=2)
    assert pool.passages == {"q1": {"d1": "text 1", "d3": "text 3", "d4": "text 4"}, "q2": {"d9": "text 9"}}
    assert list(pool.passages["q1"]) == ["d1", "d3", "d4"]
    assert pool.contributors == {"q1": {"d1": ("a", "b"), "d3": ("a",), "d4": ("b",)}, "q2": {"d9": ("b",)}}
    assert len(pool) == 4 and pool.missing == {} and pool.warnings() == []


def test_order_of_runs_does_not_matter_and_depth_none_takes_all():
    forward = build_pool([RUN_A, RUN_B], MemoryCorpus(TEXTS), depth=None)
    backward = build_pool([RUN_B, RUN_A], MemoryCorpus(TEXTS), depth=None)
    assert forward == backward
    assert list(forward.passages["q1"]) == ["d1", "d2", "d3", "d4", "d5"]


def test_query_restriction():
    assert list(pool_ids([RUN_A, RUN_B], 20, query_ids=["q2"])) == ["q2"]


def test_missing_text_is_reported_and_skipped():
    texts = {k: v for k, v in TEXTS.items() if k not in ("d4", "d9")}
    pool = build_pool([RUN_A, RUN_B], MemoryCorpus(texts), depth=2)
    assert pool.passages == {"q1": {"d1": "text 1", "d3": "text 3"}}
    assert pool.missing == {"q1": ["d4"], "q2": ["d9"]}
    assert pool.missing_count == 2
    assert pool.warnings() == ["warning: 2 pooled passages have no text in the corpus and are skipped: q1:d4, q2:d9"]


def test_warning_names_five_ids_then_counts():
    run = from_scores("r", {"q": {f"x{i}": float(i) for i in range(8)}})
    pool = build_pool([run], MemoryCorpus({}), depth=None)
    assert pool.warnings() == ["warning: 8 pooled passages have no text in the corpus and are skipped: "
                               "q:x0, q:x1, q:x2, q:x3, q:x4 and 3 more"]


def test_strict_names_the_run_file_and_line(write):
    path = write("r.run", "q1 Q0 d1 1 2 r\nq2 Q0 d2 1 5 r\nq2 Q0 gone 2 3 r\n")
    run = read_run(path)
    with pytest.raises(InputError) as err:
        build_pool([run], MemoryCorpus({"d1": "t", "d2": "u"}), strict=True)
    assert str(err.value) == (f"{path}:2: passage 'gone' of query 'q2' is not in the corpus "
                              "(1 pooled passages lack text)")


def test_several_corpora_are_asked_in_order():
    first = MemoryCorpus({"d1": "from first"})
    second = MemoryCorpus({"d1": "from second", "d3": "three"})
    pool = build_pool([RUN_A], [first, second], depth=2)
    assert pool.passages == {"q1": {"d1": "from first", "d3": "three"}}
