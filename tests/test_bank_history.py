"""`exampp bank add / remove / edit / disable / enable / log / restore` on a copy of the example
bank: each command's exact effect on the file, the versions and changes the history keeps,
restores giving back exact earlier bytes, changes made outside exampp (by hand, or cut short by
a crash) recorded before anything else, pending changes (--to), and one-line errors."""
from __future__ import annotations

import gzip
import hashlib
import json
import re
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import EXAMPLES
from exampp.api import bank_history as api
from exampp.cli import main
from exampp.formats.question_bank import read_question_bank, write_question_bank
from exampp.stores.bank_versions import BankHistory, history_path

EXAMPLE = EXAMPLES / "question_banks" / "questions.jsonl"
LINES = EXAMPLE.read_text(encoding="utf-8").splitlines()
RECORDS = [json.loads(line) for line in LINES]
TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def md5_id(query_id: str, text: str) -> str:
    return f"{query_id}/{hashlib.md5(text.encode('utf-8')).hexdigest()}"


def bank_cli(*args: str):
    return CliRunner().invoke(main, ["bank", *map(str, args)])


def ok(*args: str):
    result = bank_cli(*args)
    assert result.exit_code == 0, result.output
    return result


def fails(*args: str) -> str:
    """The one-line error of a command that must fail (exit 1 or usage error 2)."""
    result = bank_cli(*args)
    assert result.exit_code in (1, 2), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.stderr.strip().splitlines()[-1]


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def log(bank: Path, *args: str) -> list[dict]:
    return json.loads(ok("log", bank, "--format", "json", *args).stdout)


def q(query_id: str, n: int) -> dict:
    """The n-th (0-based) example question of a query."""
    return [r for r in RECORDS if r["query_id"] == query_id][n]


@pytest.fixture
def bank(tmp_path: Path) -> Path:
    path = tmp_path / "bank.jsonl"
    path.write_bytes(EXAMPLE.read_bytes())
    return path


def test_example_bank_is_as_exampp_writes_it(tmp_path):
    # The expected files below are the example's own lines: true only if exampp writes them so.
    write_question_bank(read_question_bank(EXAMPLE), tmp_path / "b.jsonl")
    assert (tmp_path / "b.jsonl").read_bytes() == EXAMPLE.read_bytes()


# --- each command's effect on the file and on the history ----------------------------------------


def test_remove_a_query(bank):
    result = ok("remove", bank, "--query", "Q3", "--reason", "off-topic for the track")
    assert result.stdout == "version 1: removed 10 questions of Q3 (reason: off-topic for the track)\n"
    assert result.stderr == "version 0: history begins: 60 questions over 6 queries\n"
    assert records(bank) == [r for r in RECORDS if r["query_id"] != "Q3"]
    rows = log(bank)
    assert [(r["version"], r["operation"], r["reason"], r["added"], r["removed"], r["edited"], r["questions"],
             r["active"]) for r in rows] == [(0, "begin", None, 0, 0, 0, 60, 60),
                                             (1, "remove", "off-topic for the track", 0, 10, 0, 50, 50)]
    assert all(TIME.match(r["time"]) for r in rows)
    changes = log(bank, "--changes")
    assert [(c["version"], c["change"], c["question_id"], c["old_record"], c["new_record"]) for c in changes] == \
        [(1, "removed", r["question_id"], r, None) for r in RECORDS if r["query_id"] == "Q3"]


def test_remove_questions_by_id_and_unique_start_of_id(bank):
    first, second = q("Q1", 0), q("Q2", 4)
    result = ok("remove", bank, "--question", first["question_id"], "--question", second["question_id"][:8])
    assert result.stdout == "version 1: removed 2 questions of Q1, Q2\n"
    assert records(bank) == [r for r in RECORDS if r not in (first, second)]


