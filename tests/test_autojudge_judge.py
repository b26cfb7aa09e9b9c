"""exampp as a TREC AutoJudge judge (exampp.autojudge): its settings from the workflow and the harness's LlmConfig,
AutoJudge's Reports and Requests as exampp's inputs, and the judge run by autojudge_base's own harness
(``auto-judge run``) on the example collection, its leaderboard and qrels equal to what exampp's own commands
give on the same inputs."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLES, SHARED

pytest.importorskip("autojudge_base", reason="the autojudge extra is not installed (scripts/setup.sh ...,autojudge)")

from autojudge_base.llm_config import LlmConfigBase  # noqa: E402
from autojudge_base.report import load_report  # noqa: E402
from autojudge_base.request import load_requests_from_file  # noqa: E402

from exampp.autojudge.conversions import report_lines, request_topics  # noqa: E402
from exampp.autojudge.settings import JudgeSettingError, JudgeSettings  # noqa: E402
from exampp.collection.topics import Topic  # noqa: E402

BANK = EXAMPLES / "question_banks" / "questions.jsonl"
ANSWERS = EXAMPLES / "responses" / "rag-answers.jsonl"
AUTO_JUDGE = Path(sys.executable).parent / "auto-judge"


# --- settings -----------------------------------------------------------------------------------------------

def test_settings_take_exampp_toml_keys_and_the_judges_own(tmp_path):
    settings = JudgeSettings.parse({"grader": "embedding", "depth": 10, "tau": 3, "measures": "EXAM-Cover, n-EXAM",
                                    "outdir": tmp_path, "filebase": "x"})
    assert settings.workspace == tmp_path / "exampp"  # the harness's out-dir
    assert settings.grade == {"grader": "embedding", "depth": 10, "tau": 3}  # no LLM method: no backend added
    assert settings.measures == ("EXAM-Cover", "n-EXAM")


@pytest.mark.parametrize("kwargs, message", [
    ({"gradr": "embedding"}, "unknown judge setting 'gradr'"),
    ({"depth": "ten"}, "key 'depth' (top-k passages of each run to pool) must be an integer, found 'ten'"),
    ({"depth": 0}, "depth"),
    ({"measures": "EXAM-Cover,nDCG"}, "unknown 'nDCG'; choose from EXAM-Cover, n-EXAM, V_strict"),
    ({"responses": "x.jsonl"}, "unknown judge setting 'responses'"),  # the judge writes it from the reports
    ({"progress": "yes"}, "'progress' must be true or false"),
])
def test_a_bad_setting_is_one_clear_error(tmp_path, kwargs, message):
    with pytest.raises(JudgeSettingError, match=None) as caught:
        JudgeSettings.parse({"workspace": str(tmp_path), **kwargs})
    assert message in str(caught.value)


def test_the_workspace_is_the_setting_else_the_out_dir_else_the_llm_cache(tmp_path):
    llm = LlmConfigBase(model="m", cache_dir=tmp_path / "cache")
    assert JudgeSettings.parse({"workspace": str(tmp_path / "w"), "outdir": tmp_path}, llm).workspace == tmp_path / "w"
    assert JudgeSettings.parse({"outdir": tmp_path / "o"}, llm).workspace == tmp_path / "o" / "exampp"
    assert JudgeSettings.parse({}, llm).workspace == tmp_path / "cache" / "exampp"
    with pytest.raises(JudgeSettingError, match="needs a folder to work in"):
        JudgeSettings.parse({}, LlmConfigBase(model="m"))


def test_an_llm_method_is_judged_by_the_harnesses_served_model(tmp_path):
    llm = LlmConfigBase(model="served-model", base_url="http://127.0.0.1:9/v1", api_key="sk-secret")
    settings = JudgeSettings.parse({"workspace": str(tmp_path), "grader": "self-rating", "concurrency": 4}, llm)
    assert settings.grade == {"grader": "self-rating", "concurrency": 4, "backend": "openai", "model": "served-model",
                              "base_url": "http://127.0.0.1:9/v1"}
    assert "sk-secret" not in repr(settings)  # the key stays in the environment (OPENAI_API_KEY)
    assert (settings.llm.name, settings.llm.model) == ("openai", "served-model")
    # a backend named in the settings wins; an offline method keeps its own, the LLM still generating nuggets
    local = JudgeSettings.parse({"workspace": str(tmp_path), "backend": "hf", "model": "/m/flan-t5"}, llm)
    assert (local.grade["backend"], local.grade["model"]) == ("hf", "/m/flan-t5")
    assert (local.llm.name, local.llm.model) == ("hf", "/m/flan-t5")
    offline = JudgeSettings.parse({"workspace": str(tmp_path), "grader": "embedding", "device": "cpu"}, llm)
    assert offline.grade == {"grader": "embedding", "device": "cpu"}
    assert (offline.llm.name, offline.llm.model, offline.llm.options) == \
        ("openai", "served-model", {"base_url": "http://127.0.0.1:9/v1"})
    assert offline.llm.given() == {"base_url": "http://127.0.0.1:9/v1"}  # the embedder's device is not openai's


def test_an_exampp_toml_fills_what_the_settings_leave_out(tmp_path):
    (tmp_path / "exampp.toml").write_text('grader = "embedding"\ndepth = 5\ntopics = "t.jsonl"\n', encoding="utf-8")
    settings = JudgeSettings.parse({"workspace": str(tmp_path), "config": str(tmp_path / "exampp.toml"),
                                    "depth": 7}, LlmConfigBase(model="m"))
    assert settings.grade == {"grader": "embedding", "depth": 7}  # topics: the judge writes the Requests' own


# --- Reports and Requests ---------------------------------------------------------------------------------------

REPORTS = [  # one per report format autojudge_base loads
    {"metadata": {"team_id": "t", "run_id": "rag24", "narrative_id": "T1", "narrative": "n", "type": "automatic"},
     "references": ["d1", "d2", "d3"], "answer": [{"text": "First.", "citations": [2, 0]}, {"text": "Second.",
                                                                                           "citations": []}]},
    {"metadata": {"team_id": "t", "run_id": "ragtime", "topic_id": "T1"}, "references": ["d1", "d2"],
     "responses": [{"text": "Only one.", "citations": {"d1": 0.2, "d2": 0.9}}]},
    {"metadata": {"team_id": "t", "run_id": "neuclir", "topic_id": "7"},
     "responses": [{"text": "Cited.", "citations": ["d9", "d8"]}]},
]


def test_reports_of_every_format_written_back_are_read_by_exampp_as_answers(tmp_path):
    from exampp.formats.rag_responses import read_responses

    path = tmp_path / "reports.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in REPORTS), encoding="utf-8")
    written = tmp_path / "written.jsonl"  # what the judge hands exampp's jobs
    written.write_text("".join(report_lines(load_report(path))), encoding="utf-8")
    assert [(r.run_id, r.query_id, r.text, [list(s.citations) for s in r.sentences])
            for r in read_responses(written)] == [
        ("rag24", "T1", "First. Second.", [["d3", "d1"], []]),
        ("ragtime", "T1", "Only one.", [["d2", "d1"]]),  # by confidence, highest first
        ("neuclir", "7", "Cited.", [["d9", "d8"]]),
    ]


def test_requests_become_topics(tmp_path):
    path = tmp_path / "requests.jsonl"
    path.write_text(json.dumps({"request_id": "T1", "title": "solar power", "problem_statement": "What is it?",
                                "background": "A student."}) + "\n" + json.dumps({"request_id": "T2", "title": "wind"})
                    + "\n", encoding="utf-8")
    assert request_topics(load_requests_from_file(path)) == [
        Topic("T1", "solar power", description="What is it?", narrative="A student."), Topic("T2", "wind")]


# --- the harness runs the judge ------------------------------------------------------------------------------------

SHIPPED = EXAMPLES / "autojudge"  # the example collection's answers as AutoJudge reports, its topics as Requests


def test_the_shipped_reports_and_requests_are_the_example_collections_answers_and_topics():
    from exampp.formats.rag_responses import read_responses
    from exampp.formats.topic_files import read_topics

    assert [(r.run_id, r.query_id, r.text) for r in read_responses(SHIPPED / "reports")] == \
        [(r.run_id, r.query_id, r.text) for r in read_responses(ANSWERS)]
    assert request_topics(load_requests_from_file(SHIPPED / "requests.jsonl")) == \
        [Topic(t.query_id, t.text) for t in read_topics(EXAMPLES / "topics" / "topics.jsonl").values()]


def run_harness(tmp_path: Path, reports: Path, requests: Path, workflow: str, *extra: str,
                env: dict[str, str] | None = None) -> Path:
    if not AUTO_JUDGE.exists():
        pytest.skip(f"autojudge_base's command is not beside {sys.executable}")
    (tmp_path / "workflow.yml").write_text(workflow, encoding="utf-8")
    out = tmp_path / "out"
    command = [str(AUTO_JUDGE), "run", "-w", str(tmp_path / "workflow.yml"), "--rag-responses", str(reports),
               "--rag-topics", str(requests), "--out-dir", str(out), "--filebase", "exampp",
               "--leaderboard-format", "tot", *extra]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=tmp_path,
                          env={**os.environ, **(env or {})})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


def read_tot(path: Path) -> dict[tuple[str, str, str], float]:
    """``run measure topic value`` lines."""
    rows = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        run, measure, topic, value = line.split()
        rows[run, measure, topic] = float(value)
    return rows


def read_qrels(path: Path) -> dict[tuple[str, str], int]:
    rows = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        topic, _, doc, grade = line.split()
        rows[topic, doc] = int(grade)
    return rows


@pytest.mark.slow
def test_the_harness_runs_the_judge_and_it_equals_exampps_own_commands(tmp_path):
    from click.testing import CliRunner

    from exampp.api.scores import CoverJob
    from exampp.cli import main
    from exampp.segment import load_responses

    # the shipped workflow, its bank's path made absolute (the harness runs in tmp_path)
    workflow = (SHIPPED / "workflow.yml").read_text(encoding="utf-8")
    assert "bank: question_banks/questions.jsonl" in workflow
    out = run_harness(tmp_path, SHIPPED / "reports", SHIPPED / "requests.jsonl",
                      workflow.replace("bank: question_banks/questions.jsonl", f'bank: "{BANK}"'))
    board = read_tot(out / "exampp.eval.txt")
    assert {measure for _, measure, _ in board} == {"EXAM-Cover", "n-EXAM"}

    # exampp's own command on the same answers (its own responses file), bank and grader, in another workspace
    ws = tmp_path / "ws"
    result = CliRunner().invoke(main, ["grade", "-w", str(ws), "--responses", str(ANSWERS), "--bank", str(BANK),
                                       "--topics", str(EXAMPLES / "topics" / "topics.jsonl"), "--grader", "embedding",
                                       "--no-progress", "--format", "json"])
    assert result.exit_code == 0, result.output
    means = {row["run"]: row["mean"] for row in json.loads(result.stdout[:result.stdout.rindex("]") + 1])}
    assert len(means) == 3
    assert {run: round(board[run, "EXAM-Cover", "all"], 12) for run in means} == means
    runs = load_responses(ANSWERS).runs
    for normalized, measure in ((False, "EXAM-Cover"), (True, "n-EXAM")):
        per_query = CoverJob(ws, runs, normalized=normalized).run().per_query
        expected = {(run, measure, qid): value for run, qid, value in
                    zip(per_query["run"], per_query["query_id"], per_query["cover"])}
        assert {key: value for key, value in board.items() if key[1] == measure and key[2] != "all"} == expected
    # the qrels: the EXAM-Qrels of the answers' passages, as exampp grade writes them
    assert read_qrels(out / "exampp.qrels.txt") == read_qrels(ws / "qrels" / "responses.qrels")
    # the judge's workspace holds what it graded: a second harness run grades nothing again
    assert (out / "exampp" / "grades.sqlite").exists()


@pytest.mark.slow
@pytest.mark.shared
def test_the_harness_judges_rag24_with_nuggets_offline_as_exampp_nuggets_does(tmp_path):
    """TREC 2024 RAG answers and the track's nuggets, V_strict with the offline nugget assignment: equal to
    ``exampp nuggets assign --method nugget-embedding`` then ``exampp nuggets score``."""
    from click.testing import CliRunner

    from exampp.cli import main

    track = SHARED / "data" / "rag24" / "nugget-assignments.dev.jsonl.gz"
    if not track.exists():
        pytest.skip(f"{track} is absent (../shared)")
    import gzip

    folder = tmp_path / "in"
    (folder / "reports").mkdir(parents=True)
    topics: dict[str, str] = {}
    with gzip.open(track, "rt", encoding="utf-8") as lines, \
            open(folder / "reports" / "answers.jsonl", "w", encoding="utf-8") as out:
        for line in lines:
            answer = json.loads(line)
            topics.setdefault(answer["qid"], answer["query"])
            out.write(json.dumps({"metadata": {"team_id": "rag24", "run_id": answer["run_id"],
                                               "topic_id": answer["qid"]},
                                  "answer": [{"text": answer["answer_text"], "citations": []}]}) + "\n")
    requests = folder / "requests.jsonl"
    requests.write_text("".join(json.dumps({"request_id": q, "title": t}) + "\n" for q, t in topics.items()),
                        encoding="utf-8")
    runner = CliRunner()
    banks = folder / "nuggets.jsonl"  # the track's nuggets as AutoJudge NuggetBanks, through exampp bank export
    exported = runner.invoke(main, ["bank", "export", str(track), "-o", str(banks), "--format", "autojudge"])
    assert exported.exit_code == 0, exported.output

    out = run_harness(tmp_path, folder / "reports", requests, """\
