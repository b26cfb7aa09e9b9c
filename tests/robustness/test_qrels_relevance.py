"""A qrels relevance against C's atol, trec_eval's reading: any text, any written label."""
from __future__ import annotations

import ctypes
import math
import tempfile
from pathlib import Path

import pytest
from hypothesis import strategies as st

from exampp.collection.qrels import MAX_GRADE
from exampp.formats.trec_qrels import atol, parse_label, read_qrels, write_qrels

from .checks import tries

try:
    _LIBC = ctypes.CDLL(None)
    _LIBC.atol.restype, _LIBC.atol.argtypes = ctypes.c_long, [ctypes.c_char_p]
except (OSError, AttributeError):
    _LIBC = None

# the characters a number is spelt with, and a few it is not
_NUMERIC = st.text(st.sampled_from("0123456789+-.eE_xX \t\u0661ab"), max_size=12)


@pytest.mark.slow
@pytest.mark.skipif(_LIBC is None, reason="no C library to load")
@tries(400, text=_NUMERIC | st.from_regex(r"\s*[+-]?[0-9]{1,25}.{0,4}", fullmatch=True).filter(lambda t: "\0" not in t))
def test_atol_is_cs_atol(text):
    assert atol(text) == _LIBC.atol(text.encode())


@pytest.mark.slow
@tries(400, text=_NUMERIC.map(str.strip).filter(bool))
def test_a_label_read_is_trec_evals_grade_but_for_its_fraction(text):
    try:
        value = parse_label(text)
    except ValueError as exc:
        assert str(exc).startswith("relevance ")
        return
    assert math.isfinite(value) and abs(value) <= MAX_GRADE and atol(text) == math.trunc(value)


@pytest.mark.slow
@tries(200, label=st.floats(-MAX_GRADE, MAX_GRADE, allow_nan=False) | st.integers(-MAX_GRADE, MAX_GRADE))
def test_a_written_label_reads_back_the_same_and_as_trec_eval_reads_it(label):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "out.qrels"
        write_qrels({"q": {"d": label}}, path)
        (written,) = path.read_text().split()[3:]
        assert read_qrels(path) == {"q": {"d": label}}
        assert atol(written) == math.trunc(label)
