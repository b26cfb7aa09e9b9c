"""Run files read a piece at a time by the fast reader (regular, not gzipped files: one
``str.split`` of the piece) against the plain line-by-line reader (which gzipped files take): the
same rankings, names and first lines, and the same errors at the same lines; pieces the fast
reader cannot vouch for go the plain way."""
from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from exampp.errors import InputError
from exampp.formats import trec_run
from exampp.formats.trec_run import RunFile, _fast_lines, read_run

TRICKY = [
    "q1 Q0 d1 1 2.5 sysA",
    "q1\tQ0\td2\t2\t2.5\tsysA",  # tabs; a score tie: docid descending decides
    "  q1  Q0   d3 3 1e3 sysA   ",  # leading, repeated and trailing blanks
    "q1 Q0 d4 4 -0.0 sysA extra columns are ignored",
    "q1 Q0 NA 5 10 sysA",  # NA stays a docid
    "q1 Q0 \"quoted\" 6 +.5 sysA",
    "q2 Q0 a,b 1 inf sysA",
    "q2 Q0 nan 2 -inf sysA",
    "q2 Q0 1e5 3 0 sysA",
    "",
    "# a comment",
    "q3 Q0 x 1 0.30000000000000004 sysA",
    "q3 Q0 y 1 0.3 sysA",
    "q1 Q0 late 9 7 sysA",  # q1 again: not grouped
]


def _pair(tmp_path: Path, lines: list[str], name: str = "r") -> tuple[Path, Path]:
    data = ("\n".join(lines) + "\n").encode()
    plain, gz = tmp_path / f"{name}.run", tmp_path / f"{name}.run.gz"
    plain.write_bytes(data)
    gz.write_bytes(gzip.compress(data))
    return plain, gz


@pytest.mark.parametrize("chunk", [1 << 22, 40, 1])
@pytest.mark.parametrize("lines", [TRICKY, TRICKY[:9], [line for line in TRICKY if line and line[0] != "#"]])
def test_pieces_read_as_the_plain_reader_reads(tmp_path: Path, monkeypatch, chunk, lines):
    monkeypatch.setattr(trec_run, "_CHUNK", chunk)
    plain, gz = _pair(tmp_path, lines)
    fast, slow = read_run(plain), read_run(gz)
    assert fast.rankings == slow.rankings and fast.lines == slow.lines and fast.name == slow.name == "sysA"
    streamed = RunFile(plain)
    assert [b for b in streamed.blocks() if isinstance(b, tuple)][-3:] == list(slow.rankings.items())[-3:]


def test_the_tricky_lines_mean_what_trec_eval_reads(tmp_path: Path):
    plain, _ = _pair(tmp_path, TRICKY)
    run = read_run(plain)
    assert [d for d, _ in run.rankings["q1"]] == ["d3", "NA", "late", "d2", "d1", '"quoted"', "d4"]
    assert run.rankings["q2"] == [("a,b", float("inf")), ("1e5", 0.0), ("nan", float("-inf"))]
    assert [d for d, _ in run.rankings["q3"]] == ["x", "y"]  # 0.30000000000000004 > 0.3: parsed exactly
    assert run.lines == {"q1": 1, "q2": 7, "q3": 12}


def test_fast_parser_takes_clean_pieces_only():
    clean = b"q1 Q0 d1 1 2.5 s\nq1\tQ0 d2 2 1 s\n"
    assert _fast_lines(clean, 5) == (range(5, 7), ["q1", "q1"], ["d1", "d2"], [2.5, 1.0], ["s", "s"])
    for piece in (b"# c\n" + clean, clean + b"\n", b"q1 Q0 d1 1 2.5\n", b"q1 Q0 d1 1 x s\n", b"q1 Q0 d1 1 nan s\n",
                  clean + b"q1 Q0 d3 1 2 s more\n", "q1 Q0 d\u00e9 1 2 s\n".encode(), b"q1 Q0 d1 1 2\r s\n"):
        assert _fast_lines(piece, 1) is None, piece


BAD = [
    (["q1 Q0 d1 1 1 s", "q1 Q0 d2 2 x s"], "r.run:2: score 'x' is not a number"),
    (["q1 Q0 d1 1 1 s", "q1 Q0 d2 2 nan s"], "r.run:2: score is NaN"),
    (["q1 Q0 d1 1 1 s", "q1 Q0 d2 2 1_0 s"], "r.run:2: score '1_0' is not a number"),  # float(): 10, atof: 1
    (["q1 Q0 d1 1 1 s", "q2 Q0 d1 1 1"], "r.run:2: expected 6 columns 'qid Q0 docid rank score runid', found 5"),
    # every line of a query is read before its ranking is formed and checked for a docid twice
    # (as trec_eval reads the whole file before form_res_rels.c): the bad line comes first
    (["q1 Q0 d1 1 1 s", "q1 Q0 d2 1 1 s", "q1 Q0 d1 1 1 s", "q1 Q0 d3 1 x s"], "r.run:4: score 'x' is not a number"),
    (["q1 Q0 d1 1 1 s", "q1 Q0 d2 1 1 s", "q1 Q0 d1 1 1 s", "q2 Q0 d3 1 1 s"],
     "r.run:3: duplicate docid 'd1' in query 'q1'"),
    (["q1 Q0 d1 1 1 s", "q1 Q0 d\u00a02 1 1 s"], "r.run:2: character U+00A0 at column 8"),
]


