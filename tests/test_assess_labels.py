"""The assessors' label store (exampp.stores.assessments): labels, undo, claims and overlap with concurrent
assessors; label files (qrels with an assessor column, Label Studio's export) read back exactly;
the sample exported blind (TSV, Label Studio tasks and config); `exampp assess export` and `import`."""
from __future__ import annotations

import json
import re
import threading
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from assess_pages import DESCRIPTION, HOSTILE, NARRATIVE, PROBABILITY, STRATUM, make_workspace
from conftest import REPO
from exampp.api.assess_labels import ImportResult, export_labels, export_sample, import_labels, load_tasks, store_labels
from exampp.assess.assignment import double_judged, labels_needed
from exampp.assess.tasks import NUGGET_SCALE, PASSAGE_SCALE, labeling_config, parse_scale
from exampp.cli import main
from exampp.errors import InputError
from exampp.formats.assessment_sample import SamplePair, write_sample
from exampp.formats.nugget_assignments import Answer, AssignedNugget, write_assignments
from exampp.stores.assessments import LABEL_COLUMNS, AssessmentStore, HumanLabel, read_labels, write_labels

T0 = 1_700_000_000.0  # a fixed "now" for the claims' clock


def stamp(seconds: float) -> pd.Timestamp:
    return pd.Timestamp(seconds, unit="s", tz="UTC")


def rows(table: pd.DataFrame) -> list[tuple]:
    """A labels table as tuples, time as seconds (None for NaT)."""
    return [(q, k, a, g, n, None if pd.isna(t) else t.timestamp()) for q, k, a, g, n, t in
            table[LABEL_COLUMNS].itertuples(index=False)]


@pytest.fixture
def store(tmp_path):
    with AssessmentStore(tmp_path / "assessments.sqlite") as opened:
        yield opened


def test_labels_undo_and_relabel(store):
    assert store.labels().columns.tolist() == LABEL_COLUMNS and store.labels().empty
    store.add("q1", "d1", "alice", 2, "clear", time=T0)
    store.add("q1", "d2", "alice", 0, time=T0 + 1)
    store.add("q1", "d1", "bob", 1, "hm", time=T0 + 2)
    assert rows(store.labels()) == [("q1", "d1", "alice", 2, "clear", T0), ("q1", "d2", "alice", 0, "", T0 + 1),
                                    ("q1", "d1", "bob", 1, "hm", T0 + 2)]
    assert store.labels()["grade"].dtype == "int64" and str(store.labels()["time"].dt.tz) == "UTC"
    # undo takes back alice's newest label only, and gives its pair back to her
    assert store.undo("alice") == HumanLabel("q1", "d2", "alice", 0, "", T0 + 1)
    assert rows(store.labels("alice")) == [("q1", "d1", "alice", 2, "clear", T0)]
    assert store.claims(now=T0)[["query_id", "key", "assessor"]].values.tolist() == [["q1", "d2", "alice"]]
    store.add("q1", "d2", "alice", 3, time=T0 + 3)  # graded again; the label releases her claim
    assert store.claims(now=T0).empty
    store.add("q1", "d1", "alice", 1, "on second thought", time=T0 + 4)  # a new grade supersedes the old
    assert rows(store.labels()) == [("q1", "d1", "bob", 1, "hm", T0 + 2), ("q1", "d2", "alice", 3, "", T0 + 3),
                                    ("q1", "d1", "alice", 1, "on second thought", T0 + 4)]
    assert store.undo("alice") == HumanLabel("q1", "d1", "alice", 1, "on second thought", T0 + 4)
    assert ("q1", "d1", "alice", 2, "clear", T0) in rows(store.labels())  # undoing the new grade brings back the old
    history = store.history()
    assert len(history) == 5 and history["undone"].notna().tolist() == [False, True, False, False, True]
    assert store.undo("carol") is None
    assert store.assessors() == {("q1", "d1"): {"alice", "bob"}, ("q1", "d2"): {"alice"}}


