"""Run files read one query at a time (RunFile): the same figures as the whole run in memory,
for grouped and ungrouped files, plain and gzipped, regular files and pipes."""
from __future__ import annotations

import gzip
import os
import random
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from exampp.cli import main
from exampp.collection.runs import RESTART, from_scores
from exampp.errors import InputError
from exampp.formats.trec_qrels import read_qrels
from exampp.formats.trec_run import RunFile, read_run
from exampp.scoring import leaderboard
from exampp.trec_eval import evaluate, format_trec

MEASURES = ["all_trec", "nDCG@5", "P(rel=2)@3"]


def _lines(seed: int, queries: int = 12, docs: int = 30) -> tuple[list[str], str]:
    """Run lines grouped by query (with score ties and a comment) and a qrels text."""
    rng = random.Random(seed)
    run, qrels = ["# a comment line"], []
    for q in range(queries):
        qid = f"q{q:02d}"
        for d in rng.sample(range(60), docs):
            run.append(f"{qid} Q0 d{d} 0 {rng.choice([1.0, 0.5, 0.25, rng.random()])} sys{seed}")
        if q % 4:  # some run queries are not judged
            qrels += [f"{qid} 0 d{d} {rng.choice([0, 0, 1, 2, -1])}" for d in rng.sample(range(60), 20)]
    qrels.append("qx 0 d1 1")  # a judged query the run lacks (-c)
    return run, "\n".join(qrels) + "\n"


def _ungrouped(lines: list[str], seed: int) -> list[str]:
    shuffled = lines[1:]
    random.Random(seed).shuffle(shuffled)
    return lines[:1] + shuffled


def _write(path: Path, lines: list[str], gz: bool = False) -> Path:
    data = ("\n".join(lines) + "\n").encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def _blocks(run_file: RunFile, queries=None) -> list:
    return list(run_file.blocks(queries))


def test_grouped_file_streams_each_query_once(tmp_path: Path):
    lines, _ = _lines(1)
    blocks = _blocks(RunFile(_write(tmp_path / "a.run", lines)))
    memory = read_run(tmp_path / "a.run")
    assert RESTART not in blocks
    assert dict(blocks) == memory.rankings
    assert [q for q, _ in blocks] == list(memory.rankings)  # file order, each once


def test_ungrouped_file_restarts_then_gives_every_query_whole(tmp_path: Path):
    lines, _ = _lines(2)
    path = _write(tmp_path / "a.run", _ungrouped(lines, 2))
    run_file = RunFile(path)
    blocks = _blocks(run_file)
    assert blocks.count(RESTART) == 1
    after = blocks[blocks.index(RESTART) + 1:]
    assert dict(after) == read_run(path).rankings
    assert len(after) == len(dict(after))
    assert run_file.name == "sys2" and run_file.lines == read_run(path).lines


def test_only_wanted_queries_are_handed_out_and_checked_for_a_docid_twice(tmp_path: Path):
    path = _write(tmp_path / "a.run", ["q0 Q0 a 1 3 s", "q1 Q0 b 1 2 s", "q2 Q0 c 1 1 s"])
    run_file = RunFile(path)
    assert _blocks(run_file, {"q0", "q2"}) == [("q0", [("a", 3.0)]), ("q2", [("c", 1.0)])]
    assert run_file.lines == {"q0": 1, "q1": 2, "q2": 3}
    # a docid twice is looked for in the rankings handed out only (trec_eval's form_res_rels.c
    # forms the queries it evaluates); read_run hands out every query, so it refuses the file
    duplicate = _write(tmp_path / "b.run", ["q0 Q0 a 1 3 s", "q1 Q0 b 1 2 s", "q1 Q0 b 2 1 s"])
    assert _blocks(RunFile(duplicate), {"q0"}) == [("q0", [("a", 3.0)])]
    with pytest.raises(InputError, match=r"b.run:3: duplicate docid 'b' in query 'q1'"):
        read_run(duplicate)
    with pytest.raises(InputError, match=r"b.run:3: duplicate docid 'b' in query 'q1'"):
        _blocks(RunFile(duplicate), {"q1"})
    # ... also when the query's lines are apart (the file is then read again, held whole)
    apart = _write(tmp_path / "c.run", ["q1 Q0 b 1 2 s", "q0 Q0 a 1 3 s", "q1 Q0 b 2 1 s"])
    assert _blocks(RunFile(apart), {"q0"}) == [RESTART, ("q0", [("a", 3.0)])]
    with pytest.raises(InputError, match=r"c.run:3: duplicate docid 'b' in query 'q1'"):
        _blocks(RunFile(apart), {"q1"})


