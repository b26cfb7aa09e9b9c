"""exampp as a TREC AutoJudge judge: :class:`~exampp.autojudge.judge.ExamppJudge` implements the three protocols
of ``autojudge_base`` (a leaderboard, nugget banks, qrels) on exampp's jobs, so that the AutoJudge harness
(``auto-judge run -w workflow.yml ...``, with ``judge_class: exampp.autojudge.ExamppJudge``) runs exampp
unchanged.

:mod:`~exampp.autojudge.settings` reads the judge's settings (the workflow's ``settings`` and the harness's
``LlmConfig``), :mod:`~exampp.autojudge.conversions` turns AutoJudge's Reports, Requests, NuggetBanks, Qrels
and Leaderboards into exampp's inputs and back. Needs the extra ``exampp[autojudge]``.
"""
from __future__ import annotations

from exampp.autojudge.judge import ExamppJudge

__all__ = ["ExamppJudge"]
