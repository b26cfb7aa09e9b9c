"""Leaderboards (text, table, JSON map or records: read_leaderboard, write_leaderboard) and the
workspace configuration exampp.toml (read_config)."""
from __future__ import annotations

import math

import pandas as pd
import pytest
from hypothesis import example, strategies as st

from exampp.formats.exampp_toml import KEYS, PATH_KEYS, read_config
from exampp.formats.leaderboard import read_leaderboard, write_leaderboard

from .checks import assert_ids, can_write, encodable, parse, read_file, scratch, tries, written_or_refused
from .strategies import config_text, hostile, hostile_ids, leaderboard_text

OPTIONS = [{}, {"ranks": True}, {"column": "P@20"}, {"column": "score"}]


@pytest.mark.slow
@tries(200, options=st.sampled_from(OPTIONS), data=hostile(leaderboard_text))
@example(options={}, data=b'{"sysA": {"a": 1, "\\u001e": 2}}\n')  # the key's record separator broke the line
def test_read_leaderboard_gives_scores_or_a_located_error(options, data):
    board = read_file(lambda p: read_leaderboard(p, **options), "board", data)
    if board is not None:
        assert_ids(board)
        assert board and all(math.isfinite(score) for score in board.values())


finite = st.floats(allow_nan=False, allow_infinity=False)
measures = st.sampled_from(["nDCG@10", "P(rel=2)@20", "AP"]) | hostile_ids()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["board.tsv", "board.json", "board.json.gz"])
@tries(60, board=st.dictionaries(hostile_ids(), finite, max_size=4))
@example(board={"\ud800": 0.0})  # JSON can escape a lone surrogate; no UTF-8 run file holds that run
def test_a_written_leaderboard_reads_back_as_written_or_is_refused(name, board):
    with scratch() as folder:
        if not written_or_refused(lambda p: write_leaderboard(board, p), folder / name):
            assert not can_write(*board, first_column=board if name == "board.tsv" else ())
            return
        assert can_write(*board, first_column=board if name == "board.tsv" else ())
        back = parse(read_leaderboard, folder / name)
    assert back == (board or None)  # no runs: refused by the reader as empty


@pytest.mark.slow
@pytest.mark.parametrize("name", ["table.tsv", "table.json"])
@tries(60, runs=st.lists(hostile_ids().filter(encodable), min_size=1, max_size=3, unique=True),
       columns=st.lists(measures.filter(encodable), min_size=1, max_size=3, unique=True))
def test_a_written_table_reads_back_column_by_column_or_is_refused(name, runs, columns):
    table = pd.DataFrame([[float(i + j) for j in range(len(columns))] for i in range(len(runs))],
                         index=runs, columns=columns)
    with scratch() as folder:
        if not written_or_refused(lambda p: write_leaderboard(table, p), folder / name):
            assert not can_write(*runs, *columns, first_column=runs if name == "table.tsv" else ()) or any(
                c == "run" or _number(c) for c in columns)
            return
        for column in columns:
            back = read_leaderboard(folder / name, column=column)
            assert back == table[column].to_dict()


@pytest.mark.parametrize("name", ["t.tsv", "t.json"])
@pytest.mark.parametrize(("run", "column"), [("sysA\t0.1\nsysB", "score"), ("#sysA", "score"), ("sysA", "x\tmore"),
                                             ("sysA", "run"), ("sysA", "0.5"), ("sysA", "")])
def test_a_name_that_would_forge_a_line_column_or_header_is_refused(tmp_path, name, run, column):
    # Each was written: one run read back as two, a comment, a column too many, a run name
    # replaced by the score (JSON) or a header read as a run (text).
    table = pd.DataFrame({column: [1.0]}, index=[run])
    if name == "t.json" and run.startswith("#"):  # JSON has no comments: that one reads back
        write_leaderboard(table, tmp_path / name)
        assert read_leaderboard(tmp_path / name) == {run: 1.0}
        return
    with pytest.raises(ValueError, match="name"):
        write_leaderboard(table if column != "score" else table[column].to_dict(), tmp_path / name)
    assert not (tmp_path / name).exists()


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


@pytest.mark.slow
@tries(150, data=hostile(config_text))
@example(data=b'topics = "~nosuchuser/topics.jsonl"\n')  # expanduser's RuntimeError escaped
@example(data=b'topics = "a\\u0000b"\n')  # a path with NUL, which no file can have
def test_read_config_gives_settings_or_a_located_error(data):
    config = read_file(read_config, "exampp.toml", data)
    if config is not None:
        assert set(config.values) <= set(KEYS)
        assert not any("\0" in value for key, value in config.values.items() if key in PATH_KEYS)