def test_add_a_question_after_the_last_of_its_query(bank):
    facet = q("Q1", 3)  # facet Q1.2 "mass bleaching events": its text comes from the bank
    text = "Which ocean basins bleached in 2016?"
    result = ok("add", bank, "--query", "Q1", "--text", text, "--answer", "Pacific", "--answer", "Indian",
                "--facet", facet["facet_id"], "--reason", "missing nugget")
    new_id = md5_id("Q1", text)
    assert result.stdout == f"version 1: added 1 question to Q1 ({new_id}) (reason: missing nugget)\n"
    new = {"query_id": "Q1", "question_id": new_id, "text": text, "facet_id": "Q1.2",
           "facet_text": facet["facet_text"], "answers": ["Pacific", "Indian"], "source": "manual"}
    last_q1 = max(i for i, r in enumerate(RECORDS) if r["query_id"] == "Q1")
    assert records(bank) == RECORDS[:last_q1 + 1] + [new] + RECORDS[last_q1 + 1:]
    assert log(bank, "--version", "1") == [{"version": 1, "change": "added", "question_id": new_id,
                                            "new_question_id": None, "old_text": None, "new_text": text,
                                            "old_record": None, "new_record": new}]
    assert fails("add", bank, "--query", "Q1", "--text", text) == \
        f"Error: {bank}: question {new_id} is already in the bank: {text!r}"
    assert len(log(bank)) == 2


def test_add_from_a_file(bank, write):
    mine = {"query_id": "Q7", "text": "What is a new query's first question?", "source": "expert"}
    theirs = {"query_id": "Q2", "question_id": "Q2/custom-1", "text": "A question with its own id?"}
    extra = write("extra.jsonl", jsonl([mine, theirs]))
    assert ok("add", bank, "--from", extra).stdout == "version 1: added 2 questions to Q7, Q2\n"
    last_q2 = max(i for i, r in enumerate(RECORDS) if r["query_id"] == "Q2")
    expected = RECORDS[:last_q2 + 1] + [{**theirs, "source": "manual"}] + RECORDS[last_q2 + 1:] + \
        [{"query_id": "Q7", "question_id": md5_id("Q7", mine["text"]), "text": mine["text"], "source": "expert"}]
    assert records(bank) == expected
    # The same file again: the first of its questions already there is the error.
    assert fails("add", bank, "--from", extra) == \
        f"Error: {bank}: question {md5_id('Q7', mine['text'])} is already in the bank: {mine['text']!r}"


def test_edit_text_gives_a_new_id_and_the_history_links_them(bank):
    old = q("Q2", 1)
    text = "A reworded question?"
    new_id = md5_id("Q2", text)
    result = ok("edit", bank, "--question", old["question_id"], "--text", text, "--reason", "clearer")
    assert result.stdout == f"version 1: edited {old['question_id']} (text): new id {new_id} (reason: clearer)\n"
    new = {**old, "question_id": new_id, "text": text}
    assert records(bank) == [new if r == old else r for r in RECORDS]
    changes = log(bank, "--changes")
    assert changes == [{"version": 1, "change": "edited", "question_id": old["question_id"],
                        "new_question_id": new_id, "old_text": old["text"], "new_text": text,
                        "old_record": old, "new_record": new}]
    # Later changes of the question under its new id belong to its log under the old id too.
    ok("disable", bank, "--question", new_id)
    ok("disable", bank, "--question", q("Q2", 2)["question_id"])
    assert [r["version"] for r in log(bank, "--question", old["question_id"])] == [1, 2]
    assert [(c["version"], c["change"]) for c in log(bank, "--question", new_id[:10], "--changes")] == \
        [(1, "edited"), (2, "disabled")]


def test_edit_answers_facet_and_source(bank):
    target, other_facet = q("Q4", 0), q("Q4", 5)
    assert target["facet_id"] != other_facet["facet_id"]
    qid = target["question_id"]
    ok("edit", bank, "--question", qid, "--answer", "yes", "--facet", other_facet["facet_id"], "--source", "expert")
    edited = {**target, "facet_id": other_facet["facet_id"], "facet_text": other_facet["facet_text"],
              "answers": ["yes"], "source": "expert"}
    assert records(bank) == [edited if r == target else r for r in RECORDS]
    assert log(bank)[-1]["summary"] == f"edited {qid} (answers, facet, facet text, source)"
    assert ok("edit", bank, "--question", qid, "--no-answers").stdout == f"version 2: edited {qid} (answers)\n"
    no_key = {k: v for k, v in edited.items() if k != "answers"}
    assert records(bank) == [no_key if r == target else r for r in RECORDS]
    assert ok("edit", bank, "--question", qid, "--source", "expert").stdout == \
        f"nothing changed: {qid} already is as given\n"
    assert len(log(bank)) == 3


