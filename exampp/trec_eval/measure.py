"""The uniform shape of a trec_eval measure (``TREC_MEAS`` in trec_eval.h) and its parameters.

A measure declares how its parameters are written (``-m P.5,10``), which values it reports
for a query, how those values are averaged over queries and how they are printed. The
parameter parsing and value naming follow ``meas_init.c`` so that names come out as
trec_eval prints them (``P_5``, ``iprec_at_recall_0.10``, ``relstring_20``).
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

import numpy as np

from exampp.trec_eval.judged import JudgedRanking, Settings

Value = float | int | str

MIN_GEO_MEAN = 0.00001
"""Floor of a value entering a geometric mean (trec_eval.h)."""


class ParamKind(Enum):
    NONE = "none"  # no parameters
    LONG_CUTOFFS = "long cutoffs"  # e.g. P.5,10: one value per positive integer cutoff
    DOUBLE_CUTOFFS = "double cutoffs"  # e.g. iprec_at_recall.0,.5: one value per cutoff
    DOUBLE_PARAMS = "double params"  # e.g. utility.1,-1,0,0: one value, parameters change it
    PAIR_PARAMS = "pair params"  # e.g. ndcg.1=3,2=9: one value, name=value parameters


class Averaging(Enum):
    MEAN = "mean"  # te_calc_avg_meas_s / _a_cut
    GEOMETRIC = "geometric"  # per-query values are logs; summary is exp(mean)
    SUM = "sum"  # counts: summary is the total
    QRELS_SUM = "qrels sum"  # num_rel: the total, or with -c the judgments above 0 in the whole qrels
    NUM_Q = "num_q"  # number of queries evaluated
    RUN_NAME = "run name"  # runid: the summary is the run's name
    NONE = "none"  # no summary value (relstring)


@dataclass(frozen=True)
class Params:
    """A measure's parameters: parsed values and the text they were given as (None = defaults)."""

    values: tuple
    printable: str | None = None


Calc = Callable[[JudgedRanking, Params, Settings], Sequence[Value]]


@dataclass(frozen=True)
class Measure:
    """One trec_eval measure (a family of values when it has cutoffs)."""

    name: str
    calc: Calc  # per-query values, one per name from value_names()
    param_kind: ParamKind = ParamKind.NONE
    defaults: tuple = ()
    averaging: Averaging = Averaging.MEAN
    fmt: str = "%6.4f"  # printf conversion of a value, as trec_eval prints it
    per_query: bool = True  # printed for each query under -q
    summary: bool = True  # printed on the 'all' lines
    num_params: int | None = None  # exact number of parameters required (utility's 4 coefficients)
    reads_ranking: bool = True  # calls form_res_rels, which refuses a docid twice in the kept ranking

    def params(self, text: str | None) -> Params:
        """Parse ``text`` (what follows the '.' in ``-m name.text``), or the defaults when None."""
        if text is None or self.param_kind is ParamKind.NONE:  # trec_eval ignores stray parameters
            return Params(self.defaults)
        values = _PARSERS[self.param_kind](self.name, text)
        if self.num_params is not None and len(values) != self.num_params:
            raise ValueError(f"measure {self.name} needs {self.num_params} parameters, got '{text}'")
        return Params(values, text)

    def value_names(self, params: Params) -> list[str]:
        """The names trec_eval prints this measure's values under (P_5, ndcg_1=3,2=9, map)."""
        if self.param_kind is ParamKind.LONG_CUTOFFS:
            return [f"{self.name}_{c}" for c in params.values]
        if self.param_kind is ParamKind.DOUBLE_CUTOFFS:
            # snprintf into strlen(name) + 10 bytes: a wide cutoff's name is cut where trec_eval cuts it
            return [f"{self.name}_{c:3.2f}"[: len(self.name) + 9] for c in params.values]
        if params.printable is not None:
            return [f"{self.name}_{params.printable}"]
        return [self.name]


def _long_cutoffs(name: str, text: str) -> tuple:
    cutoffs = sorted(atol(part) for part in text.split(","))
    if cutoffs[0] <= 0:
        raise ValueError(f"measure {name}: cutoffs must be positive, got '{text}'")
    if len(set(cutoffs)) != len(cutoffs):
        raise ValueError(f"measure {name}: duplicate cutoffs in '{text}'")
    return tuple(cutoffs)


def _double_cutoffs(name: str, text: str) -> tuple:
    cutoffs = sorted(_doubles(name, text))
    if len(set(cutoffs)) != len(cutoffs):
        raise ValueError(f"measure {name}: duplicate cutoffs in '{text}'")
    return tuple(cutoffs)