judge_class: "exampp.autojudge.ExamppJudge"
create_nuggets: false
create_qrels: false
judge: true
settings:
  grader: embedding
  measures: "EXAM-Cover,V_strict"
  nugget_method: nugget-embedding
""", "--nugget-banks", str(banks))
    board = read_tot(out / "exampp.eval.txt")

    ws = tmp_path / "ws"
    assigned = tmp_path / "assigned.jsonl.gz"
    done = runner.invoke(main, ["nuggets", "assign", str(track), "-w", str(ws), "--method", "nugget-embedding",
                                "-o", str(assigned), "--no-progress"])
    assert done.exit_code == 0, done.output
    scored = runner.invoke(main, ["nuggets", "score", str(assigned), "--per-query", "--format", "json"])
    assert scored.exit_code == 0, scored.output
    rows = json.loads(scored.stdout)
    expected = {(row["run"], "V_strict", row["query_id"]): row["V_strict"] for row in rows}
    got = {key: value for key, value in board.items() if key[1] == "V_strict" and key[2] != "all"}
    assert len(expected) == 487
    assert {key: float(f"{got[key]:.12g}") for key in expected} == expected  # the command prints 12 digits
    assert all(value == 0.0 for key, value in got.items() if key not in expected)  # unanswered: 0
    graded = runner.invoke(main, ["grade", "-w", str(tmp_path / "ws2"), "--responses", str(track), "--bank",
                                  str(track), "--grader", "embedding", "--no-progress", "--format", "json"])
    assert graded.exit_code == 0, graded.output
    means = {row["run"]: row["mean"] for row in json.loads(graded.stdout[:graded.stdout.rindex("]") + 1])}
    assert len(means) == 45
    assert {run: round(board[run, "EXAM-Cover", "all"], 12) for run in means} == means


QUERY = re.compile(r"Explore the query '(.*?)'\.")


def generated(seen) -> str:
    """The served model's questions for a topic: two, named after its title."""
    title = QUERY.search(seen.messages[0]["content"]).group(1)
    return "```json\n" + json.dumps({"questions": [f"What is {title}?", f"Why does {title} matter?"]}) + "\n```"