def test_disabled_questions_stay_in_the_file_but_not_in_the_exam(bank):
    qid = q("Q5", 2)["question_id"]
    result = ok("disable", bank, "--question", qid, "--reason", "ambiguous")
    assert result.stdout == f"version 1: disabled 1 question of Q5 ({qid}) (reason: ambiguous)\n"
    assert records(bank) == [{**r, "disabled": True} if r["question_id"] == qid else r for r in RECORDS]
    assert qid not in read_question_bank(bank) and len(read_question_bank(bank)) == 59
    assert read_question_bank(bank, disabled=True)[qid].disabled
    # Disabling a whole query counts only those not disabled yet; doing it again changes nothing.
    assert ok("disable", bank, "--query", "Q5").stdout == \
        "version 2: disabled 9 questions of Q5 (1 more already disabled)\n"
    assert ok("disable", bank, "--query", "Q5").stdout == "nothing changed: 10 questions of Q5 already disabled\n"
    assert read_question_bank(bank).query_ids() == ["Q1", "Q2", "Q3", "Q4", "Q6"]
    assert ok("enable", bank, "--query", "Q5").stdout == "version 3: enabled 10 questions of Q5\n"
    assert bank.read_bytes() == EXAMPLE.read_bytes()
    assert [(r["disabled"], r["enabled"], r["active"]) for r in log(bank)] == \
        [(0, 0, 60), (1, 0, 59), (9, 0, 50), (0, 10, 60)]


# --- restore ---------------------------------------------------------------------------------------


def test_restore_gives_back_each_version_exactly(bank, write):
    # A hand-written bank (its own spacing, no question ids): version 0 keeps its exact bytes.
    hand = "".join(json.dumps({"query_id": r["query_id"], "text": r["text"]}, indent=None, separators=(",", ":"))
                   + "\n" for r in RECORDS[:12])
    bank.write_text(hand, encoding="utf-8")
    states = [bank.read_bytes()]
    for args in (["remove", "--query", "Q2"], ["edit", "--question", RECORDS[0]["question_id"], "--text", "New?"],
                 ["disable", "--question", RECORDS[1]["question_id"]],
                 ["add", "--query", "Q9", "--text", "Another query?"]):
        ok(args[0], bank, *args[1:])
        states.append(bank.read_bytes())
    assert len(set(states)) == 5
    for version in (2, 0, 4, 1, 3):
        result = ok("restore", bank, "--version", version, "--reason", f"back to {version}")
        assert bank.read_bytes() == states[version]
        assert result.stdout.startswith(f"version {len(states)}: restored version {version} (")
        states.append(states[version])
        assert api.bank_at_version(bank, version, disabled=True) == read_question_bank(bank, disabled=True)
    assert ok("restore", bank, "--version", 3).stdout == \
        "nothing changed: the bank already is as it was at version 3\n"
    # Undoing the restores: the version before them comes back too.
    ok("restore", bank, "--version", 4)
    assert bank.read_bytes() == states[4]
    rows = log(bank)
    assert [r["operation"] for r in rows] == ["begin", "remove", "edit", "disable", "add"] + ["restore"] * 6
    # Restores store no content twice: five distinct files, five stored contents.
    with sqlite3.connect(history_path(bank)) as db:
        assert db.execute("SELECT COUNT(*) FROM contents").fetchone() == (5,)


def test_restore_pairs_an_edited_question_with_itself(bank):
    old = q("Q1", 1)
    ok("edit", bank, "--question", old["question_id"], "--text", "Reworded?")
    ok("restore", bank, "--version", 0)
    assert bank.read_bytes() == EXAMPLE.read_bytes()
    assert log(bank, "--version", 2) == [{
        "version": 2, "change": "edited", "question_id": md5_id("Q1", "Reworded?"),
        "new_question_id": old["question_id"], "old_text": "Reworded?", "new_text": old["text"],
        "old_record": {**old, "question_id": md5_id("Q1", "Reworded?"), "text": "Reworded?"}, "new_record": old}]


