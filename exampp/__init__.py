"""exampp: EXAM++ answerability evaluation for retrieval and RAG systems.

The Python API under the ``exampp`` command. Names are imported on first use, so that
``import exampp`` (and the CLI) stays fast::

    import exampp
    runs = exampp.read_runs("runs/")
    board = exampp.leaderboard(runs, exampp.read_qrels("qrels/official.qrels"), ["nDCG@10", "P@20"])
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    # collections
    "ExamppError": "exampp.errors", "InputError": "exampp.errors",
    "Run": "exampp.collection.runs", "RankedDoc": "exampp.collection.runs",
    "read_run": "exampp.formats.trec_run", "read_runs": "exampp.formats.trec_run",
    "write_run": "exampp.formats.trec_run",
    "Qrels": "exampp.collection.qrels", "read_qrels": "exampp.formats.trec_qrels",
    "write_qrels": "exampp.formats.trec_qrels",
    "IntentQrels": "exampp.collection.qrels", "read_intent_qrels": "exampp.formats.trec_qrels",
    "write_intent_qrels": "exampp.formats.trec_qrels",
    "Label": "exampp.collection.qrels", "as_label": "exampp.collection.qrels",
    "FractionalLabelError": "exampp.collection.qrels",
    "Response": "exampp.formats.rag_responses", "read_responses": "exampp.formats.rag_responses",
    "read_reports": "exampp.formats.reports", "read_requests": "exampp.formats.reports",
    "Topic": "exampp.collection.topics", "Subtopic": "exampp.collection.topics",
    "read_topics": "exampp.formats.topic_files", "write_topics": "exampp.formats.topic_files",
    "Question": "exampp.collection.questions", "QuestionBank": "exampp.collection.questions",
    "read_question_bank": "exampp.formats.question_bank", "write_question_bank": "exampp.formats.question_bank",
    "question_id_for": "exampp.collection.questions",
    "Passage": "exampp.collection.corpus", "open_corpus": "exampp.formats.corpus_sources",
    "write_corpus": "exampp.formats.corpus_sources",
    "read_leaderboard": "exampp.formats.leaderboard", "write_leaderboard": "exampp.formats.leaderboard",
    "Workspace": "exampp.stores.layout",
    # grades
    "Grade": "exampp.collection.grades", "Method": "exampp.collection.grades",
    "GradeStore": "exampp.stores.grade_store",
    "import_reference": "exampp.importer",
    # pooling and grading
    "build_pool": "exampp.pool", "Pool": "exampp.pool",
    "load_responses": "exampp.segment", "segment_responses": "exampp.segment", "segment_text": "exampp.segment",
    "grade_collection": "exampp.api.grade", "GradeJob": "exampp.api.grade", "GradeResult": "exampp.api.grade",
    "grade_pool": "exampp.grading.runner", "build_exam": "exampp.grading.runner",
    "make_grader": "exampp.grading.registry", "parse_method": "exampp.grading.registry",
    "GradingMethod": "exampp.grading.method", "open_backend": "exampp.llm.backend", "Backend": "exampp.llm.backend",
    "load_config": "exampp.formats.exampp_toml", "CascadeSpec": "exampp.grading.cascade",
    "stored_grades": "exampp.api.workspace", "StoredGrades": "exampp.api.workspace",
    "WorkspaceError": "exampp.api.workspace",
    # question banks
    "generate_bank": "exampp.api.bank_generate", "ExamGenerateJob": "exampp.api.exam_generate",
    "import_banks": "exampp.api.bank_io", "export_bank": "exampp.api.bank_io",
    "load_question_bank": "exampp.formats.question_bank",
    "review_bank": "exampp.api.bank_review", "write_bank_review": "exampp.api.bank_review",
    "bank_impact": "exampp.api.bank_impact",
    "add_questions": "exampp.api.bank_history", "remove_questions": "exampp.api.bank_history",
    "edit_question": "exampp.api.bank_history", "set_disabled": "exampp.api.bank_history",
    "restore_bank": "exampp.api.bank_history:restore", "bank_at_version": "exampp.api.bank_history",
    "bank_log": "exampp.api.bank_history",
    # score jobs
    "CoverJob": "exampp.api.scores", "CoverResult": "exampp.api.scores", "export_qrels": "exampp.api.scores",
    "export_question_qrels": "exampp.api.scores",
    "LeaderboardJob": "exampp.api.scores", "NoRunLeft": "exampp.api.scores",
    "LeaderboardFile": "exampp.api.leaderboards", "QrelsMeasure": "exampp.api.leaderboards",
    "LeaderboardCorrelation": "exampp.api.leaderboards", "CorrelateJob": "exampp.api.leaderboards",
    "CorrelationError": "exampp.api.leaderboards", "UnknownExcluded": "exampp.api.leaderboards",
    "label_agreement": "exampp.api.agreement", "LabelAgreement": "exampp.api.agreement",
    "NoCommonJudgments": "exampp.api.agreement", "topic_label_agreement": "exampp.api.agreement",
    "TopicAgreement": "exampp.api.agreement",
    "validate": "exampp.api.validate", "Validation": "exampp.api.validate",
    "SignificanceJob": "exampp.api.significance", "Significance": "exampp.api.significance",
    "PairedTests": "exampp.api.significance", "read_leaderboard_file": "exampp.formats.leaderboard",
    "MetaEvaluateJob": "exampp.api.meta_evaluate", "MetaEvaluation": "exampp.analysis.meta_evaluation",
    "MetaEvaluationError": "exampp.analysis.meta_evaluation", "ReportJob": "exampp.api.report",
    "Report": "exampp.api.report",
    # scores
    "exam_cover": "exampp.scoring", "summarize": "exampp.scoring", "exam_labels": "exampp.labels",
    "LABELS": "exampp.labels", "question_qrels": "exampp.labels", "expected_cover": "exampp.labels",
    "exam_qrels": "exampp.scoring", "facet_labels": "exampp.scoring", "leaderboard": "exampp.scoring",
    "per_query_measures": "exampp.scoring", "parse_measures": "exampp.scoring", "MeasureError": "exampp.scoring",
    "evaluate": "exampp.trec_eval", "evaluate_runs": "exampp.trec_eval", "format_trec": "exampp.trec_eval",
    # item response theory
    "IRTJob": "exampp.api.irt", "responses_from_workspace": "exampp.api.irt",
    "write_irt_outputs": "exampp.api.irt", "IRTResult": "exampp.api.irt", "GradedResponses": "exampp.api.irt",
    "IRTModel": "exampp.analysis.irt.models", "HierarchicalAbility": "exampp.analysis.irt.hierarchical",
    "responses_from_grades": "exampp.analysis.irt.responses",
    "Responses": "exampp.formats.response_matrix", "read_response_matrix": "exampp.formats.response_matrix",
    "read_systems": "exampp.formats.systems",
    # analysis
    "correlate": "exampp.analysis.correlation", "per_query_correlation": "exampp.analysis.correlation",
    "tau_ap": "exampp.analysis.correlation", "tau_ap_b": "exampp.analysis.correlation",
    "tau_gap": "exampp.analysis.correlation", "kappa_table": "exampp.analysis.label_agreement",
    "weighted_kappa": "exampp.analysis.label_agreement", "adjusted_rand": "exampp.analysis.label_agreement",
    "cohen_kappa": "exampp.analysis.label_agreement", "graded_confusion": "exampp.analysis.label_agreement",
    "ordinal_alpha": "exampp.analysis.label_agreement", "krippendorff_alpha": "exampp.analysis.statistics",
    "bootstrap_means": "exampp.analysis.statistics", "correlation_intervals": "exampp.analysis.statistics",
    "paired_tests": "exampp.analysis.statistics", "scores_table": "exampp.analysis.statistics",
    # people's labels (exampp assess serve, export, import)
    "AssessmentStore": "exampp.stores.assessments", "read_labels": "exampp.stores.assessments",
    "write_labels": "exampp.stores.assessments",
    "store_labels": "exampp.api.assess_labels",
    # a human sample that checks the judge (exampp assess sample, estimate, agree, plan)
    "SampleJob": "exampp.api.assess", "draw_sample": "exampp.api.assess", "EstimateJob": "exampp.api.assess",
    "judge_agreement": "exampp.api.assess", "PlanJob": "exampp.api.assess", "HumanCheckJob": "exampp.api.assess",
}
__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # what __getattr__ hands out, for type checkers and editors (a test keeps them equal)
    from exampp.analysis.correlation import correlate, per_query_correlation, tau_ap, tau_ap_b, tau_gap
    from exampp.analysis.irt.hierarchical import HierarchicalAbility
    from exampp.analysis.irt.models import IRTModel
    from exampp.analysis.irt.responses import responses_from_grades
    from exampp.analysis.label_agreement import (
        adjusted_rand,
        cohen_kappa,
        graded_confusion,
        kappa_table,
        ordinal_alpha,
        weighted_kappa,
    )
    from exampp.analysis.meta_evaluation import MetaEvaluation, MetaEvaluationError
    from exampp.analysis.statistics import (
        bootstrap_means,
        correlation_intervals,
        krippendorff_alpha,
        paired_tests,
        scores_table,
    )
    from exampp.api.agreement import (
        LabelAgreement,
        NoCommonJudgments,
        TopicAgreement,
        label_agreement,
        topic_label_agreement,
    )
    from exampp.api.assess import EstimateJob, HumanCheckJob, PlanJob, SampleJob, draw_sample, judge_agreement
    from exampp.api.assess_labels import store_labels
    from exampp.api.bank_generate import generate_bank
    from exampp.api.bank_history import (
        add_questions,
        bank_at_version,
        bank_log,
        edit_question,
        remove_questions,
        restore as restore_bank,
        set_disabled,
    )
    from exampp.api.bank_impact import bank_impact
    from exampp.api.bank_io import export_bank, import_banks
    from exampp.api.bank_review import review_bank, write_bank_review
    from exampp.api.exam_generate import ExamGenerateJob
    from exampp.api.grade import GradeJob, GradeResult, grade_collection
    from exampp.api.irt import GradedResponses, IRTJob, IRTResult, responses_from_workspace, write_irt_outputs
    from exampp.api.leaderboards import (
        CorrelateJob,
        CorrelationError,
        LeaderboardCorrelation,
        LeaderboardFile,
        QrelsMeasure,
        UnknownExcluded,
    )
    from exampp.api.meta_evaluate import MetaEvaluateJob
    from exampp.api.report import Report, ReportJob
    from exampp.api.scores import (
        CoverJob,
        CoverResult,
        LeaderboardJob,
        NoRunLeft,
        export_qrels,
        export_question_qrels,
    )
    from exampp.api.significance import PairedTests, Significance, SignificanceJob
    from exampp.api.validate import Validation, validate
    from exampp.api.workspace import StoredGrades, WorkspaceError, stored_grades
    from exampp.collection.corpus import Passage
    from exampp.collection.grades import Grade, Method
    from exampp.collection.qrels import FractionalLabelError, IntentQrels, Label, Qrels, as_label
    from exampp.collection.questions import Question, QuestionBank, question_id_for
    from exampp.collection.runs import RankedDoc, Run
    from exampp.collection.topics import Subtopic, Topic
    from exampp.errors import ExamppError, InputError
    from exampp.formats.corpus_sources import open_corpus, write_corpus
    from exampp.formats.exampp_toml import load_config
    from exampp.formats.leaderboard import read_leaderboard, read_leaderboard_file, write_leaderboard
    from exampp.formats.question_bank import load_question_bank, read_question_bank, write_question_bank
    from exampp.formats.rag_responses import Response, read_responses
    from exampp.formats.reports import read_reports, read_requests
    from exampp.formats.response_matrix import Responses, read_response_matrix
    from exampp.formats.systems import read_systems
    from exampp.formats.topic_files import read_topics, write_topics
    from exampp.formats.trec_qrels import read_intent_qrels, read_qrels, write_intent_qrels, write_qrels
    from exampp.formats.trec_run import read_run, read_runs, write_run
    from exampp.grading.cascade import CascadeSpec
    from exampp.grading.method import GradingMethod
    from exampp.grading.registry import make_grader, parse_method
    from exampp.grading.runner import build_exam, grade_pool
    from exampp.importer import import_reference
    from exampp.labels import LABELS, exam_labels, expected_cover, question_qrels
    from exampp.llm.backend import Backend, open_backend
    from exampp.pool import Pool, build_pool
    from exampp.scoring import (
        MeasureError,
        exam_cover,
        exam_qrels,
        facet_labels,
        leaderboard,
        parse_measures,
        per_query_measures,
        summarize,
    )
    from exampp.segment import load_responses, segment_responses, segment_text
    from exampp.stores.assessments import AssessmentStore, read_labels, write_labels
    from exampp.stores.grade_store import GradeStore
    from exampp.stores.layout import Workspace
    from exampp.trec_eval import evaluate, evaluate_runs, format_trec



def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'exampp' has no attribute {name!r}")
    module, _, attribute = module.partition(":")  # "module:attribute" where the names differ
    value = getattr(importlib.import_module(module), attribute or name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
