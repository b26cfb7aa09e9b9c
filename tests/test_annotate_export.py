"""autojudge-annotate's JSONL export read as people's labels (exampp.formats.annotate_export through
read_labels and `exampp assess import`). The records have the exact shape of the page's buildOutputRecords
(autojudge_annotate/template_js_state.py): JSON.stringify keeps the keys in the order the object literal
gives them."""
from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from exampp.cli import main
from exampp.errors import InputError
from exampp.stores.assessments import AssessmentStore, read_labels

REPORT = {"team_id": "teamA", "run_id": "teamA.run1", "topic_id": "2024-145",
          "sentences": [{"text": "Solar panels turn light into power.", "citations": ["d1"]},
                        {"text": "They are cheap.", "citations": []}],
          "documents": {"d1": {"id": "d1", "text": "Photovoltaics...", "title": "PV", "url": ""}}}
DOCUMENT = {"id": "d1", "text": "Photovoltaics...", "title": "PV", "url": ""}


def report_record(username, rating, comment="", run="teamA.run1"):
    return {"dataset": "rag24", "request_id": "2024-145", "run_id": run, "team_id": "teamA",
            "topic_id": "2024-145", "username": username, "rating": rating, "comment": comment,
            "spans": [{"start": 0, "end": 12, "text": "Solar panels", "sentence_idx": 0}], "report": REPORT}


def document_record(username, rating, comment="", docid="d1"):
    return {"dataset": "rag24", "request_id": "2024-145", "docid": docid, "topic_id": "2024-145",
            "username": username, "rating": rating, "comment": comment, "spans": [], "document": DOCUMENT}


def citation_record(username, rating):
    return {"dataset": "rag24", "request_id": "2024-145", "topic_id": "2024-145", "username": username,
            "rating": rating, "comment": "", "spans": [], "report_spans": [],
            "citation": {"report": REPORT, "sentence_idx": 0,
                         "sentence": {"text": "Solar panels turn light into power.", "citations": ["d1"]},
                         "docid": "d1", "document": DOCUMENT}}


def write(path, records):
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))
    return path


def test_each_kind_of_record_by_hand(tmp_path):
    path = write(tmp_path / "rag24-annotations.jsonl", [
        report_record("ann", "Mostly Good", "good but short"),
        document_record("ann", "Perfect"),
        citation_record("ann", "Bad"),                      # no exampp pair: skipped
        document_record("ann", "Not rated", "see span", docid="d2"),  # exported for its comment: no label
        report_record("bob", "Bad", run="teamB.run2"),
        document_record("bob", "So-so"),
    ])
    labels = read_labels(path)
    assert labels[["query_id", "key", "assessor", "grade", "note"]].values.tolist() == [
        ["2024-145", "teamA.run1/answer", "ann", 2, "good but short"],
        ["2024-145", "d1", "ann", 3, ""],
        ["2024-145", "teamB.run2/answer", "bob", 0, ""],
        ["2024-145", "d1", "bob", 1, ""],
    ]
    assert labels["time"].isna().all()  # the page's download has no times


def test_export_db_rows_carry_their_time(tmp_path):
    row = dict(document_record("ann", "Perfect"), annotation_key="d|2024-145|d1",
               created_at="2025-06-01T10:00:00+00:00", updated_at="2025-06-02T12:30:00+00:00")
    labels = read_labels(write(tmp_path / "db.jsonl", [row]))
    assert labels["time"].tolist() == [pd.Timestamp("2025-06-02T12:30:00", tz="UTC")]


@pytest.mark.parametrize("record, message", [
    (dict(document_record("ann", "Great")), "rating 'Great' is none of 'Perfect', 'Mostly Good', 'So-so', 'Bad', "
                                            "'Not rated'"),
    ({"topic_id": "t", "rating": "Bad"}, "not an autojudge-annotate record"),
    (dict(document_record("ann", "Bad"), topic_id=None, request_id=None), "topic_id null is not a topic id"),
    (dict(document_record("ann", "Bad"), docid=["d1"]), "docid must be a text, found list"),
    (dict(document_record("ann", "Bad"), docid="d 1"), "key 'd 1' contains whitespace"),
    (dict(document_record("ann", "Bad"), updated_at="yesterday"), "the time 'yesterday' is not an ISO 8601 time"),
    (dict(document_record("ann", "Bad"), rating=["Bad"]), "rating list is none of"),  # was a TypeError
])
def test_bad_records_are_told_by_line(tmp_path, record, message):
    path = write(tmp_path / "a.jsonl", [document_record("ann", "Bad", docid="d0"), record])
    with pytest.raises(InputError) as caught:
        read_labels(path)
    assert str(caught.value).startswith(f"{path}:2: ") and message in str(caught.value)


def test_a_pair_rated_twice_by_one_assessor_is_an_error(tmp_path):
    path = write(tmp_path / "a.jsonl", [document_record("ann", "Bad"), document_record("ann", "Perfect")])
    with pytest.raises(InputError, match=r"a.jsonl:2: the pair 2024-145 d1 is labelled twice by ann \(first on line 1"):
        read_labels(path)


def test_only_citations_give_no_labels(tmp_path):
    with pytest.raises(InputError, match="no rated document or report annotation"):
        read_labels(write(tmp_path / "a.jsonl", [citation_record("ann", "Perfect")]))


def test_assess_import_stores_them(tmp_path):
    path = write(tmp_path / "a.jsonl", [report_record("", "Perfect"), document_record("", "So-so")])
    runner = CliRunner()
    unnamed = runner.invoke(main, ["assess", "import", "-w", str(tmp_path), str(path)])
    assert unnamed.exit_code == 1 and "name their assessor with --assessor NAME" in unnamed.output
    result = runner.invoke(main, ["assess", "import", "-w", str(tmp_path), str(path), "--assessor", "nist"])
    assert result.exit_code == 0, result.output
    assert "2 labels added" in result.output
    with AssessmentStore(tmp_path / "assessments.sqlite") as store:
        stored = store.labels()
    assert sorted(stored[["key", "assessor", "grade"]].itertuples(index=False, name=None)) == [
        ("d1", "nist", 1), ("teamA.run1/answer", "nist", 3)]
