"""A judge's reply to the AutoNuggetizer's assignment prompt is untrusted: whatever it says, the labels
read are the window's count of grades 0-2 or nothing, never an exception; and every reply the
``nuggetizer`` package itself reads (a Python list of labels, fenced or not, in any case) is read
as the package reads it, without evaluating it."""
from __future__ import annotations

import ast

import pytest
from hypothesis import example, strategies as st

from exampp.formats.nugget_assignments import ASSIGNMENTS
from exampp.grading.methods.nugget_support import parse_labels

from .checks import tries
from .strategies import any_char

label = st.sampled_from(ASSIGNMENTS).flatmap(
    lambda name: st.sampled_from([name, name.upper(), name.title(), name.capitalize()]))


def packaged(reply: str) -> list[int]:
    """What nuggetizer 0.0.5's Nuggetizer.assign makes of a reply (its own parse, verbatim)."""
    response = reply.replace("```python", "").replace("```", "").strip()
    return [ASSIGNMENTS.index(assignment.lower()) for assignment in ast.literal_eval(response)]


@pytest.mark.slow
@tries(60, labels=st.lists(label, min_size=1, max_size=12), quote=st.sampled_from(["'", '"']),
       fenced=st.booleans(), space=st.sampled_from(["", " ", "\n  "]))
def test_a_list_the_package_reads_is_read_alike(labels, quote, fenced, space):
    listed = "[" + f",{space}".join(f"{quote}{name}{quote}" for name in labels) + "]"
    reply = f"```python\n{listed}\n```" if fenced else listed
    assert parse_labels(reply, len(labels)) == packaged(reply)


@pytest.mark.slow
@tries(100, reply=st.one_of(st.text(any_char, max_size=300),
                            st.lists(st.one_of(label, st.text(any_char, max_size=8)), max_size=12).map(str)),
       count=st.integers(1, 12))
@example(reply="[" * 50_000 + "support", count=1)
@example(reply="support " * 10_000, count=10)
@example(reply="```" * 1000, count=1)
def test_any_reply_gives_the_windows_count_of_grades_or_none(reply, count):
    labels = parse_labels(reply, count)
    assert labels is None or (len(labels) == count and set(labels) <= {0, 1, 2})