def test_an_empty_ranking_is_no_query(tmp_path: Path):
    (tmp_path / "qrels").write_text("q1 0 d1 1\nq2 0 d2 1\n")
    run = from_scores("r", {"q1": {"d1": 1.0}, "q2": {}})
    scores = {s.measure: s.value for s in evaluate(read_qrels(tmp_path / "qrels"), run, ["num_q", "map"])}
    assert scores == {"num_q": 1, "map": 1.0}


def test_ir_measures_in_batches_equal_one_batch(tmp_path: Path, monkeypatch):
    from exampp.trec_eval import irm

    lines, qrels_text = _lines(7)
    (tmp_path / "qrels").write_text(qrels_text)
    qrels = read_qrels(tmp_path / "qrels")
    path = _write(tmp_path / "a.run", lines)
    one = format_trec(evaluate(qrels, RunFile(path), ["nDCG@5", "AP"], per_query=True))
    board = leaderboard([RunFile(path)], qrels, ["nDCG@5", "AP"])
    monkeypatch.setattr(irm.IrBatches, "BATCH_DOCS", 7)  # a batch every query or so
    assert format_trec(evaluate(qrels, RunFile(path), ["nDCG@5", "AP"], per_query=True)) == one
    assert leaderboard([RunFile(path)], qrels, ["nDCG@5", "AP"]).equals(board)


def test_duplicate_docid_in_a_later_block_is_an_error(tmp_path: Path):
    path = _write(tmp_path / "a.run", ["q0 Q0 a 1 3 s", "q1 Q0 b 1 2 s", "q0 Q0 a 2 1 s"])
    with pytest.raises(InputError, match=r"a.run:3: duplicate docid 'a' in query 'q0'"):
        _blocks(RunFile(path))


def _pipe(tmp_path: Path, data: bytes) -> Path:
    """A FIFO fed by a thread: what a process substitution gives a program."""
    fifo = tmp_path / f"fifo{len(list(tmp_path.iterdir()))}"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "wb") as fh:
            fh.write(data)

    threading.Thread(target=feed, daemon=True).start()
    return fifo


@pytest.mark.parametrize("grouped", [True, False])
@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("pipe", [False, True])
def test_streamed_evaluation_equals_the_whole_run_in_memory(tmp_path: Path, grouped, gz, pipe):
    lines, qrels_text = _lines(3)
    (tmp_path / "qrels").write_text(qrels_text)
    qrels = read_qrels(tmp_path / "qrels")
    memory_path = _write(tmp_path / "memory.run", lines)
    expected = format_trec(evaluate(qrels, read_run(memory_path), MEASURES, per_query=True, complete=True))
    body = lines if grouped else _ungrouped(lines, 3)
    data = ("\n".join(body) + "\n").encode()
    data = gzip.compress(data) if gz else data
    if pipe:
        source = _pipe(tmp_path, data)
    else:
        source = tmp_path / "a.run"
        source.write_bytes(data)
    run_file = RunFile(source)
    got = format_trec(evaluate(qrels, run_file, MEASURES, per_query=True, complete=True))
    assert got == expected
    assert run_file.name == "sys3"


