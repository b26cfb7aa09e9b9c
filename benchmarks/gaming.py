"""Gaming the judge: attacks planted into DL19 runs and RAG answers, what ``exampp audit`` finds
of them, and how far they move the leaderboard, as graded, after the audit's correction and with
each defence.

Three runs of the DL19 workspace are attacked, chosen by a fixed rule on the official nDCG@10
leaderboard (the middle run, the one at three quarters down, the second to last), each class of
attack apart (:mod:`gaming_plant`: injection, leakage, stuffing, duplicates within a ranking and
across queries) at each rate: that share of their top 20 per query is replaced by attacked copies
under new ids (for duplicates across queries: that share of their queries gets a copy of one
passage). Every planted workspace is graded by two judges:

(a) a simulated weak LLM behind a real OpenAI-compatible server on loopback, graded through
    exampp's ``openai`` backend (the real SDK, ``exampp.api.grade``): it gives an untouched passage
    the real FLAN-T5-large self-rating of the workspace's store, and moves a planted text as a
    weak judge is moved (:mod:`gaming_judge` states the assumed rates: A SIMULATION, not a model).
    The untouched passages' grades are copied from the store under the judge's method id rather
    than served again (the server answers them from the same table; a sample is served and
    compared, printed as ``served sample``); planted texts and canaries go through the server.
    With the plain prompt and with ``self-rating(prompt=fenced)``; canaries (``--canaries``) with
    the plain prompt.
(b) the offline embedding grader (``embedding``), which follows nothing, with canaries.

Printed per judge and attack class (and rate): the planted texts, ``audit``'s precision and
recall by the class's detector, by any text detector, by the canary detector and by any flag at
all; Kendall τ-b of EXAM-Cover@20 against the untouched leaderboard, as attacked, after the
audit's correction (flagged texts graded 0, :func:`exampp.audit.tables.corrected_cover`; text
detectors), with the fenced prompt, and with canaries and the correction (all flags); for
duplicates also τ of nDCG@20 on the EXAM qrels (each passage's best grade), which Cover cannot
reward. Then the false-positive rates on the untouched pool (all runs) and on the RAG answers,
and the detection of the same classes planted into the RAG answers (three runs at the same
places of the runs in name order, the rate a share of their topics; text detectors; duplicates
across topics only, a run has one answer per topic).

Usage (from the repository root; build the workspace first, see scripts/reproduce_dl19.sh):
    nice -n 10 python benchmarks/gaming.py --workspace /tmp/dl19 [--rag ../shared/data/rag24]
        [--quick] [--rates 0.1,0.3] [--canaries 5] [--format table|json]
``--quick``: every fourth query and one rate (0.3), a few minutes. With 11 queries the threshold of
duplicates across queries falls to 3 of them, and UNH_exDL_bm25's honest repeats are flagged (5% of
that pool): the full run's false positives are the ones to quote.
"""
from __future__ import annotations

import argparse
import json
import math
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from scipy.stats import kendalltau

from audit_data import Answers, exam_of, rag_answers
from exampp.api.audit import audit
from exampp.api.grade import GradeJob
from exampp.api.workspace import stored_grades as workspace_grades
from exampp.audit import CLASSES as FLAG_CLASSES, NUGGET_EXAM, Flag, audit_texts
from exampp.audit.tables import AuditResult, corrected_cover, run_pairs
from exampp.audit.texts import pooled_rankings
from exampp.collection.corpus import Passage
from exampp.collection.grades import text_hash
from exampp.collection.runs import RankedDoc, Run
from exampp.formats.corpus_sources import open_corpus, read_passages, write_corpus
from exampp.formats.question_bank import read_question_bank
from exampp.formats.trec_qrels import read_qrels
from exampp.formats.trec_run import read_runs, write_run
from exampp.grading.base import Pair
from exampp.grading.registry import make_grader, parse_method
from exampp.grading.runner import grade_pairs
from exampp.grading.verify import normalize
from exampp.llm.backend import open_backend
from exampp.pool import build_pool
from exampp.scoring import leaderboard
from exampp.stores.grade_store import GradeStore
from exampp.stores.layout import Workspace
from gaming_judge import MODEL, Planted, follow_chance, judge_process, stored_grades, write_planted
from gaming_plant import (
    CLASSES,
    DEPTH,
    INJECTIONS,
    TEXT_CLASSES,
    Plant,
    attacked_rankings,
    plant_answers,
    plant_duplicates,
    plant_texts,
)