def _doubles(name: str, text: str) -> tuple:
    values = tuple(atof(part) for part in text.split(","))
    if not all(math.isfinite(v) for v in values):
        raise ValueError(f"measure {name}: parameters must be finite, got '{text}'")
    return values


def _pairs(name: str, text: str) -> tuple:
    """``name=value,...`` checked as get_param_pairs (meas_init.c) checks it: no empty item, one
    '=' per item; a name may be empty and a value is read as atof reads it."""
    items = text.split(",")
    if any(item.count("=") != 1 for item in items):
        raise ValueError(f"measure {name}: malformed pair parameters in '{text}' (expected name=value,...)")
    pairs = tuple((key, atof(value)) for key, _, value in (item.partition("=") for item in items))
    if not all(math.isfinite(v) for _, v in pairs):
        raise ValueError(f"measure {name}: parameters must be finite, got '{text}'")
    return pairs


_SPACE = " \t\n\v\f\r"
_LONG = re.compile(r"[+-]?[0-9]+")
_DOUBLE = re.compile(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                     r"|(?:inf(?:inity)?|nan(?:\([0-9A-Za-z_]*\))?))", re.IGNORECASE)
_HEX = re.compile(r"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?")


def atol(text: str) -> int:
    """C's ``atol``: the integer the text starts with (after white space), else 0."""
    match = _LONG.match(text.lstrip(_SPACE))
    return max(-(2**63), min(2**63 - 1, int(match.group()))) if match else 0


def atof(text: str) -> float:
    """C's ``atof``: the number the text starts with (decimal, hex, inf or nan), else 0.0."""
    text = text.lstrip(_SPACE)
    hexadecimal = _HEX.match(text)
    if hexadecimal:
        return float.fromhex(hexadecimal.group())
    match = _DOUBLE.match(text)
    if not match:
        return 0.0
    return float(match.group().split("(")[0])  # nan(chars): the chars only pick a payload


_PARSERS: dict[ParamKind, Callable[[str, str], tuple]] = {
    ParamKind.LONG_CUTOFFS: _long_cutoffs,
    ParamKind.DOUBLE_CUTOFFS: _double_cutoffs,
    ParamKind.DOUBLE_PARAMS: _doubles,
    ParamKind.PAIR_PARAMS: _pairs,
}


def geometric_log(value: float) -> float:
    """What a geometric-mean measure stores for one query."""
    return math.log(max(value, MIN_GEO_MEAN))


C_NAN = -math.nan
"""The NaN an invalid operation (0/0, inf - inf, log of a negative) gives in C on x86: its sign bit
is set, and printf prints it as ``-nan``. Python's own ``math.nan`` is positive."""


def ratio(num: float, den: float) -> float:
    """``num / den`` as C computes it: a zero denominator gives inf, -inf or (0/0) C's negative NaN
    instead of raising.

    Only degenerate inputs reach it (e.g. ``-J`` leaving a query with no retrieved document).
    """
    if den:
        return num / den
    if num != num or num == 0:
        return num if num != num else C_NAN
    return math.copysign(math.inf, num) * math.copysign(1.0, den)


def c_int(x: float) -> int:
    """C's ``(int)`` of a double as x86-64 computes it (``cvttsd2si``): truncated toward zero, and
    INT_MIN for NaN or a value beyond int's range (so gains 2^31 apart compare as "less")."""
    return _c_cast(x, 2 ** 31)


def c_long(x: float) -> int:
    """C's ``(long)`` of a double on x86-64: truncated toward zero, LONG_MIN beyond long's range."""
    return _c_cast(x, 2 ** 63)


def _c_cast(x: float, bound: int) -> int:
    if x != x or not -bound - 1.0 < x < bound:
        return -bound
    return int(x)


def c_log2(value: float) -> float:
    """C's ``log2``: -inf at 0 and C's NaN below it, where Python's raises ValueError."""
    if value > 0 or value != value:
        return math.log2(value)
    return -math.inf if value == 0 else C_NAN


def cumulative(values: np.ndarray) -> np.ndarray:
    """out[k] = values[0] + ... + values[k - 1], summed left to right (as a Python loop adds
    them: numpy's cumsum does not reorder), out[0] = 0."""
    out = np.zeros(len(values) + 1, dtype=np.float64 if values.dtype.kind == "f" else np.int64)
    np.cumsum(values, out=out[1:])
    return out