@pytest.mark.slow
def test_the_harness_creates_nuggets_with_its_served_model_and_judges_with_them(tmp_path):
    """create_nuggets asks the model the harness names in the environment (a loopback OpenAI-compatible
    server), through exampp bank generate; the judge grades against those nuggets; the key is never stored."""
    from autojudge_base.nugget_data import NuggetBanks
    from autojudge_base.nugget_data.io import load_nugget_banks_generic

    from exampp.testing.openai_server import OpenAIServer

    secret = "sk-exampp-test-0123456789"
    with OpenAIServer(name="gen", reply=generated, api_key=secret) as server:
        out = run_harness(tmp_path, SHIPPED / "reports", SHIPPED / "requests.jsonl", """\
judge_class: "exampp.autojudge.ExamppJudge"
create_nuggets: true
create_qrels: false
judge: true
settings:
  grader: embedding
  concurrency: 2
""", env={"OPENAI_BASE_URL": server.url, "OPENAI_MODEL": "gen", "OPENAI_API_KEY": secret})
        asked = len(server.completions())
    assert asked == 6  # one request per topic (the Requests have no subtopics: the query prompt)
    banks = load_nugget_banks_generic(out / "exampp.nuggets.jsonl", NuggetBanks)
    titles = {t["request_id"]: t["title"]
              for t in map(json.loads, (SHIPPED / "requests.jsonl").read_text(encoding="utf-8").splitlines())}
    assert {qid: sorted(bank.nugget_bank) for qid, bank in banks.banks.items()} == \
        {qid: sorted([f"What is {title}?", f"Why does {title} matter?"]) for qid, title in titles.items()}
    board = read_tot(out / "exampp.eval.txt")
    assert {topic for _, _, topic in board} == set(titles) | {"all"}
    for path in (out / "exampp").rglob("*"):  # the workspace: bank, journal, store, inputs
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path