def test_labels_outlive_the_store_object_and_bad_labels_are_refused(tmp_path):
    path = tmp_path / "assessments.sqlite"
    with AssessmentStore(path) as store:
        store.add("q1", "d1", "alice", 2, time=T0)
        for bad, message in [(dict(assessor="a b"), "assessor 'a b' contains whitespace"),
                             (dict(grade=1.5), "grade 1.5 is not an integer"), (dict(grade=True), "not an integer"),
                             (dict(key="d\n1"), "key 'd\\n1' contains whitespace"),
                             (dict(note="x" * 10_001), "a note is a string of at most 10,000 characters")]:
            with pytest.raises(ValueError, match=re.escape(message)):
                store.add(**{"query_id": "q1", "key": "d1", "assessor": "alice", "grade": 1, **bad})
    with AssessmentStore(path) as store:
        assert rows(store.labels()) == [("q1", "d1", "alice", 2, "", T0)]
    other = tmp_path / "other.sqlite"
    import sqlite3
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE grades (x)")
    with pytest.raises(InputError, match="not an exampp assessment store"):
        AssessmentStore(other)
    (tmp_path / "text.sqlite").write_text("not a database at all, longer than a header " * 40)
    with pytest.raises(InputError, match="not an exampp assessment store"):
        AssessmentStore(tmp_path / "text.sqlite")


PAIRS = [("q1", "d1", 1), ("q1", "d2", 1), ("q2", "d3", 1), ("q2", "d4", 1)]


def test_claims_give_assessors_different_pairs_in_sample_order(store):
    assert store.claim_next("alice", PAIRS, now=T0) == ("q1", "d1")
    assert store.claim_next("bob", PAIRS, now=T0) == ("q1", "d2")
    assert store.claim_next("alice", PAIRS, now=T0 + 1) == ("q1", "d1")  # a reload shows the same pair
    store.add("q1", "d1", "alice", 2)
    assert store.claim_next("alice", PAIRS, now=T0 + 2) == ("q2", "d3")
    # bob closed his tab: after the claim expires his pair goes to the next assessor who asks
    assert store.claim_next("carol", PAIRS, now=T0 + 599) == ("q2", "d4")
    assert store.claim_next("dave", PAIRS, now=T0 + 601) == ("q1", "d2")
    assert store.claim_next("erin", PAIRS, now=T0 + 601) is None  # the rest is labelled or held
    for key, who in (("d2", "dave"), ("d3", "alice"), ("d4", "carol")):
        store.add("q1" if key == "d2" else "q2", key, who, 1)
    assert store.claim_next("bob", PAIRS, now=T0 + 603) is None
    store.release("bob")
    assert store.claims(now=T0 + 603).empty


def test_overlap_doubles_a_seeded_fraction_for_two_different_assessors(store):
    pairs = [SamplePair("q", f"d{i}", 1.0) for i in range(40)]
    double = double_judged(pairs, 0.1, seed=0)
    assert len(double) == 4 and double == double_judged(list(reversed(pairs)), 0.1, seed=0)
    assert double != double_judged(pairs, 0.1, seed=1) and len(double_judged(pairs, 0.1, seed=1)) == 4
    assert double_judged(pairs, 0.0) == set() and len(double_judged(pairs, 1.0)) == 40
    assert len(double_judged(pairs[:5], 0.1)) == 1  # round(0.5) up: an overlap asked for is never none
    needed = labels_needed(pairs, 0.1)
    assert [(q, k) for q, k, _ in needed] == [("q", p.key) for p in pairs]
    assert {(q, k) for q, k, n in needed if n == 2} == double
    given: dict[tuple[str, str], list[str]] = {}
    for turn in range(60):  # three assessors take turns until nothing is left
        who = ("alice", "bob", "carol")[turn % 3]
        pair = store.claim_next(who, needed, now=T0)
        if pair is not None:
            store.add(*pair, who, 1)
            given.setdefault(pair, []).append(who)
    assert store.claim_next("dave", needed, now=T0) is None
    assert {pair for pair, who in given.items() if len(who) == 2} == double
    assert all(len(who) == len(set(who)) for who in given.values()) and len(given) == 40
    with pytest.raises(ValueError, match="overlap must be in"):
        double_judged(pairs, 1.5)