def test_restore_a_deleted_or_broken_bank(bank):
    ok("remove", bank, "--query", "Q6")
    removed = bank.read_bytes()
    bank.write_text("{not json\n")
    assert ok("restore", bank, "--version", 1).stdout == "version 3: restored version 1 (50 added)\n"
    assert bank.read_bytes() == removed
    # The broken file was kept (as it was found) before it was replaced.
    assert log(bank)[2]["summary"] == "changed outside exampp since version 1: not a readable bank"
    # Its exact bytes come back with --to; in place, an unreadable version is refused.
    ok("restore", bank, "--version", 2, "--to", bank.with_name("broken.jsonl"))
    assert bank.with_name("broken.jsonl").read_text() == "{not json\n"
    assert fails("restore", bank, "--version", 2) == \
        f"Error: {bank}: version 2 is not a readable question bank ({bank}@2:1: invalid JSON: Expecting property " \
        f"name enclosed in double quotes at column 2); --to FILE writes its bytes to a file"
    bank.unlink()
    assert ok("restore", bank, "--version", 0).stdout.startswith("version 4: restored version 0 (")
    assert bank.read_bytes() == EXAMPLE.read_bytes()


def test_a_gzipped_bank_round_trips(tmp_path):
    bank = tmp_path / "bank.jsonl.gz"
    original = gzip.compress(EXAMPLE.read_bytes(), mtime=123)  # not as exampp gzips: the bytes must survive
    bank.write_bytes(original)
    ok("remove", bank, "--query", "Q1")
    assert len(read_question_bank(bank)) == 50
    ok("restore", bank, "--version", 0)
    assert bank.read_bytes() == original


# --- changes made outside exampp, and crashes -------------------------------------------------------


def test_a_change_by_hand_is_recorded_before_the_next_change(bank):
    ok("disable", bank, "--question", q("Q1", 0)["question_id"])
    before = records(bank)
    edited = {**before[5], "facet_text": "edited by hand"}
    added = {"query_id": "Q2", "text": "Added by hand?"}
    by_hand = [edited if i == 5 else r for i, r in enumerate(before)] + [added]
    bank.write_text(jsonl(by_hand), encoding="utf-8")
    hand_bytes = bank.read_bytes()
    result = bank_cli("log", bank)
    assert result.stderr == f"warning: {bank} has changed since version 1 (outside exampp, or a change was cut " \
                            "short); the next change records it first\n"
    result = ok("remove", bank, "--query", "Q6")
    assert result.stderr == "version 2: changed outside exampp since version 1: 1 added, 1 edited\n"
    assert result.stdout == "version 3: removed 10 questions of Q6\n"
    added_record = {"query_id": "Q2", "question_id": md5_id("Q2", added["text"]), "text": added["text"]}
    assert log(bank, "--version", 2) == [
        {"version": 2, "change": "edited", "question_id": edited["question_id"], "new_question_id": None,
         "old_text": edited["text"], "new_text": edited["text"], "old_record": before[5], "new_record": edited},
        {"version": 2, "change": "added", "question_id": added_record["question_id"], "new_question_id": None,
         "old_text": None, "new_text": added["text"], "old_record": None, "new_record": added_record}]
    assert log(bank)[2]["operation"] == "external change"
    ok("restore", bank, "--version", 2)
    assert bank.read_bytes() == hand_bytes


def crash_at_second_commit(monkeypatch) -> None:
    """The history's second commit in a command (the one after the bank is written; the first
    keeps the bank as found) raises, as if the process died before committing."""
    commit = BankHistory.commit
    calls = []

    def crashing(self):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("killed before the commit")
        commit(self)

    monkeypatch.setattr(BankHistory, "commit", crashing)