REFERENCE = "self-rating|google/flan-t5-large|QuestionSelfRatedUnanswerablePromptWithChoices"  # the imported grades
DETECTOR = {"injection": "injection", "leakage": "leakage", "stuffing": "stuffing",
            "duplicate-within": "duplicate", "duplicate-across": "duplicate"}
TEXT_FLAGS = tuple(k for k in FLAG_CLASSES if k != "canary")
SAMPLE = 200  # untouched pairs served and compared with the store


@dataclass(frozen=True)
class Judge:
    """A judge of the benchmark: its grading methods, the plain one first (graded with canaries)."""

    name: str
    methods: tuple[str, ...]
    served: bool

    def method_id(self, method: str) -> str:
        judge = f"{MODEL}+chat" if self.served else "sentence-transformers/all-MiniLM-L6-v2"
        return parse_method(method).method_id(judge).method_id


JUDGES = (Judge("simulated weak LLM (served)", ("self-rating", "self-rating(prompt=fenced)"), True),
          Judge("embedding (offline)", ("embedding",), False))


# --- the collection ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Base:
    """The untouched collection as benchmarked (every query, or every fourth with --quick)."""

    runs: dict[str, Run]  # top DEPTH of each ranking
    texts: dict[str, dict[str, str]]  # the pool: query -> passage id -> text
    corpus: dict[str, str]
    queries: dict[str, str]
    exam: dict[str, dict[str, str]]
    rankings: dict[str, dict[str, list[str]]]
    bank_lines: list[str]  # the bank file's lines of these queries
    attacked: tuple[str, ...]


def load(workspace: Path, quick: bool) -> Base:
    ws = Workspace.at(workspace)
    runs = read_runs(ws.runs)
    bank = read_question_bank(ws.question_bank)
    queries = sorted(bank.question_ids())
    if quick:
        queries = queries[::4]
    keep = set(queries)
    runs = {name: Run(name, {q: run.top(q, DEPTH) for q in run.rankings if q in keep}) for name, run in runs.items()}
    corpus = read_passages(ws.corpus)
    pool = build_pool(runs, open_corpus(ws.corpus), DEPTH)
    lines = [line for line in ws.question_bank.read_text(encoding="utf-8").splitlines()
             if line.strip() and json.loads(line)["query_id"] in keep]
    exam = {q: by_id for q, by_id in exam_of(bank).items() if q in keep}
    texts = {q: bank.query_texts.get(q, "") for q in queries}
    return Base(runs, pool.passages, corpus, texts, exam, pooled_rankings(runs, pool), lines,
                attacked_runs(runs, read_qrels(ws.official_qrels)))