@pytest.mark.parametrize("chunk", [1 << 22, 20])
@pytest.mark.parametrize("lines, message", BAD)
def test_errors_name_the_same_line_both_ways(tmp_path: Path, monkeypatch, chunk, lines, message):
    monkeypatch.setattr(trec_run, "_CHUNK", chunk)
    plain, gz = _pair(tmp_path, lines)
    with pytest.raises(InputError) as fast:
        read_run(plain)
    with pytest.raises(InputError) as slow:
        read_run(gz)
    assert str(fast.value).startswith(str(plain.parent / message))
    assert str(slow.value).replace(".run.gz", ".run") == str(fast.value)


def test_invalid_utf8_is_named_by_line(tmp_path: Path):
    path = tmp_path / "r.run"
    path.write_bytes(b"q1 Q0 d1 1 1 s\nq1 Q0 d\xff 2 1 s\n")
    with pytest.raises(InputError, match=r"r\.run:2: not valid UTF-8 \(byte 0xff at column 8\)"):
        read_run(path)


def test_rankings_with_many_ties_are_in_trec_eval_order(tmp_path: Path):
    import random

    from exampp.collection.runs import RankedDoc, trec_order

    rng = random.Random(7)
    docs = {f"d{rng.randrange(10**6)}": rng.choice([1.0, 0.5, -0.0, 0.0, 2.0, rng.random()]) for _ in range(300)}
    path = tmp_path / "ties.run"
    path.write_text("".join(f"q Q0 {d} 0 {s!r} s\n" for d, s in docs.items()))
    assert read_run(path).rankings["q"] == trec_order(RankedDoc(d, s) for d, s in docs.items())


@pytest.mark.parametrize("depth", [None, 0, 1, 2, 3, 5, -1])
def test_read_run_depth_keeps_the_top_of_the_whole_ranking(tmp_path, depth):
    # ties across the cut: the kept documents are the whole ranking's first ones (docid descending)
    path = tmp_path / "r.run"
    path.write_text("q1 Q0 a 1 1.0 r\nq1 Q0 c 2 2.0 r\nq1 Q0 b 3 1.0 r\nq1 Q0 d 4 1.0 r\nq2 Q0 x 1 0.5 r\n")
    whole = read_run(path)
    assert read_run(path, depth=depth).rankings == {q: docs[:depth] for q, docs in whole.rankings.items()}
    assert [d.docid for d in whole.rankings["q1"]] == ["c", "d", "b", "a"]


@pytest.mark.parametrize("chunk", [1 << 22, 1])
def test_a_carriage_return_ends_no_line_on_the_way_a_plain_file_falls_back_to(tmp_path: Path, monkeypatch, chunk):
    # A piece with a bare \r goes the plain way; its lines end at \n only, as in a gzipped file or a pipe.
    monkeypatch.setattr(trec_run, "_CHUNK", chunk)
    data = b"q1 Q0 d1 0 0.0 sysA\rq1 Q0 d2 0 0.0 sysA\n"
    (tmp_path / "r.run").write_bytes(data)
    (tmp_path / "r.run.gz").write_bytes(gzip.compress(data))
    errors = []
    for path in (tmp_path / "r.run", tmp_path / "r.run.gz"):
        with pytest.raises(InputError) as caught:
            read_run(path)
        errors.append(str(caught.value).split(":", 1)[1])
    assert errors[0] == errors[1] == "1: character U+000D at column 20: a line break inside a line (lines end with \\n)"


def _random_line(rng) -> str:
    blank = lambda: rng.choice([" ", "\t", "  ", " \t "])  # noqa: E731
    cols = [rng.choice(["q1", "q2", "10", "q1"]), "Q0", rng.choice(["d1", "d2", "D9", "a,b", "NA", "1e5", "x"]),
            str(rng.randint(0, 9)),
            rng.choice(["1", "2.5", "-0.0", "1e3", "1_0", "+.5", "inf", "-inf", "0.30000000000000004", "x", "nan",
                        "1e999", "0x1p3", "٣"]),
            rng.choice(["sysA", "sysB"])]
    cols = cols[: rng.choice([6, 6, 6, 6, 5, 1])] + (["extra"] if rng.random() < 0.1 else [])
    lead = blank() if rng.random() < 0.2 else ""
    tail = blank() if rng.random() < 0.2 else ""
    return lead + blank().join(cols) + tail if rng.random() > 0.05 else rng.choice(["", "# c", " "])


@pytest.mark.parametrize("seed", range(200))
def test_the_fast_reader_reads_what_the_plain_reader_reads_or_declines(seed):
    import random

    from exampp.formats.trec_run import _columns, _run_lines

    rng = random.Random(seed)
    lines = [_random_line(rng) for _ in range(rng.randint(1, 12))]
    data = "\n".join(lines).encode() + (b"\n" if rng.random() < 0.8 else b"")
    fast = _fast_lines(data, 3)
    try:
        plain = _columns(list(_run_lines(enumerate(data.decode().split("\n")[: len(lines)], 3), "r.run")))
    except (InputError, ValueError):  # ValueError: no result line at all
        plain = None
    if fast is not None:
        assert plain is not None and tuple(map(list, fast)) == tuple(map(list, plain)), lines
    elif plain is not None and all(line.strip() and line.strip()[0] != "#" for line in lines):
        # declined although every line is a result line: only for what the fast way does not read
        assert any(len(line.split()) != 6 or not line.isascii() or "nan" in line.split()[4:5] for line in lines), lines
