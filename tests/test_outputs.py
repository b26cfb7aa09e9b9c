"""Outputs are written through what must not be replaced: `-o -` and /dev/stdout print (tested on a
private link to this process's descriptor 1, never on the system's own /dev/stdout), a device node
stays a device, a FIFO is written into, a symbolic link keeps pointing at its target, which gets
the content; a regular file is replaced only once the new content is complete, and killed writers'
temporary files go at the next write into their folder. A job with nothing to write leaves its output as it was."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import EXAMPLES
from exampp.errors import OutputError
from exampp.files.io import atomic_write, iter_lines, replace_together
from exampp.files.temps import writer_prefix

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
FAKE = TESTS / "fake_grader.py"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    ws = tmp_path_factory.mktemp("ws")
    done = subprocess.run([sys.executable, str(FAKE), "grade", str(EXAMPLES / "runs"),
                           "--config", str(EXAMPLES / "exampp.toml"),
                           "--grader", "fake", "-w", str(ws), "--no-progress"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return ws


def qrels(workspace: Path, output: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "exampp", "qrels", "-w", str(workspace), "-o", output],
                          capture_output=True, text=True)


@pytest.mark.slow
def test_dash_and_a_link_to_descriptor_1_print_and_the_link_stays(workspace: Path, tmp_path: Path):
    expected = (workspace / "qrels" / "exam.qrels").read_text()
    assert qrels(workspace, "-").stdout == expected
    for target in ("/proc/self/fd/1", "/dev/stdout"):  # a private link, as /dev/stdout is one
        link = tmp_path / "stdout"
        link.unlink(missing_ok=True)
        link.symlink_to(target)
        done = qrels(workspace, str(link))
        assert done.returncode == 0, done.stderr
        assert done.stdout == expected
        assert link.is_symlink() and os.readlink(link) == target


@pytest.mark.slow
def test_a_device_node_stays_a_device(workspace: Path, tmp_path: Path):
    node = tmp_path / "null"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a private /dev/null
        open(node, "wb").close()
    except PermissionError:
        pytest.skip("making and opening a device node needs root and a file system without nodev")
    done = qrels(workspace, str(node))
    assert done.returncode == 0, done.stderr
    assert stat.S_ISCHR(node.stat().st_mode) and node.stat().st_rdev == os.makedev(1, 3)


@pytest.mark.slow
def test_a_fifo_is_written_into(workspace: Path, tmp_path: Path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    done = qrels(workspace, str(fifo))
    reader.join(timeout=60)
    assert done.returncode == 0, done.stderr
    assert received == [(workspace / "qrels" / "exam.qrels").read_bytes()]
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_a_symlink_keeps_pointing_at_its_target_which_gets_the_content(tmp_path: Path):
    results = tmp_path / "results"
    results.mkdir()
    (results / "real.qrels").write_text("old\n")
    link = tmp_path / "exam.qrels"
    link.symlink_to("results/real.qrels")  # relative, as people make them
    with atomic_write(link) as fh:
        fh.write("new\n")
    assert link.is_symlink() and os.readlink(link) == "results/real.qrels"
    assert (results / "real.qrels").read_text() == "new\n"
    dangling = tmp_path / "dangling.qrels"
    dangling.symlink_to(results / "created.qrels")
    with atomic_write(dangling) as fh:
        fh.write("made\n")
    assert dangling.is_symlink() and (results / "created.qrels").read_text() == "made\n"
    linked_folder = tmp_path / "via"
    linked_folder.symlink_to(results, target_is_directory=True)
    with atomic_write(linked_folder / "x.tsv") as fh:
        fh.write("x\n")
    assert linked_folder.is_symlink() and (results / "x.tsv").read_text() == "x\n"


def test_outputs_written_together_replace_their_targets_together_or_not_at_all(tmp_path: Path):
    (tmp_path / "a").write_text("old a\n")
    with pytest.raises(RuntimeError):
        with replace_together():
            with atomic_write(tmp_path / "a") as fh:
                fh.write("new a\n")
            with atomic_write(tmp_path / "b") as fh:
                fh.write("new b\n")
            assert (tmp_path / "a").read_text() == "old a\n"  # staged, not yet in place
            raise RuntimeError("stopped")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"] and (tmp_path / "a").read_text() == "old a\n"
    with replace_together():
        for name in ("a", "b"):
            with atomic_write(tmp_path / name) as fh:
                fh.write(f"new {name}\n")
    assert [(tmp_path / n).read_text() for n in ("a", "b")] == ["new a\n", "new b\n"]


def test_names_the_file_system_allows_work_and_longer_ones_are_a_clear_error(tmp_path: Path):
    longest = tmp_path / ("n" * os.pathconf(tmp_path, "PC_NAME_MAX"))
    with atomic_write(longest) as fh:  # the temporary file's name must not be longer
        fh.write("ok\n")
    assert longest.read_text() == "ok\n"
    too_long = tmp_path / ("n" * (os.pathconf(tmp_path, "PC_NAME_MAX") + 1))
    with pytest.raises(OutputError, match=r"is too long: \d+ bytes, at most \d+ here"):
        with atomic_write(too_long):
            pass
    with pytest.raises(OutputError, match="contains a NUL byte"):
        with atomic_write(tmp_path / "a\0b"):
            pass


def test_gzip_through_a_pipe_and_standard_input_read_once(tmp_path: Path):
    fifo = tmp_path / "in"
    os.mkfifo(fifo)
    import gzip

    data = gzip.compress(b"q1 Q0 d1 1 2 s\nq1 Q0 d2 2 1 s\n")
    threading.Thread(target=lambda: fifo.write_bytes(data), daemon=True).start()
    assert list(iter_lines(fifo)) == [(1, "q1 Q0 d1 1 2 s"), (2, "q1 Q0 d2 2 1 s")]
    done = subprocess.run([sys.executable, "-c", "from exampp.files.io import iter_lines; "
                           "print(list(iter_lines('-')))"], input=data, capture_output=True)
    assert done.stdout.decode().strip() == "[(1, 'q1 Q0 d1 1 2 s'), (2, 'q1 Q0 d2 2 1 s')]"


def test_dead_writers_temporary_files_go_at_the_next_write_into_their_folder_and_no_others(tmp_path: Path):
    gone = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True).stdout)
    mine = writer_prefix(".exam.qrels.")  # .exam.qrels.<pid>-<host>.
    host = mine.split("-")[-1].rstrip(".")
    names = {
        f".exam.qrels.{gone}-{host}.x1y2z3_4.tmp": False,  # a writer killed mid-write: removed
        f"{mine}abcd1234.tmp": True,  # a live writer's (this process's)
        f".exam.qrels.{gone}-{'0' * 8}.abcd1234.tmp": True,  # another machine's: its pid means nothing here
        f".other.qrels.{gone}-{host}.abcd1234.tmp": False,  # another file's, as dead
        f".exam.qrels.{gone}-{host}.abcd1234.tmp.keep": True,  # not a temporary file
    }
    for name in names:
        (tmp_path / name).write_text("partial\n")
    with atomic_write(tmp_path / "exam.qrels") as fh:
        fh.write("q1 0 d1 1\n")
    kept = [name for name, stays in names.items() if stays]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*kept, "exam.qrels"])


@pytest.mark.slow
def test_a_job_with_nothing_to_write_leaves_a_good_output_as_it_was(workspace: Path, tmp_path: Path):
    exam_qrels = workspace / "qrels" / "exam.qrels"
    good = exam_qrels.read_text()
    assert len(good.splitlines()) == 218
    elsewhere = tmp_path / "elsewhere.jsonl"  # a corpus holding none of the pooled passages
    elsewhere.write_text('{"docid": "zzz", "text": "nothing"}\n')
    board = tmp_path / "board.txt"
    done = subprocess.run([sys.executable, str(FAKE), "grade", str(EXAMPLES / "runs"),
                           "--config", str(EXAMPLES / "exampp.toml"),
                           "--grader", "fake", "-w", str(workspace), "--no-progress", "--corpus", str(elsewhere),
                           "-o", str(board)], capture_output=True, text=True)
    assert (done.returncode, done.stderr) == (1, "Error: nothing to grade: none of the 218 pooled passages has a text "
                                                 "in the corpus (first: Q1:d-Q1-001); no output written\n")
    assert not board.exists()

    banks = tmp_path / "banks"
    banks.mkdir()
    lines = (EXAMPLES / "question_banks" / "questions.jsonl").read_text().splitlines()
    facetless = banks / "facetless.jsonl"
    facetless.write_text("".join(json.dumps({k: v for k, v in json.loads(line).items() if not k.startswith("facet")})
                                 + "\n" for line in lines))
    unrelated = banks / "unrelated.jsonl"
    unrelated.write_text('{"query_id": "Q1", "question_id": "Q1/new", "text": "Is it new?"}\n')
    for options, bank, relation in ((["--facets"], facetless, "has a facet in"), ([], unrelated, "is in"),
                                    (["--per-question"], unrelated, "is in")):
        done = subprocess.run([sys.executable, "-m", "exampp", "qrels", "-w", str(workspace), *options,
                               "--bank", str(bank), "-o", str(exam_qrels)], capture_output=True, text=True)
        assert (done.returncode, done.stderr) == (1, f"Error: none of the graded questions {relation} the question "
                                                     f"bank {bank}: nothing written to {exam_qrels}\n")
    assert exam_qrels.read_text() == good
    assert sorted(p.name for p in exam_qrels.parent.iterdir()) == ["exam.qrels"]  # no key of per-question qrels


def test_tsv_and_json_hold_floats_to_12_significant_digits_and_write_them_as_python_does():
    import pandas as pd

    from exampp.report.records import records, tsv

    table = pd.DataFrame({"a": [0.8999999999999999], "b": [0.016666666666666663], "c": [1e-20], "d": [1.0],
                          "e": [float("nan")], "n": [3]})
    assert tsv(table) == "a\tb\tc\td\te\tn\n0.9\t0.0166666666667\t1e-20\t1.0\t\t3\n"
    assert json.dumps(records(table)) == '[{"a": 0.9, "b": 0.0166666666667, "c": 1e-20, "d": 1.0, "e": null, "n": 3}]'