def test_a_crash_between_writing_the_bank_and_committing_is_noticed(bank, monkeypatch):
    ok("remove", bank, "--query", "Q1")
    q2 = q("Q2", 0)["question_id"]
    crash_at_second_commit(monkeypatch)
    result = bank_cli("disable", bank, "--question", q2)
    assert isinstance(result.exception, RuntimeError)
    monkeypatch.undo()
    assert read_question_bank(bank, disabled=True)[q2].disabled  # the bank was written ...
    assert len(log(bank)) == 2  # ... its version was not committed
    result = ok("enable", bank, "--question", q2)
    assert result.stderr == "version 2: changed outside exampp since version 1: 1 disabled\n"
    assert result.stdout == f"version 3: enabled 1 question of Q2 ({q2})\n"


def test_a_crash_in_the_first_change_keeps_the_bank_as_it_was(bank, monkeypatch):
    # Version 0 is committed before the bank is written: the original survives a crash.
    crash_at_second_commit(monkeypatch)
    assert isinstance(bank_cli("remove", bank, "--query", "Q4").exception, RuntimeError)
    monkeypatch.undo()
    ok("remove", bank, "--query", "Q5")
    assert [r["summary"] for r in log(bank)] == [
        "history begins: 60 questions over 6 queries",
        "changed outside exampp since version 0: 10 removed", "removed 10 questions of Q5"]
    ok("restore", bank, "--version", 0)
    assert bank.read_bytes() == EXAMPLE.read_bytes()


def test_a_change_applies_to_the_bank_as_it_is_once_the_history_is_locked(bank, monkeypatch):
    # Another program writes the bank after the command read it, before it took the lock.
    ok("disable", bank, "--question", q("Q1", 0)["question_id"])
    added = {"query_id": "Q2", "text": "Added meanwhile?"}
    meanwhile = records(bank) + [added]
    transaction = BankHistory.transaction

    def racing(self):
        if not bank.read_text().endswith(jsonl([added])):
            bank.write_text(jsonl(meanwhile), encoding="utf-8")
        return transaction(self)

    monkeypatch.setattr(BankHistory, "transaction", racing)
    result = ok("remove", bank, "--query", "Q6")
    assert result.stderr == "version 2: changed outside exampp since version 1: 1 added\n"
    assert result.stdout == "version 3: removed 10 questions of Q6\n"
    added_record = {"query_id": "Q2", "question_id": md5_id("Q2", added["text"]), "text": added["text"]}
    assert records(bank) == [r for r in meanwhile[:-1] if r["query_id"] != "Q6"] + [added_record]


# --- pending changes --------------------------------------------------------------------------------


def test_a_pending_change_touches_neither_bank_nor_history(bank, tmp_path):
    pending = tmp_path / "pending.jsonl"
    result = ok("remove", bank, "--query", "Q3", "--to", pending, "--reason", "try")
    assert result.stdout == f"pending, not recorded ({pending}): removed 10 questions of Q3\n"
    assert records(pending) == [r for r in RECORDS if r["query_id"] != "Q3"]
    assert bank.read_bytes() == EXAMPLE.read_bytes()
    assert not history_path(bank).exists()
    ok("disable", bank, "--query", "Q1")
    history = history_path(bank).read_bytes()
    ok("edit", bank, "--question", q("Q2", 0)["question_id"], "--text", "Pending?", "--to", pending)
    ok("restore", bank, "--version", 0, "--to", pending)
    assert pending.read_bytes() == EXAMPLE.read_bytes()
    assert history_path(bank).read_bytes() == history
    assert read_question_bank(bank).query_ids() == ["Q2", "Q3", "Q4", "Q5", "Q6"]
    assert fails("remove", bank, "--query", "Q2", "--to", bank) == \
        f"Error: {bank}: is the bank itself: leave out --to to change the bank (with its history)"


# --- errors -------------------------------------------------------------------------------------------


