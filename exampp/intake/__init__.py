"""Intake checks of submitted runs (``exampp validate``): the checks (:mod:`exampp.intake.checks`),
the lenient reading of submissions (:mod:`exampp.intake.submissions`), the built-in track specs
(``rag24.toml`` beside this module) and :func:`validate_runs`, which runs every check on every run.
"""
from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

from exampp.errors import InputError
from exampp.formats.track_spec import TrackSpec, read_track_spec
from exampp.intake.checks import (
    CHECKS,
    Finding,
    Findings,
    check_answer,
    check_coverage,
    check_doc_ids,
    check_ranking,
    check_same_answers,
)
from exampp.intake.submissions import Submissions

BUILTIN_SPECS = ("rag24",)  # the specs shipped beside this module, as NAME.toml


def load_spec(spec: str | Path | None) -> TrackSpec:
    """A track spec: a built-in one by name (:data:`BUILTIN_SPECS`), a TOML file, or none (no limits).

    :param spec: ``rag24``, a path to a spec file, or None.
    :raises InputError: A bad spec file, or a severity set for a check that does not exist.
    """
    if spec is None:
        return TrackSpec()
    path = Path(__file__).with_name(f"{spec}.toml") if str(spec) in BUILTIN_SPECS else Path(spec)
    read = read_track_spec(path)
    unknown = sorted(set(read.severity) - set(CHECKS))
    if unknown:
        raise InputError(path, None, f"[severity] names unknown checks {', '.join(map(repr, unknown))}; "
                                     f"the checks are {', '.join(CHECKS)}")
    return read


@dataclass(frozen=True)
class RunValidation:
    """One run's findings.

    :param run_id: The run.
    :param kind: ``ranked``, ``answers`` or ``ranked+answers`` (a run that submitted both), or
        ``unreadable`` (a file none of whose lines could be read).
    :param files: The files it came from.
    :param topics: How many topics it answers.
    :param findings: What the checks found.
    """

    run_id: str
    kind: str
    files: tuple[str, ...]
    topics: int
    findings: tuple[Finding, ...]

    @property
    def errors(self) -> int:
        """How many findings are errors."""
        return sum(f.severity == "error" for f in self.findings)

    @property
    def warnings(self) -> int:
        """How many findings are warnings."""
        return sum(f.severity == "warning" for f in self.findings)


def _file_checks(found: Findings, run_id: str, files: list[str], runs_in: dict[str, set[str]]) -> None:
    """Run tags against files: a run in several files of its own, a file of several runs (a run
    file holds one run; a track's files of all answers hold many, and are not checked), a file not
    named after its run."""
    own = [f for f in files if len(runs_in[f]) == 1]
    if len(own) > 1:
        found.add("run_tag", f"the run tag is in {len(own)} files: {', '.join(own)}")
    elif len(own) == len(files) == 1:
        name = Path(files[0]).name
        if name != run_id and not name.startswith(run_id + "."):
            found.add("file_name", f"the file {name!r} is not named after the run tag", file=files[0])


def validate_runs(submissions: Submissions, spec: TrackSpec, topics: Collection[str] | None = None,
                  known: Callable[[set[str]], set[str]] | None = None,
                  limits: Mapping[str, int | None] | None = None) -> list[RunValidation]:
    """Every check on every run, a run at a time, in the order the runs were read.

    :param submissions: The runs (:func:`~exampp.intake.submissions.read_submissions`).
    :param spec: The track spec.
    :param topics: The topics the track asks for (None: coverage not checked).
    :param known: Which of a set of doc ids the corpus holds (None: not checked).
    :param limits: Each topic's length limit from its request (spec ``length_limit_request_field``).
    """
    runs_in: dict[str, set[str]] = {}
    for run_id, files in submissions.files.items():
        for name in files:
            runs_in.setdefault(name, set()).add(run_id)
    unreadable = _first_errors(submissions)
    results: list[RunValidation] = []
    for run_id, files in submissions.files.items():
        found = Findings(run_id, spec)
        ranked, answers = submissions.ranked.get(run_id), submissions.answers.get(run_id)
        for group in ([r.file for r in ranked or ()], [a.file for a in answers or ()]):  # a ranking and its answers
            if group:
                _file_checks(found, run_id, list(dict.fromkeys(group)), runs_in)
        for name in files:
            if ranked and len(runs_in[name]) > 1 and any(r.file == name for r in ranked):
                found.add("run_tag", f"the run file holds several run tags: {', '.join(sorted(runs_in[name]))}",
                          file=name)
            if name in unreadable and runs_in[name] == {run_id}:
                _format(found, name, unreadable.pop(name)[1])
        rankings = check_ranking(found, ranked) if ranked else None
        named = {d for ranking in (rankings or {}).values() for d in ranking}
        for answer in answers or ():
            named |= check_answer(found, answer, rankings, limits)
        if answers:
            check_same_answers(found, answers)
        answered = [a.topic_id for a in answers] if answers else list(rankings or {})
        check_coverage(found, answered, topics)
        if known is not None and named:
            check_doc_ids(found, named, known)
        kind = "+".join(k for k, v in (("ranked", ranked), ("answers", answers)) if v)
        results.append(RunValidation(run_id, kind, tuple(files), len(set(answered)), tuple(found.found)))
    for name, (default_run, error) in unreadable.items():
        found = Findings(default_run, spec)
        _format(found, name, error)
        results.append(RunValidation(default_run, "unreadable", (name,), 0, tuple(found.found)))
    return results


def _format(found: Findings, name: str, error: tuple[InputError, int]) -> None:
    first, more = error
    found.add("format", first.message + (f" (and {more} more lines)" if more else ""), file=name, line=first.line)


def _first_errors(submissions: Submissions) -> dict[str, tuple[str, tuple[InputError, int]]]:
    """Per file: the run its name suggests, its first unreadable line and how many more there are."""
    first: dict[str, tuple[str, tuple[InputError, int]]] = {}
    for name, default_run, error in submissions.unreadable:
        run, (kept, more) = first.get(name, (default_run, (error, -1)))
        first[name] = (run, (kept, more + 1))
    return first