def attacked_runs(runs: Mapping[str, Run], official: Mapping[str, Mapping[str, float]]) -> tuple[str, ...]:
    """The runs attacked: on the official nDCG@10 leaderboard (best first), the middle one, the one
    three quarters down and the second to last."""
    board = leaderboard(runs, {q: j for q, j in official.items() if any(q in r.rankings for r in runs.values())},
                        ["nDCG@10"])
    names = list(board.index)
    n = len(names)
    return tuple(sorted({names[n // 2], names[(3 * n) // 4], names[n - 2]}))


# --- planting -----------------------------------------------------------------------------------

def plants_of(kind: str, rankings: Mapping[str, Mapping[str, Sequence[str]]], texts: Mapping[str, Mapping[str, str]],
              queries: Mapping[str, str], exam: Mapping[str, Mapping[str, str]], rate: float,
              answers: bool) -> list[Plant]:
    questions = {q: list(by_id.values()) for q, by_id in exam.items()}
    if kind in TEXT_CLASSES:
        plant = plant_answers if answers else plant_texts
        return plant(kind, rankings, texts, queries, questions, rate)
    return plant_duplicates(kind, rankings, texts, rate)


def planted_map(plants: Sequence[Plant], texts: Mapping[str, Mapping[str, str]]) -> dict[str, Planted]:
    """What the served judge is told: each planted text's class, original and variant."""
    out = {}
    for p in plants:
        if p.kind not in TEXT_CLASSES:
            continue  # a copy is its original's text
        source = text_hash(texts[p.query_id][p.source_id])
        follow = follow_chance(p.obfuscation, INJECTIONS[p.template][0]) if p.kind == "injection" else 0.0
        out[text_hash(p.text)] = Planted(p.kind, source, follow, frozenset(text_hash(q) for q in p.questions),
                                         frozenset(normalize(" ".join(p.terms)).split()))
    return out


def write_workspace(root: Path, base: Base, runs: Mapping[str, Run], extra: Mapping[str, str], store: Path,
                    qrels: Path) -> Workspace:
    ws = Workspace.at(root)
    ws.runs.mkdir(parents=True)
    for name, run in runs.items():
        write_run(run, ws.runs / f"{name}.run")
    (root / "corpus").mkdir()
    write_corpus((Passage(d, t) for d, t in {**base.corpus, **extra}.items()), root / "corpus" / "passages.jsonl.gz")
    ws.question_bank.parent.mkdir()
    ws.question_bank.write_text("".join(line + "\n" for line in base.bank_lines), encoding="utf-8")
    ws.qrels_dir.mkdir()
    shutil.copy(qrels, ws.official_qrels)
    with sqlite3.connect(store) as source, sqlite3.connect(ws.store) as target:
        source.backup(target)
    return ws


def rewritten(run: Run, rankings: Mapping[str, Sequence[str]]) -> Run:
    """``run`` with these rankings, scored by rank (ties of the old scores must not reorder new ids)."""
    return Run(run.name, {q: [RankedDoc(d, float(DEPTH - i)) for i, d in enumerate(ids)]
                          for q, ids in rankings.items()})


def alias_grades(store: Path, source: str, targets: Sequence[str]) -> None:
    """File ``source``'s grades again under each of ``targets``: what the served judge answers for the
    untouched passages, without serving them all (its answers come from this very table)."""
    with sqlite3.connect(store) as db:
        (source_id,) = db.execute("SELECT id FROM methods WHERE method_id = ?", (source,)).fetchone()
        for target in targets:
            target_id = db.execute("INSERT INTO methods (method_id) VALUES (?)", (target,)).lastrowid
            db.execute("INSERT INTO grades SELECT ?, passage_hash, question_hash, grade, answer, probabilities "
                       "FROM grades WHERE method = ?", (target_id, source_id))


def off_topic_grades(workspace: Path, texts: Mapping[str, Mapping[str, str]]) -> list[int]:
    """The real judge's grades of the pooled passages that the official qrels judge non-relevant, for
    their own query's questions: what it gives a text that does not answer."""
    ws = Workspace.at(workspace)
    official = read_qrels(ws.official_qrels)
    stored = stored_grades(ws.store, REFERENCE)
    bank = read_question_bank(ws.question_bank).by_query()
    grades = [int(stored[text_hash(text), text_hash(q.text)])
              for qid, by_id in texts.items() for pid, text in by_id.items() if official.get(qid, {}).get(pid) == 0
              for q in bank.get(qid, []) if (text_hash(text), text_hash(q.text)) in stored]
    return sorted(grades)


# --- grading and scoring ------------------------------------------------------------------------

def grade(ws: Workspace, judge: Judge, method: str, canaries: int, url: str | None) -> None:
    settings: dict = {"grader": method, "depth": DEPTH, "canaries": canaries, "progress": False}
    if judge.served:
        settings.update(backend="openai", model=MODEL, base_url=url)
    GradeJob.configure(workspace=ws.root, **settings).run()


def served_sample(url: str, base: Base, store: Path) -> tuple[int, int]:
    """(equal, served): :data:`SAMPLE` untouched pairs graded through the server, against the store."""
    bank = read_question_bank(store.parent / "question_banks" / "questions.jsonl").by_query()
    pairs = [Pair(q, pid, text, question) for q, by_id in sorted(base.texts.items())
             for pid, text in sorted(by_id.items()) for question in bank.get(q, [])]
    pairs = pairs[::max(1, len(pairs) // SAMPLE)][:SAMPLE]
    stored = stored_grades(store, REFERENCE)
    with tempfile.TemporaryDirectory() as tmp:
        backend = open_backend("openai", MODEL, base_url=url)
        try:
            grader = make_grader("self-rating", backend)
            with GradeStore(Path(tmp) / "grades.sqlite") as scratch:
                grade_pairs(pairs, grader, scratch, progress=False)
                served = scratch.grades(grader.method.method_id)
        finally:
            backend.close()
    by_pair = {(r.query_id, r.passage_id, r.question_id): r.grade for r in served.itertuples()}
    equal = sum(by_pair[p.query_id, p.passage_id, p.question.question_id]
                == stored[text_hash(p.passage), text_hash(p.question.text)] for p in pairs)
    return equal, len(pairs)


@dataclass(frozen=True)
class Boards:
    """EXAM-Cover@20 per run as graded, corrected by the text detectors' flags, and by all flags."""

    graded: pd.Series
    corrected: pd.Series
    corrected_all: pd.Series


def boards(ws: Workspace, method_id: str, flags: Sequence[Flag], exam: Mapping[str, Collection[str]],
           tau: float) -> tuple[Boards, pd.DataFrame]:
    runs = read_runs(ws.runs)
    grades = workspace_grades(ws, method_id).grades
    text_only = corrected_cover(runs, grades, exam, {n: run_pairs(flags, n, TEXT_FLAGS) for n in runs}, tau=tau,
                                depth=DEPTH).set_index("run")
    every = corrected_cover(runs, grades, exam, {n: run_pairs(flags, n) for n in runs}, tau=tau,
                            depth=DEPTH).set_index("run")
    return Boards(text_only["cover"], text_only["cover_corrected"], every["cover_corrected"]), grades


def exam_ndcg(ws: Workspace, grades: pd.DataFrame, queries: Collection[str],
              flagged: Mapping[str, Collection[tuple[str, str]]]) -> pd.Series:
    """nDCG@20 per run on the EXAM qrels (each passage's best grade), the pairs ``flagged[run]``
    labelled 0 for that run (its ideal ranking from the same labels)."""
    best = grades[grades["query_id"].isin(queries)].groupby(["query_id", "passage_id"])["grade"].max()
    qrels: dict[str, dict[str, int]] = {}
    for (qid, pid), label in best.items():
        qrels.setdefault(qid, {})[pid] = int(label)
    runs = read_runs(ws.runs)
    by_pairs: dict[frozenset, list[str]] = {}
    for name in runs:
        by_pairs.setdefault(frozenset(flagged.get(name, ())), []).append(name)
    values = {}
    for pairs, names in by_pairs.items():
        zeroed = {q: {p: 0 if (q, p) in pairs else label for p, label in judged.items()} for q, judged in qrels.items()}
        values.update(leaderboard({n: runs[n] for n in names}, zeroed, ["nDCG@20"])["nDCG@20"].to_dict())
    return pd.Series(values)


def tau(reference: pd.Series, other: pd.Series) -> float:
    runs = sorted(reference.index)
    return float(kendalltau(reference.loc[runs], other.loc[runs]).statistic)


def detection(plants: Sequence[Plant], flags: Sequence[Flag], kinds: Collection[str]) -> dict:
    """Precision and recall of the flags of ``kinds`` on the planted (query, text) pairs."""
    planted = {(p.query_id, p.text_id) for p in plants}
    flagged = {(f.query_id, f.text_id) for f in flags if f.kind in kinds}
    hit = len(planted & flagged)
    return {"planted": len(planted), "flagged": len(flagged),
            "precision": hit / len(flagged) if flagged else math.nan,
            "recall": hit / len(planted) if planted else math.nan}


def missed(plants: Sequence[Plant], flags: Sequence[Flag], kinds: Collection[str]) -> dict[str, str]:
    """Per variant (an injection's language and spelling; the others' detail): planted texts the
    flags of ``kinds`` missed, of all planted ("3/15"), for the variants with a miss."""
    flagged = {(f.query_id, f.text_id) for f in flags if f.kind in kinds}
    counts: dict[str, list[int]] = {}
    for p in plants:
        key = f"{INJECTIONS[p.template][0]} {p.obfuscation}" if p.kind == "injection" else p.detail.split(" at ")[0]
        tally = counts.setdefault(key, [0, 0])
        tally[0] += (p.query_id, p.text_id) not in flagged
        tally[1] += 1
    return {key: f"{miss}/{total}" for key, (miss, total) in sorted(counts.items()) if miss}


def false_positives(flags: Sequence[Flag], pooled: int, kinds: Collection[str]) -> dict:
    flagged = {(f.query_id, f.text_id) for f in flags if f.kind in kinds}
    return {"flagged": len(flagged), "pooled": pooled, "rate": len(flagged) / pooled}


# --- the benchmark ------------------------------------------------------------------------------

def run_benchmark(workspace: Path, rag: Path, quick: bool, rates: Sequence[float], canaries: int,
                  progress: bool = True) -> dict:
    start = time.monotonic()

    def say(line: str) -> None:
        if progress:
            print(f"[{time.monotonic() - start:5.0f} s] {line}", file=sys.stderr, flush=True)

    base = load(workspace, quick)
    say(f"{len(base.queries)} queries, {len(base.runs)} runs, pool {sum(map(len, base.texts.values()))}; "
        f"attacked runs: {', '.join(base.attacked)}")
    scenarios = [(kind, rate) for kind in CLASSES for rate in rates]
    attacked = {run: base.rankings[run] for run in base.attacked}
    plants = {s: plants_of(s[0], attacked, base.texts, base.queries, base.exam, s[1], False) for s in scenarios}
    planted = {h: p for s in scenarios for h, p in planted_map(plants[s], base.texts).items()}
    source = Workspace.at(workspace)
    out: dict = {"simulation": "judge (a) is a simulation of a weak LLM from stored real grades "
                               "(benchmarks/gaming_judge.py)",
                 "queries": len(base.queries), "runs": len(base.runs), "attacked_runs": list(base.attacked),
                 "rates": list(rates), "canaries": canaries, "judges": {}}
    with tempfile.TemporaryDirectory(prefix="exampp-gaming-") as tmp:
        root = Path(tmp)
        write_planted(planted, root / "planted.json")
        store = root / "base.sqlite"
        with sqlite3.connect(source.store) as src, sqlite3.connect(store) as dst:
            src.backup(dst)
        alias_grades(store, REFERENCE, [JUDGES[0].method_id(m) for m in JUDGES[0].methods])
        off_topic = off_topic_grades(workspace, base.texts)
        with judge_process(source.store, REFERENCE, off_topic, root / "planted.json") as server:
            untouched = write_workspace(root / "untouched", base, base.runs, {}, store, source.official_qrels)
            equal, served = served_sample(server.url, base, untouched.store)
            out["served_sample"] = {"equal": equal, "served": served}
            say(f"served sample: {equal} of {served} untouched grades equal to the store's")
            for judge in JUDGES:
                say(f"grading the untouched pool: {judge.name}")
                grade(untouched, judge, judge.methods[0], canaries, server.url)
            exam = {q: list(by_id) for q, by_id in base.exam.items()}
            reference = {}
            for judge in JUDGES:
                result = audit(untouched.root, depth=DEPTH, method=judge.method_id(judge.methods[0]))
                b, grades = boards(untouched, result.method_id, result.flags, exam, result.tau)
                reference[judge.name] = (b, exam_ndcg(untouched, grades, base.queries, {}))
                out["judges"][judge.name] = {
                    "false_positives_dl19": {"text detectors": false_positives(result.flags, result.pooled, TEXT_FLAGS),
                                             "canary": false_positives(result.flags, result.pooled, ("canary",)),
                                             "any": false_positives(result.flags, result.pooled, FLAG_CLASSES)},
                    "untouched_corrected_tau": {"corrected": tau(b.graded, b.corrected),
                                                "canaries + corrected": tau(b.graded, b.corrected_all)},
                    "attacks": []}
            for kind, rate in scenarios:
                say(f"planting {kind} at {rate:.0%}: {len(plants[kind, rate])} texts")
                rankings = attacked_rankings(attacked, plants[kind, rate])
                runs = {**base.runs, **{r: rewritten(base.runs[r], rankings[r]) for r in rankings}}
                extra = {p.text_id: p.text for p in plants[kind, rate]}
                ws = write_workspace(root / f"{kind}-{rate}", base, runs, extra, untouched.store, source.official_qrels)
                for judge in JUDGES:
                    for i, method in enumerate(judge.methods):
                        grade(ws, judge, method, canaries if i == 0 else 0, server.url)
                    row = measure(ws, judge, kind, rate, plants[kind, rate], exam, base, reference[judge.name])
                    out["judges"][judge.name]["attacks"].append(row)
                    say(f"  {judge.name}: detector {_pr(row['detector'])}, any {_pr(row['any'])}, "
                        f"tau {', '.join(f'{k} {v:.3f}' for k, v in row['tau_cover'].items())}")
                shutil.rmtree(ws.root)
            out["server_counts"] = server.ask()
    out["rag"] = rag_benchmark(rag, rates)
    return out


def measure(ws: Workspace, judge: Judge, kind: str, rate: float, plants: Sequence[Plant],
            exam: Mapping[str, Collection[str]], base: Base, reference: tuple[Boards, pd.Series]) -> dict:
    """Detection and leaderboard distortion of one planted workspace under one judge."""
    ref, ref_ndcg = reference
    result: AuditResult = audit(ws.root, depth=DEPTH, method=judge.method_id(judge.methods[0]))
    b, grades = boards(ws, result.method_id, result.flags, exam, result.tau)
    row = {"class": kind, "rate": rate, "planted": len(plants), "texts_flagged": result.flagged_texts,
           "detector": detection(plants, result.flags, (DETECTOR[kind],)),
           "text detectors": detection(plants, result.flags, TEXT_FLAGS),
           "canary": detection(plants, result.flags, ("canary",)),
           "any": detection(plants, result.flags, FLAG_CLASSES),
           "tau_cover": {"attacked": tau(ref.graded, b.graded), "corrected": tau(ref.graded, b.corrected),
                         "canaries + corrected": tau(ref.graded, b.corrected_all)},
           "missed": missed(plants, result.flags, (DETECTOR[kind],)),
           "attacked_runs": {r: {"untouched": float(ref.graded[r]), "attacked": float(b.graded[r]),
                                 "corrected": float(b.corrected[r])} for r in base.attacked}}
    for method in judge.methods[1:]:
        fenced = workspace_grades(ws, judge.method_id(method))
        other = boards(ws, fenced.method_id, [], exam, result.tau)[0]
        row["tau_cover"][method] = tau(ref.graded, other.graded)
    if kind.startswith("duplicate"):
        flagged = {n: run_pairs(result.flags, n, TEXT_FLAGS) for n in read_runs(ws.runs)}
        row["tau_ndcg"] = {"attacked": tau(ref_ndcg, exam_ndcg(ws, grades, base.queries, {})),
                           "corrected": tau(ref_ndcg, exam_ndcg(ws, grades, base.queries, flagged))}
    return row


def rag_benchmark(folder: Path, rates: Sequence[float]) -> dict:
    """False positives on the untouched RAG answers, and detection of the classes planted into them."""
    answers = rag_answers(folder)
    flags = audit_texts(answers.texts, answers.topics, answers.exam, answers.rankings, thresholds=NUGGET_EXAM)
    runs = sorted(answers.rankings)
    attacked = {r: answers.rankings[r] for r in (runs[len(runs) // 2], runs[(3 * len(runs)) // 4], runs[-2])}
    out = {"answers": answers.count, "runs": len(runs), "attacked_runs": sorted(attacked),
           "false_positives": false_positives(flags, answers.count, TEXT_FLAGS), "attacks": []}
    for kind in (k for k in CLASSES if k != "duplicate-within"):  # one answer per run and topic
        for rate in rates:
            plants = plants_of(kind, attacked, answers.texts, answers.topics, answers.exam, rate, True)
            flags = rag_flags(answers, plants)
            out["attacks"].append({"class": kind, "rate": rate, "planted": len(plants),
                                   "detector": detection(plants, flags, (DETECTOR[kind],)),
                                   "text detectors": detection(plants, flags, TEXT_FLAGS),
                                   "missed": missed(plants, flags, (DETECTOR[kind],))})
    return out


def rag_flags(answers: Answers, plants: Sequence[Plant]) -> list[Flag]:
    texts = {q: dict(by_id) for q, by_id in answers.texts.items()}
    rankings = attacked_rankings(answers.rankings, plants)
    for p in plants:
        texts[p.query_id][p.text_id] = p.text
    # the replaced answers leave the pool (each run has one answer per topic): keep only the ranked ones
    ranked = {(q, t) for by_query in rankings.values() for q, ids in by_query.items() for t in ids}
    texts = {q: {t: text for t, text in by_id.items() if (q, t) in ranked} for q, by_id in texts.items()}
    return audit_texts(texts, answers.topics, answers.exam, rankings, thresholds=NUGGET_EXAM)


# --- printing -----------------------------------------------------------------------------------

def _pr(d: dict) -> str:
    if not d["planted"]:
        return "-"
    precision = "  -  " if math.isnan(d["precision"]) else f"{d['precision']:.3f}"
    return f"{precision}/{d['recall']:.3f}"


def print_tables(out: dict) -> None:
    print(f"Gaming benchmark: {out['queries']} queries, {out['runs']} runs, "
          f"attacked {', '.join(out['attacked_runs'])}; canaries {out['canaries']}")
    print(f"NOTE: {out['simulation']}; served sample: {out['served_sample']['equal']} of "
          f"{out['served_sample']['served']} untouched grades as stored")
    for name, judged in out["judges"].items():
        print(f"\n== judge: {name}")
        fp = judged["false_positives_dl19"]
        print("untouched DL19 pool: " + ", ".join(f"{k} {v['flagged']}/{v['pooled']} = {v['rate']:.2%}"
                                                  for k, v in fp.items()))
        print("untouched leaderboard after correction: " + ", ".join(
            f"τ {k} {v:.3f}" for k, v in judged["untouched_corrected_tau"].items()))
        rows = []
        for a in judged["attacks"]:
            t = a["tau_cover"]
            rows.append({"class": a["class"], "rate": f"{a['rate']:.0%}", "planted": a["planted"],
                         "detector P/R": _pr(a["detector"]), "text P/R": _pr(a["text detectors"]),
                         "canary P/R": _pr(a["canary"]), "any P/R": _pr(a["any"]),
                         "τ attacked": t["attacked"], "τ corrected": t["corrected"],
                         **({"τ fenced": t["self-rating(prompt=fenced)"]} if "self-rating(prompt=fenced)" in t else {}),
                         "τ canary+corr": t["canaries + corrected"],
                         "τ nDCG att/corr": (f"{a['tau_ndcg']['attacked']:.3f}/{a['tau_ndcg']['corrected']:.3f}"
                                             if "tau_ndcg" in a else "-")})
        print(pd.DataFrame(rows).to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        print("missed by the class's detector, per variant:")
        for a in judged["attacks"]:
            print(f"  {a['class']} {a['rate']:.0%}: "
                  + (", ".join(f"{k} {v}" for k, v in a["missed"].items()) or "none"))
        print("attacked runs' EXAM-Cover@20 (untouched -> attacked -> corrected):")
        for a in judged["attacks"]:
            moves = "; ".join(f"{r} {v['untouched']:.3f}->{v['attacked']:.3f}->{v['corrected']:.3f}"
                              for r, v in a["attacked_runs"].items())
            print(f"  {a['class']} {a['rate']:.0%}: {moves}")
    rag = out["rag"]
    print(f"\n== RAG 2024 answers: {rag['answers']} answers of {rag['runs']} runs, attacked "
          f"{', '.join(rag['attacked_runs'])}")
    v = rag["false_positives"]
    print(f"untouched answers flagged: {v['flagged']}/{v['pooled']} = {v['rate']:.2%}")
    print(pd.DataFrame([{"class": a["class"], "rate": f"{a['rate']:.0%}", "planted": a["planted"],
                         "detector P/R": _pr(a["detector"]), "text P/R": _pr(a["text detectors"]),
                         "missed": ", ".join(f"{k} {v}" for k, v in a["missed"].items())}
                        for a in rag["attacks"]]).to_string(index=False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspace", default="/tmp/dl19")
    parser.add_argument("--rag", default="../shared/data/rag24")
    parser.add_argument("--quick", action="store_true", help="every fourth query, one rate (0.3)")
    parser.add_argument("--rates", default="0.1,0.3", help="shares of the top 20 attacked [0.1,0.3]")
    parser.add_argument("--canaries", type=int, default=5)
    parser.add_argument("--format", choices=("table", "json"), default="table")
    args = parser.parse_args()
    rates = [0.3] if args.quick else [float(r) for r in args.rates.split(",")]
    out = run_benchmark(Path(args.workspace), Path(args.rag), args.quick, rates, args.canaries)
    if args.format == "json":
        print(json.dumps(out, indent=1, default=float))
    else:
        print_tables(out)


if __name__ == "__main__":
    main()