def test_streamed_leaderboard_equals_in_memory_and_excludes_by_runid(tmp_path: Path):
    files, memory = [], {}
    qrels_text = None
    for seed in (4, 5, 6):
        lines, text = _lines(seed)
        qrels_text = qrels_text or text
        path = _write(tmp_path / f"r{seed}.run", lines if seed != 5 else _ungrouped(lines, seed), gz=seed == 6)
        files.append(RunFile(path))
        memory[f"sys{seed}"] = read_run(path)
    (tmp_path / "qrels").write_text(qrels_text)
    qrels = read_qrels(tmp_path / "qrels")
    measures = ["nDCG@10", "AP", "P(rel=2)@5"]
    streamed = leaderboard(files, qrels, measures, depth=7, exclude={"sys5"})
    expected = leaderboard({k: v for k, v in memory.items() if k != "sys5"}, qrels, measures, depth=7)
    assert streamed.equals(expected)
    assert list(streamed.index) == list(expected.index) and "sys5" not in streamed.index


def test_eval_of_several_runs_labels_each_block_with_its_runid(tmp_path: Path):
    runs = tmp_path / "runs"
    runs.mkdir()
    _write(runs / "a.run", ["q1 Q0 d1 1 2 alpha", "q1 Q0 d2 2 1 alpha"])
    _write(runs / "b.run", ["q1 Q0 d2 1 2 beta"])
    (tmp_path / "qrels").write_text("q1 0 d1 1\nq1 0 d2 0\n")
    result = CliRunner().invoke(main, ["eval", "-m", "map", str(tmp_path / "qrels"), str(runs)])
    assert result.exit_code == 0, result.output
    assert result.output == ("runid                 \tall\talpha\nmap                   \tall\t1.0000\n"
                             "runid                 \tall\tbeta\nmap                   \tall\t0.0000\n")
    one = CliRunner().invoke(main, ["eval", "-m", "map", str(tmp_path / "qrels"), str(runs / "a.run")])
    assert one.output == "map                   \tall\t1.0000\n"  # one run: trec_eval's output as it is


def test_eval_reads_a_run_from_standard_input(tmp_path: Path):
    (tmp_path / "qrels").write_text("q1 0 d1 1\nq1 0 d2 0\n")
    result = CliRunner().invoke(main, ["eval", "-m", "map", "-m", "num_ret", str(tmp_path / "qrels"), "-"],
                                input="q1 Q0 d2 1 2 s\nq1 Q0 d1 2 1 s\n")
    assert result.exit_code == 0, result.output
    assert result.output == "num_ret               \tall\t2\nmap                   \tall\t0.5000\n"
    for args in ([str(tmp_path / "qrels"), "-", "-"], ["-", "-"]):  # two runs, or the qrels and a run
        twice = CliRunner().invoke(main, ["eval", *args], input="")
        assert twice.exit_code == 2
        assert twice.output.splitlines()[-1] == \
            "Error: - (standard input) is given for more than one input; it can be read only once"


def test_a_docid_twice_in_a_streamed_ranking_waits_until_the_file_is_known_grouped(tmp_path: Path):
    # q1's first lines hold d1 twice within the top 3; the file comes back to q1 with higher
    # scores, so that in q1's whole ranking the second d1 falls below the cut: no error (trec_eval)
    path = _write(tmp_path / "a.run", ["q1 Q0 d1 1 5 s", "q1 Q0 d1 2 1 s", "q2 Q0 x 1 1 s",
                                       "q1 Q0 d2 3 9 s", "q1 Q0 d3 4 8 s"])
    blocks = list(RunFile(path).blocks(None, 3))
    assert blocks[blocks.index(RESTART) + 1:] == [("q1", [("d2", 9.0), ("d3", 8.0), ("d1", 5.0)]), ("q2", [("x", 1.0)])]
    # grouped, it is the error, raised once the file is read through; nothing follows it
    grouped = _write(tmp_path / "b.run", ["q1 Q0 d1 1 5 s", "q1 Q0 d1 2 1 s", "q2 Q0 x 1 1 s"])
    handed = []
    with pytest.raises(InputError, match=r"b\.run:2: duplicate docid 'd1' in query 'q1'"):
        handed.extend(RunFile(grouped).blocks(None, 3))
    assert handed == []
    assert list(RunFile(grouped).blocks(None, 1)) == [("q1", [("d1", 5.0)]), ("q2", [("x", 1.0)])]  # cut before it