def test_errors_are_one_line(bank, tmp_path):
    assert fails("remove", bank, "--question", "Q1/nope") == f"Error: {bank}: no question 'Q1/nope'"
    assert fails("disable", bank, "--query", "Q8") == f"Error: {bank}: no questions of query 'Q8'"
    ids = [r["question_id"] for r in RECORDS if r["question_id"].startswith("Q1/f")]
    assert fails("remove", bank, "--question", "Q1/f") == \
        f"Error: {bank}: 'Q1/f' could be any of {len(ids)} questions ({', '.join(ids)}): give more of the id"
    assert fails("remove", bank, "--query", "Q1", "--query", "Q2", "--query", "Q3", "--query", "Q4",
                 "--query", "Q5", "--query", "Q6") == f"Error: {bank}: removing 60 questions would leave the bank empty"
    assert fails("edit", bank, "--question", RECORDS[0]["question_id"], "--text", RECORDS[1]["text"]) == \
        f"Error: {bank}: the new text is that of question {RECORDS[1]['question_id']}, already in the bank"
    assert fails("log", bank) == f"Error: {history_path(bank)}: no history yet (it begins with the bank's first " \
                                 "change by exampp)"
    assert not history_path(bank).exists()  # refused changes leave no history behind
    ok("remove", bank, "--query", "Q1")
    assert fails("restore", bank, "--version", 7) == \
        f"Error: {history_path(bank)}: no version 7 (the history has versions 0 to 1)"
    assert fails("log", bank, "--version", 5) == \
        f"Error: {history_path(bank)}: no version 5 (the history has versions 0 to 1)"
    assert fails("log", bank, "--question", "Q9/x") == f"Error: {bank}: no question 'Q9/x'"
    assert fails("remove", bank) == "Error: name the questions: --question ID and/or --query QUERY_ID"
    assert fails("edit", bank, "--question", "Q2/x") == \
        "Error: nothing to edit: give --text, --answer, --no-answers, --facet, --facet-text or --source"


def test_other_formats_are_refused(tmp_path):
    reference = tmp_path / "reference.jsonl.gz"
    write_question_bank(read_question_bank(EXAMPLE), reference, "reference")
    before = reference.read_bytes()
    assert fails("remove", reference, "--query", "Q1") == \
        f"Error: {reference}: a reference question bank, not exampp's JSONL: only exampp banks are changed with a " \
        "history; run `exampp bank import` on it and change the imported bank"
    assert reference.read_bytes() == before and not history_path(reference).exists()


def test_a_history_of_a_newer_schema_is_refused(bank):
    with sqlite3.connect(history_path(bank)) as db:
        db.execute("CREATE TABLE later (x)")
        db.execute("PRAGMA user_version = 99")
    assert fails("remove", bank, "--query", "Q1") == \
        f"Error: {history_path(bank)}: history schema 99, made by a newer exampp (this exampp reads schema 1)"
    assert bank.read_bytes() == EXAMPLE.read_bytes()


# --- the API ------------------------------------------------------------------------------------------


def test_api_without_a_user_name_and_through_a_link(bank, tmp_path, monkeypatch):
    def no_user():
        raise OSError("no login name")

    monkeypatch.setattr("getpass.getuser", no_user)
    link = tmp_path / "link.jsonl"
    link.symlink_to(bank)
    result = api.remove_questions(link, query_ids=["Q2"], reason="r")
    assert (result.version.number, result.version.user, result.line()) == \
        (1, None, "version 1: removed 10 questions of Q2 (reason: r)")
    assert [v.number for v in result.earlier] == [0]
    assert link.is_symlink() and history_path(link) == tmp_path / "bank.jsonl.history.sqlite"
    assert api.bank_at_version(bank, 1) == read_question_bank(link)
    table = api.bank_log(bank)
    assert list(table.columns) == ["version", "time", "user", "operation", "added", "removed", "edited",
                                   "disabled", "enabled", "questions", "active", "reason", "summary"]
    assert table["user"].tolist() == [None, None]


def test_log_text_and_tsv(bank):
    ok("remove", bank, "--query", "Q3", "--reason", "off-topic")
    tsv = ok("log", bank, "--format", "tsv").stdout.splitlines()
    assert tsv[0].split("\t") == ["version", "time", "user", "operation", "added", "removed", "edited", "disabled",
                                  "enabled", "questions", "active", "reason", "summary"]
    assert tsv[2].split("\t")[3:] == ["remove", "0", "10", "0", "0", "0", "50", "50", "off-topic",
                                      "removed 10 questions of Q3"]
    text = ok("log", bank, "--version", "1").stdout.splitlines()
    assert text[0].split() == ["version", "change", "question_id", "new_question_id", "old_text", "new_text"]
    assert len(text) == 11 and "None" not in "".join(text)