@pytest.mark.slow
def test_a_folder_of_reports_is_read_wherever_exampp_reads_answers(tmp_path):
    """exampp grade and meta-evaluate take the AutoJudge reports' folder as --responses and give what the same
    answers in exampp's own responses file give."""
    from click.testing import CliRunner

    from exampp.cli import main

    official = tmp_path / "official.tsv"  # a leaderboard of the three answer runs
    official.write_text("rag-thorough\t0.9\nrag-brief\t0.5\nrag-offtopic\t0.1\n", encoding="utf-8")
    outputs = {}
    for name, answers in (("reports", SHIPPED / "reports"), ("responses", ANSWERS)):
        ws = tmp_path / name
        common = ["-w", str(ws), "--responses", str(answers)]
        graded = CliRunner().invoke(main, ["grade", *common, "--bank", str(BANK), "--grader", "embedding",
                                           "--no-progress", "--format", "tsv"])
        assert graded.exit_code == 0, graded.output
        meta = CliRunner().invoke(main, ["meta-evaluate", *common, "--bank", str(BANK), "--official", str(official),
                                         "--family", "cover", "--no-progress", "--format", "tsv"])
        assert meta.exit_code == 0, meta.output
        outputs[name] = (graded.stdout, meta.stdout, (ws / "qrels" / "responses.qrels").read_text(encoding="utf-8"))
    assert outputs["reports"] == outputs["responses"]
    assert "rag-thorough" in outputs["reports"][0] and "cover" in outputs["reports"][1]