def test_concurrent_assessors_never_share_a_pair(tmp_path):
    """Eight assessors, each through their own connection (as processes would), claim at once."""
    path = tmp_path / "assessments.sqlite"
    AssessmentStore(path).close()
    pairs = [("q", f"d{i}", 1) for i in range(8)]
    got: dict[str, tuple[str, str] | None] = {}
    start = threading.Barrier(8)

    def assessor(name: str) -> None:
        with AssessmentStore(path) as own:
            start.wait()
            got[name] = own.claim_next(name, pairs)

    threads = [threading.Thread(target=assessor, args=(f"a{i}",)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(got.values()) == sorted((q, k) for q, k, _ in pairs)


def test_qrels_round_trip_with_assessors(store, tmp_path):
    store.add("q1", "d1", "alice", 2, "a note stays in the store", time=T0)
    store.add("q1", "d1", "bob", 0, time=T0)
    store.add("q2", "run-a/3", "alice", 1, time=T0)
    assert write_labels(store.labels(), tmp_path / "labels.qrels") == 3
    assert (tmp_path / "labels.qrels").read_text() == "q1 0 d1 2 alice\nq1 0 d1 0 bob\nq2 0 run-a/3 1 alice\n"
    assert rows(read_labels(tmp_path / "labels.qrels")) == [("q1", "d1", "alice", 2, "", None),
                                                            ("q1", "d1", "bob", 0, "", None),
                                                            ("q2", "run-a/3", "alice", 1, "", None)]
    (tmp_path / "plain.qrels").write_text("# a comment\nq1 Q0 d1 3\n\nq1 0 d2 0\n")
    assert rows(read_labels(tmp_path / "plain.qrels")) == [("q1", "d1", "", 3, "", None), ("q1", "d2", "", 0, "", None)]


@pytest.mark.parametrize("text, line, message", [
    ("q1 0 d1 2\nq1 0 d2\n", 2, "expected 4 or 5 columns 'query_id iter key grade [assessor]', found 3"),
    ("q1 0 d1 2 alice extra\n", 1, "expected 4 or 5 columns"),
    ("q1 0 d1 2.5 alice\n", 1, "grade '2.5' is not an integer grade"),
    ("q1 0 d1 two alice\n", 1, "grade 'two' is not a number"),
    ("q1 0 d1 2 alice\nq1 0 d1 3 alice\n", 2, "the pair q1 d1 is labelled twice by alice (first on line 1)"),
    ("q1 0 d1 2\u00a0alice\n", 1, "character U+00A0 at column 10"),
])
def test_bad_qrels_name_file_and_line(write, text, line, message):
    path = write("labels.qrels", text)
    with pytest.raises(InputError) as caught:
        read_labels(path)
    assert (caught.value.path, caught.value.line) == (str(path), line)
    assert message in caught.value.message


def test_an_empty_label_file_is_refused(write):
    with pytest.raises(InputError, match="empty label file"):
        read_labels(write("empty.qrels", "\n\n"))
    with pytest.raises(InputError, match="no labels: the file has no qrels lines"):
        read_labels(write("comments.qrels", "# nothing\n"))


def annotation(grade: str, by: object = 7, note: str | None = None, **extra) -> dict:
    """One annotation as Label Studio exports it."""
    result = [{"id": "r1", "from_name": "grade", "to_name": "text", "type": "choices",
               "value": {"choices": [grade]}, "origin": "manual"}]
    if note is not None:
        result.append({"id": "r2", "from_name": "note", "to_name": "text", "type": "textarea",
                       "value": {"text": [note]}})
    return {"id": 1001, "result": result, "was_cancelled": False, "ground_truth": False,
            "created_at": "2024-03-09T21:52:49.513742Z", "updated_at": "2024-03-09T22:16:08.728378Z",
            "lead_time": 4.2, "task": 1, "completed_by": by, **extra}


def test_label_studio_round_trip(tmp_path):
    ws, sample = make_workspace(tmp_path / "ws")
    exported = export_sample(ws, sample, tmp_path / "tasks.json", fmt="label-studio")
    assert (exported.count, exported.config) == (6, tmp_path / "tasks.xml")
    tasks = json.loads((tmp_path / "tasks.json").read_text())
    assert tasks[1] == {"data": {"query_id": "Q1", "key": "d-evil", "doc_id": "d-evil", "query": "coral reef bleaching",
                                 "description": DESCRIPTION, "narrative": NARRATIVE,
                                 "text": f"Coral bleaching. {HOSTILE}", "nugget": ""}}
    # Label Studio adds ids and annotations to the tasks; an export of it, laid out as Label Studio does
    tasks[0].update(id=1, annotations=[annotation("2", by=7, note="mentions bleach, not coral"),
                                       annotation("0", by={"id": 8, "email": "bob@example.org"})])
    tasks[1].update(id=2, annotations=[annotation("3 perfectly relevant", by=7),
                                       annotation("1", by=9, was_cancelled=True)])
    tasks[2].update(id=3, annotations=[])
    (tmp_path / "export.json").write_text(json.dumps(tasks[:3], indent=2))
    labels = read_labels(tmp_path / "export.json")
    when = stamp(1710022568.728378).timestamp()
    assert rows(labels) == [("Q1", "d-Q1-001", "ls-user-7", 2, "mentions bleach, not coral", when),
                            ("Q1", "d-Q1-001", "bob@example.org", 0, "", when),
                            ("Q1", "d-evil", "ls-user-7", 3, "", when)]
    assert import_labels(ws, tmp_path / "export.json") == ImportResult(read=3, added=3)
    assert import_labels(ws, tmp_path / "export.json") == ImportResult(read=3, added=0)
    assert rows(store_labels(ws)) == rows(labels)  # imported once: the second import added nothing


def test_label_studio_config_has_the_scale_as_choices(tmp_path):
    config = labeling_config(PASSAGE_SCALE, nuggets=False)
    assert '<Choices name="grade" toName="text" choice="single-radio" required="true">' in config
    assert ('<Choice value="2 highly relevant" alias="2" hotkey="2" hint="The passage has some answer for the query, '
            'but it may be unclear or hidden among extraneous information."/>') in config
    assert config.count("<Choice ") == 4 and '<TextArea name="note" toName="text"' in config
    nugget = labeling_config(parse_scale("0:no,1:partly & <so>,2"), nuggets=True)
    assert '<Choice value="1 partly &amp; &lt;so&gt;" alias="1" hotkey="1"/>' in nugget
    assert '<Choice value="2 2" alias="2" hotkey="2"/>' in nugget and 'toName="nugget"' in nugget


def test_the_docs_show_the_config_that_is_written():
    page = (REPO / "docs" / "how-to" / "assessors.md").read_text(encoding="utf-8")
    shown = page.split("```xml\n", 1)[1].split("```", 1)[0]
    assert shown == labeling_config(PASSAGE_SCALE, nuggets=False)


@pytest.mark.parametrize("tasks, line, message", [
    ('[\n {"data": {"query_id": "Q1", "key": "d1"}},\n {"data": {"query": "x"}}\n]', 3,
     "the task's data lacks query_id"),
    ('[{"data": {"query_id": "Q1", "key": "d1"}, "annotations": [\n'
     '{"result": [{"from_name": "grade", "value": {"choices": ["high"]}}], "completed_by": 1}]}]', 1,
     "annotations[0]: the 'grade' choice must be one grade"),
    ('[\n\n{"data": {"query_id": "Q1", "key": "d1"}, "annotations": [{"result": [], "completed_by": 1}]}]', 3,
     "annotations[0] has no grade"),
    ('[{"data": {"query_id": "Q1", "key": "d1"}, "annotations": [{"result": '
     '[{"from_name": "grade", "value": {"choices": ["1"]}}]}]}]', 1, "annotations[0].completed_by names no annotator"),
    ('{"data": {}}', 1, "expected Label Studio's JSON export (a list of tasks), found dict"),
    ('[{"data": }]', 1, "invalid JSON"),
])
def test_bad_label_studio_exports_name_the_task_line(write, tasks, line, message):
    path = write("export.json", tasks)
    with pytest.raises(InputError) as caught:
        read_labels(path)
    assert caught.value.line == line and message in caught.value.message, str(caught.value)


def test_sample_exported_blind_as_tsv(tmp_path):
    ws, sample = make_workspace(tmp_path / "ws")
    exported = export_sample(ws, sample, tmp_path / "pairs.tsv")
    lines = (tmp_path / "pairs.tsv").read_text().splitlines()
    assert exported.count == 6 and len(lines) == 7
    assert lines[0] == "query_id\tdoc_id\tquery\tdescription\tnarrative\ttext"
    assert lines[2] == f"Q1\td-evil\tcoral reef bleaching\t{DESCRIPTION}\t{NARRATIVE}\tCoral bleaching. {HOSTILE}"
    assert lines[4].startswith("Q2\td-Q2-001\thistory of the printing press\t\t\t")
    text = (tmp_path / "pairs.tsv").read_text()
    assert STRATUM not in text and repr(PROBABILITY) not in text


def test_tsv_texts_stay_on_their_line(tmp_path):
    ws, sample = make_workspace(tmp_path / "ws")
    corpus = ws / "corpus" / "passages.jsonl"
    corpus.write_text(corpus.read_text() + json.dumps({"docid": "d-lines", "text": "one\ttwo\nthree\r\nfour"}) + "\n")
    write_sample([SamplePair("Q1", "d-lines", 1.0)], sample)
    export_sample(ws, sample, tmp_path / "pairs.tsv")
    assert (tmp_path / "pairs.tsv").read_text().splitlines()[1].endswith("\tone two three  four")


def nugget_answers(path: Path) -> Path:
    nuggets = (AssignedNugget("bleaching is caused by heat", "vital", "support"),
               AssignedNugget("reefs recover in a decade", "okay", "not_support"))
    write_assignments([Answer("Q1", "rag-a", "Heat stress bleaches corals.", nuggets, "coral reef bleaching"),
                       Answer("Q1", "rag-b", "Corals are animals.", nuggets, "coral reef bleaching")], path)
    return path


def test_nugget_pairs_show_the_answer_and_the_nugget_never_its_assignment(tmp_path):
    ws, _ = make_workspace(tmp_path / "ws")
    answers = nugget_answers(tmp_path / "assignments.jsonl")
    sample = tmp_path / "nuggets.tsv"
    write_sample([SamplePair("Q1", None, 0.5, "s", 0.0, run="rag-b", nugget_id="1"),
                  SamplePair("Q1", None, 0.5, "s", 1.0, run="rag-a", nugget_id="0")], sample)
    tasks = load_tasks(ws, sample, answers=answers)
    assert [task.view() for task in tasks] == [
        {"query_id": "Q1", "key": "rag-b/1", "run": "rag-b", "nugget_id": "1", "query": "coral reef bleaching",
         "description": DESCRIPTION, "narrative": NARRATIVE, "text": "Corals are animals.",
         "nugget": "reefs recover in a decade"},
        {"query_id": "Q1", "key": "rag-a/0", "run": "rag-a", "nugget_id": "0", "query": "coral reef bleaching",
         "description": DESCRIPTION, "narrative": NARRATIVE, "text": "Heat stress bleaches corals.",
         "nugget": "bleaching is caused by heat"}]
    export_sample(ws, sample, tmp_path / "nuggets-out.tsv", answers=answers)
    out = (tmp_path / "nuggets-out.tsv").read_text()
    assert out.splitlines()[0] == "query_id\trun\tnugget_id\tquery\tdescription\tnarrative\ttext\tnugget"
    assert "support" not in out and "vital" not in out  # neither the assignment nor the importance
    write_sample([SamplePair("Q1", None, 0.5, run="rag-a", nugget_id="2")], sample)
    with pytest.raises(InputError, match="nugget_id '2' of topic Q1: the topic has 2 nuggets"):
        load_tasks(ws, sample, answers=answers)
    with pytest.raises(Exception, match="give the answers and nuggets"):
        load_tasks(ws, sample)


def test_a_pair_without_its_texts_is_named(tmp_path):
    ws, sample = make_workspace(tmp_path / "ws", [("Q1", "d-nowhere")])
    with pytest.raises(InputError) as caught:
        load_tasks(ws, sample)
    corpus = ws / "corpus" / "passages.jsonl"
    assert str(caught.value) == f"{sample}: passage 'd-nowhere' (query Q1) is not in the corpus {corpus}"
    write_sample([SamplePair("Q99", "d-Q1-001", 1.0)], sample)
    with pytest.raises(InputError) as caught:
        load_tasks(ws, sample)
    assert str(caught.value) == f"{sample}: query 'Q99' is not in the topics {ws / 'topics' / 'topics.jsonl'}"
    write_sample([SamplePair("Q1", None, 1.0, run="rag-z", nugget_id="0")], sample)
    answers = nugget_answers(tmp_path / "assignments.jsonl")
    with pytest.raises(InputError) as caught:
        load_tasks(ws, sample, answers=answers)
    assert str(caught.value) == f"{sample}: run 'rag-z' has no answer to topic 'Q1' in {answers}"


@pytest.mark.parametrize("text, message", [
    ("0:no", "a scale needs at least two grades"), ("0:a,0:b", "grade 0 is given twice"),
    ("0:a,10:b", "'10:b' is not 'grade:name' with a grade from 0 to 9"), ("a,b", "'a' is not 'grade:name'"),
])
def test_bad_scales(text, message):
    with pytest.raises(ValueError, match=message):
        parse_scale(text)


def test_default_scales():
    assert PASSAGE_SCALE.spec() == "0:irrelevant,1:related,2:highly relevant,3:perfectly relevant"
    assert NUGGET_SCALE.spec() == "0:not_support,1:partial_support,2:support"
    assert parse_scale(" 1:yes , 0 ").spec() == "1:yes,0:0"


def test_cli_export_and_import(tmp_path):
    ws, sample = make_workspace(tmp_path / "ws")
    runner = CliRunner()
    result = runner.invoke(main, ["assess", "export", "-w", str(ws), "--sample", str(sample), "--format",
                                  "label-studio", "-o", str(tmp_path / "tasks.json")])
    assert result.exit_code == 0, result.output
    assert result.output == (f"6 pairs written to {tmp_path / 'tasks.json'}; Label Studio's labeling config: "
                             f"{tmp_path / 'tasks.xml'}\n")
    (tmp_path / "nist.qrels").write_text("Q1 0 d-Q1-001 1\nQ1 0 d-evil 0\n")
    result = runner.invoke(main, ["assess", "import", "-w", str(ws), str(tmp_path / "nist.qrels")])
    assert result.exit_code == 1
    assert result.output == (f"Error: {tmp_path / 'nist.qrels'}: the labels have no assessor column: name their "
                             "assessor with --assessor NAME\n")
    args = ["assess", "import", "-w", str(ws), str(tmp_path / "nist.qrels"), "--assessor", "nist"]
    assert runner.invoke(main, args).output == f"2 labels added to {ws}/assessments.sqlite (2 read, 0 there already)\n"
    assert runner.invoke(main, args).output == f"0 labels added to {ws}/assessments.sqlite (2 read, 2 there already)\n"
    result = runner.invoke(main, ["assess", "export", "-w", str(ws), "--labels", "-o", str(tmp_path / "out.qrels")])
    assert result.output == f"2 labels written to {tmp_path / 'out.qrels'}\n"
    assert (tmp_path / "out.qrels").read_text() == "Q1 0 d-Q1-001 1 nist\nQ1 0 d-evil 0 nist\n"
    result = runner.invoke(main, ["assess", "import", "-w", str(ws), str(tmp_path / "absent.json")])
    assert (result.exit_code, result.output) == (1, f"Error: {tmp_path / 'absent.json'}: no such file\n")
    result = runner.invoke(main, ["assess", "export", "-w", str(ws), "-o", str(tmp_path / "x")])
    assert result.exit_code == 2 and "give --sample SAMPLE (the pairs with their texts) or --labels" in result.output
    assert export_labels(tmp_path / "empty-ws", tmp_path / "none.qrels").count == 0  # no store: no labels, none made
    assert not (tmp_path / "empty-ws" / "assessments.sqlite").exists()
