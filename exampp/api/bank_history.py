"""Changing a question bank with a history: the jobs of ``exampp bank add / remove / edit /
disable / enable / restore / log``.

A bank (exampp's JSONL, plain or gzipped) keeps its history in ``BANK.history.sqlite`` beside it
(:mod:`exampp.stores.bank_versions`). Each change reads the bank, applies an edit (a pure
function of the bank, so that a bad id fails before anything is touched), writes the bank
atomically and records the new version: time, user, operation, reason, the file's exact bytes
and each changed question's record before and after. Version 0 is the bank as it was when its
history began. A bank that no longer matches its last version (edited by hand, or a command
died between writing the bank and committing its version) is recorded as it is found, as an
``external change``, before anything else: no state of the bank is ever lost, and
:func:`restore` gives back any version's exact bytes, as a new version.

With ``to``, a change is *pending*: the changed bank goes to that file, and neither the bank nor
its history is touched (``exampp bank impact`` can then show what the change would do).
"""
from __future__ import annotations

import dataclasses
import getpass
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd

from exampp.api import Warn, python_warning
from exampp.collection.questions import Question, QuestionBank, question_id_for
from exampp.errors import InputError
from exampp.files.io import PathLike, atomic_write, open_input
from exampp.formats.question_bank import write_question_bank
from exampp.stores.bank_versions import (
    CHANGE_KINDS,
    BankHistory,
    Change,
    HistoryError,
    Version,
    bank_from_bytes,
    content_hash,
    diff_banks,
    history_path,
)

__all__ = [
    "ChangeResult", "Edit", "HistoryError", "add_questions", "bank_at_version", "bank_changes", "bank_log",
    "change_bank", "edit_question", "history_path", "new_question", "remove_questions", "restore", "set_disabled",
]

EXTERNAL = "external change"


@dataclass(frozen=True)
class Edit:
    """What an operation makes of a bank: the new bank, a one-line summary (said also when
    nothing changes), and the questions whose id changed with their text (old id -> new id)."""

    bank: QuestionBank
    summary: str
    renames: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ChangeResult:
    """What a change did: the version recorded (None when nothing changed, or for a pending
    change, which went to ``pending`` instead), the questions changed, and the versions recorded
    before it (the history's beginning; the bank as found when it was changed outside exampp)."""

    summary: str
    changes: tuple[Change, ...]
    version: Version | None = None
    earlier: tuple[Version, ...] = ()
    pending: Path | None = None

    def line(self) -> str:
        """The one line a command prints."""
        if self.pending is not None:
            return f"pending, not recorded ({self.pending}): {self.summary}"
        if self.version is None:
            return f"nothing changed: {self.summary}"
        return version_line(self.version)


def version_line(version: Version) -> str:
    reason = f" (reason: {version.reason})" if version.reason else ""
    return f"version {version.number}: {version.summary}{reason}"


# -- changing a bank -----------------------------------------------------------------------------


def change_bank(bank: PathLike, operation: str, apply: Callable[[QuestionBank], Edit], *,
                reason: str | None = None, to: PathLike | None = None) -> ChangeResult:
    """Apply an edit to a bank and record the result as a new version.

    :param bank: The bank file; its history is kept beside it.
    :param operation: The version's operation, as the log names it.
    :param apply: The edit: it gets the bank with its disabled questions and raises for bad input; it
        is applied again, under the history's lock, if the file changed in the meantime.
    :param reason: Recorded with the new version.
    :param to: Write the result there instead: pending, nothing recorded.
    """
    path, name = Path(bank), os.fspath(bank)
    data = _read_bank_bytes(path)
    current = bank_from_bytes(data, name)
    edit = apply(current)
    changes = diff_banks(current, edit.bank, edit.renames)
    if to is not None:
        _check_pending_target(path, to)
        if changes:
            write_question_bank(edit.bank, to)
        return ChangeResult(edit.summary, tuple(changes), pending=Path(to) if changes else None)
    with BankHistory.open(history_path(path), create=True) as history:
        with history.transaction():  # the bank as found is in the history before it is changed
            earlier = _catch_up(history, _read_bank_bytes(path), name)
        with history.transaction():
            now = _read_bank_bytes(path)
            earlier += _catch_up(history, now, name)  # changed again meanwhile (rare)
            if now != data:  # changed since it was read: apply the edit to what is there now
                data, current = now, bank_from_bytes(now, name)
                edit = apply(current)
                changes = diff_banks(current, edit.bank, edit.renames)
            if not changes:
                return ChangeResult(edit.summary, (), earlier=earlier)
            write_question_bank(edit.bank, path)
            version = history.record(time=_now(), user=_user(), operation=operation, summary=edit.summary,
                                     reason=reason or None, content=_read_bank_bytes(path), bank=edit.bank,
                                     changes=changes)
    return ChangeResult(edit.summary, tuple(changes), version, earlier)


def new_question(query_id: str, text: str, *, answers: Sequence[str] = (), facet_id: str | None = None,
                 facet_text: str | None = None, source: str | None = "manual") -> Question:
    """A question written by hand, with the reference tool's id ``<query_id>/<md5(text)>``.

    :param query_id: Its query.
    :param text: The question.
    :param answers: Its answer key, if any.
    :param facet_id: The query facet it asks about, if any.
    :param facet_text: That facet's text.
    :param source: Where it came from.
    :raises ValueError: A bad field.
    """

    return Question(query_id=query_id, question_id=question_id_for(query_id, text), text=text,
                    facet_id=facet_id, facet_text=facet_text, answers=tuple(answers), source=source)


def add_questions(bank: PathLike, questions: QuestionBank | Iterable[Question], *, reason: str | None = None,
                  to: PathLike | None = None) -> ChangeResult:
    """Add questions (disabled ones too), each after the last question of its query (a new query
    at the end). A question naming a facet without its text gets the text the bank's other
    questions of that facet have.

    :param bank: The bank file (exampp JSONL, plain or gzipped); its history is kept beside it.
    :param questions: The questions to add; one already in the bank is an error.
    :param reason: Recorded with the new version.
    :param to: Write the changed bank there instead: pending, the bank and its history untouched.
    """
    name = os.fspath(bank)
    new = list(questions)
    query_texts = questions.query_texts if isinstance(questions, QuestionBank) else {}
    if not new:
        raise InputError(name, None, "no questions to add")

    def apply(current: QuestionBank) -> Edit:
        seen: set[str] = set()
        for question in new:
            if question.question_id in current:
                raise InputError(name, None, f"question {question.question_id} is already in the bank: "
                                             f"{current[question.question_id].text!r}")
            if question.question_id in seen:
                raise InputError(name, None, f"question {question.question_id} is given twice")
            seen.add(question.question_id)
        added = [_with_facet_text(current, q) for q in new]
        texts = {**query_texts, **current.query_texts}  # the bank's own titles win
        bank_ = QuestionBank(_grouped(current.questions, added), query_texts=texts)
        return Edit(bank_, f"added {_count(len(added))} to {_queries(added)}{_which(added)}")

    return change_bank(bank, "add", apply, reason=reason, to=to)


def remove_questions(bank: PathLike, *, question_ids: Sequence[str] = (), query_ids: Sequence[str] = (),
                     reason: str | None = None, to: PathLike | None = None) -> ChangeResult:
    """Remove questions. Removing every question is an error: an empty file is no bank.

    :param bank: The bank file; its history is kept beside it.
    :param question_ids: The questions to remove: ids, or a unique start of an id.
    :param query_ids: Queries whose questions are all removed.
    :param reason: Recorded with the new version.
    :param to: Write the changed bank there instead: pending, the bank and its history untouched.
    """
    name = os.fspath(bank)

    def apply(current: QuestionBank) -> Edit:
        chosen = select_questions(current, question_ids, query_ids, name)
        ids = {q.question_id for q in chosen}
        remaining = [q for q in current if q.question_id not in ids]
        if not remaining:
            raise InputError(name, None, f"removing {_count(len(chosen))} would leave the bank empty")
        return Edit(QuestionBank(remaining, query_texts=current.query_texts),
                    f"removed {_count(len(chosen))} of {_queries(chosen)}{_which(chosen)}")

    return change_bank(bank, "remove", apply, reason=reason, to=to)


def set_disabled(bank: PathLike, disabled: bool, *, question_ids: Sequence[str] = (),
                 query_ids: Sequence[str] = (), reason: str | None = None,
                 to: PathLike | None = None) -> ChangeResult:
    """Disable (or enable) questions. A disabled question stays in the bank but is left out when
    the bank is read for grading.

    :param bank: The bank file; its history is kept beside it.
    :param disabled: True disables, False enables.
    :param question_ids: The questions: ids, or a unique start of an id.
    :param query_ids: Queries whose questions are all disabled (or enabled).
    :param reason: Recorded with the new version.
    :param to: Write the changed bank there instead: pending, the bank and its history untouched.
    """
    name = os.fspath(bank)
    verb = "disabled" if disabled else "enabled"

    def apply(current: QuestionBank) -> Edit:
        chosen = select_questions(current, question_ids, query_ids, name)
        flipped = [q for q in chosen if q.disabled != disabled]
        if not flipped:
            return Edit(current, f"{_count(len(chosen))} of {_queries(chosen)}{_which(chosen)} already {verb}")
        ids = {q.question_id for q in flipped}
        already = len(chosen) - len(flipped)
        bank_ = QuestionBank((dataclasses.replace(q, disabled=disabled) if q.question_id in ids else q
                              for q in current), query_texts=current.query_texts)
        note = f" ({already} more already {verb})" if already else ""
        return Edit(bank_, f"{verb} {_count(len(flipped))} of {_queries(flipped)}{_which(flipped)}{note}")

    return change_bank(bank, "disable" if disabled else "enable", apply, reason=reason, to=to)


def edit_question(bank: PathLike, question_id: str, *, text: str | None = None,
                  answers: Sequence[str] | None = None, facet_id: str | None = None,
                  facet_text: str | None = None, source: str | None = None, reason: str | None = None,
                  to: PathLike | None = None) -> ChangeResult:
    """Change a question's text, answer key, facet or source; a part given as None is kept.

    :param bank: The bank file; its history is kept beside it.
    :param question_id: The question: its id, or a unique start of it.
    :param text: The new text. It gives a new id (``<query_id>/<md5(text)>``, since grades are kept
        per question id): the history records old id -> new id.
    :param answers: The new answer key, ``()`` for none.
    :param facet_id: The new facet.
    :param facet_text: The new facet's text; by default the text the bank's other questions of that
        facet have.
    :param source: The new source.
    :param reason: Recorded with the new version.
    :param to: Write the changed bank there instead: pending, the bank and its history untouched.
    """
    name = os.fspath(bank)

    def apply(current: QuestionBank) -> Edit:
        old = current[resolve_id(list(_ids(current)), question_id, name)]
        updates: dict[str, Any] = {}  # Question's fields: replace() checks them
        if text is not None and text != old.text:
            updates["text"] = text
            updates["question_id"] = question_id_for(old.query_id, text)
        if answers is not None and tuple(answers) != old.answers:
            updates["answers"] = tuple(answers)
        if facet_id is not None and facet_id != old.facet_id:
            updates["facet_id"] = facet_id
            updates["facet_text"] = facet_text if facet_text is not None else _facet_text(current, old.query_id,
                                                                                         facet_id)
        elif facet_text is not None and facet_text != old.facet_text:
            updates["facet_text"] = facet_text
        if source is not None and source != old.source:
            updates["source"] = source
        if not updates:
            return Edit(current, f"{old.question_id} already is as given")
        try:
            edited = dataclasses.replace(old, **updates)
        except ValueError as exc:
            raise InputError(name, None, f"cannot edit {old.question_id}: {exc}") from None
        new_id = edited.question_id
        if new_id != old.question_id and new_id in current:
            raise InputError(name, None, f"the new text is that of question {new_id}, already in the bank")
        bank_ = QuestionBank((edited if q is old else q for q in current), query_texts=current.query_texts)
        fields = ", ".join(_FIELD_NAMES[k] for k in updates if k in _FIELD_NAMES)
        summary = f"edited {old.question_id} ({fields})"
        if new_id != old.question_id:
            summary += f": new id {new_id}"
        return Edit(bank_, summary, {old.question_id: new_id} if new_id != old.question_id else {})

    return change_bank(bank, "edit", apply, reason=reason, to=to)


_FIELD_NAMES = {"text": "text", "answers": "answers", "facet_id": "facet", "facet_text": "facet text",
                "source": "source"}


def restore(bank: PathLike, version: int, *, reason: str | None = None,
            to: PathLike | None = None) -> ChangeResult:
    """Make the bank what it was at a version (its exact bytes), recorded as a new version, so
    that a restore can itself be undone. A missing or unreadable bank file can be restored: an
    unreadable one is kept in the history first.

    :param bank: The bank file; its history is kept beside it.
    :param version: The version to restore (0: the bank when its history began).
    :param reason: Recorded with the new version.
    :param to: Write that version there instead: pending, nothing recorded.
    """
    path, name = Path(bank), os.fspath(bank)
    hist = history_path(path)
    if to is not None:
        _check_pending_target(path, to)
        with BankHistory.open(hist) as history:
            content = history.content(version)
            current = _readable_or_none(_bank_bytes_or_none(path), name)
            target = _readable_or_none(content, f"{name}@{version}")
            changes = _restore_diff(history, current, target)
        _write_bytes(to, content)
        return ChangeResult(f"restored version {version} ({_counts(changes)})", tuple(changes), pending=Path(to))
    with BankHistory.open(hist, writable=True) as history:
        with history.transaction():  # the bank as found (even unreadable) is kept before it is replaced
            earlier = _catch_up(history, _bank_bytes_or_none(path), name)
        with history.transaction():
            content = history.content(version)
            try:
                target = bank_from_bytes(content, f"{name}@{version}")
            except InputError as exc:
                raise InputError(name, None, f"version {version} is not a readable question bank ({exc}); "
                                             f"--to FILE writes its bytes to a file") from None
            data = _bank_bytes_or_none(path)
            earlier += _catch_up(history, data, name)
            if data == content:
                return ChangeResult(f"the bank already is as it was at version {version}", (), earlier=earlier)
            changes = _restore_diff(history, _readable_or_none(data, name), target)
            _write_bytes(path, content)
            summary = f"restored version {version} ({_counts(changes)})"
            recorded = history.record(time=_now(), user=_user(), operation="restore", summary=summary,
                                      reason=reason or None, content=content, bank=target, changes=changes)
    return ChangeResult(summary, tuple(changes), recorded, earlier)


# -- reading the history -------------------------------------------------------------------------


def bank_at_version(bank: PathLike, version: int, *, disabled: bool = False) -> QuestionBank:
    """The bank as it was at a version.

    :param bank: The bank file; its history is kept beside it.
    :param version: The version (0: the bank when its history began).
    :param disabled: Keep the disabled questions too (as
        :func:`~exampp.formats.question_bank.read_question_bank` reads a bank).
    """
    with BankHistory.open(history_path(bank)) as history:
        content = history.content(version)
    read = bank_from_bytes(content, f"{os.fspath(bank)}@{version}")
    return read if disabled else read.enabled()


def bank_log(bank: PathLike, *, question_id: str | None = None, warn: Warn = python_warning) -> pd.DataFrame:
    """A bank's history, one row per version: version, time, user, operation, the number of
    questions added, removed, edited, disabled and enabled, the questions and active (not disabled)
    questions the bank then held (null when it was not a readable bank), reason and summary.

    :param bank: The bank file; its history is kept beside it.
    :param question_id: Only the versions that changed this question, under any of its ids.
    :param warn: Told when the bank has changed since its last version (default: a Python warning).
    """

    with BankHistory.open(history_path(bank)) as history:
        versions = history.versions()
        changes = history.changes()
        _warn_if_changed(bank, history, warn)
        ids = _id_chain(history, changes, question_id, os.fspath(bank)) if question_id else None
    counts: dict[int, dict[str, int]] = {}
    for number, change in changes:
        if ids is None or {change.old_id, change.new_id} & ids:
            per = counts.setdefault(number, {})
            per[change.kind] = per.get(change.kind, 0) + 1
    rows = [{"version": v.number, "time": v.time, "user": v.user, "operation": v.operation,
             **{kind: counts.get(v.number, {}).get(kind, 0) for kind in CHANGE_KINDS}, "questions": v.questions,
             "active": v.active, "reason": v.reason, "summary": v.summary}
            for v in versions if ids is None or v.number in counts]
    columns = ["version", "time", "user", "operation", *CHANGE_KINDS, "questions", "active", "reason", "summary"]
    return pd.DataFrame(rows, columns=columns).astype({"questions": "Int64", "active": "Int64"})


def bank_changes(bank: PathLike, *, version: int | None = None, question_id: str | None = None,
                 warn: Warn = python_warning) -> pd.DataFrame:
    """One row per changed question: version, change, question_id (before; the added question's id),
    new_question_id (when the text, and so the id, changed), old_text, new_text, and the full exampp
    records old_record and new_record.

    :param bank: The bank file; its history is kept beside it.
    :param version: Only the changes of this version (all by default).
    :param question_id: Only the changes of this question, under any of its ids.
    :param warn: Told when the bank has changed since its last version (default: a Python warning).
    """
    with BankHistory.open(history_path(bank)) as history:
        if version is not None:
            history.version(version)  # a clear error for a version that does not exist
        changes = history.changes(version)
        _warn_if_changed(bank, history, warn)
        ids = _id_chain(history, changes if version is None else history.changes(), question_id,
                        os.fspath(bank)) if question_id else None
    rows = [{"version": number, "change": c.kind, "question_id": c.question_id,
             "new_question_id": c.new_id if c.old_id and c.new_id != c.old_id else None,
             "old_text": (c.old_record or {}).get("text"), "new_text": (c.new_record or {}).get("text"),
             "old_record": c.old_record, "new_record": c.new_record}
            for number, c in changes if ids is None or {c.old_id, c.new_id} & ids]
    columns = ["version", "change", "question_id", "new_question_id", "old_text", "new_text", "old_record",
               "new_record"]
    return pd.DataFrame(rows, columns=columns)


# -- choosing questions --------------------------------------------------------------------------


def resolve_id(known: Sequence[str], given: str, name: str) -> str:
    """``given`` when it is one of ``known``, else the one id in ``known`` that starts with it
    (ids are long: ``Q1/ff0e`` names ``Q1/ff0e4348...`` when no other id starts so)."""
    if given in known:
        return given
    matches = [qid for qid in known if qid.startswith(given)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise InputError(name, None, f"no question {given!r}")
    shown = ", ".join(matches[:3]) + (", ..." if len(matches) > 3 else "")
    raise InputError(name, None, f"{given!r} could be any of {len(matches)} questions ({shown}): give more of the id")


def select_questions(bank: QuestionBank, question_ids: Sequence[str], query_ids: Sequence[str],
                     name: str) -> list[Question]:
    """The questions named by id (or a unique start of one) and those of the queries named, in
    the bank's order."""
    if not question_ids and not query_ids:
        raise ValueError("name questions (question ids) or queries (query ids)")
    known = list(_ids(bank))
    chosen = {resolve_id(known, given, name) for given in question_ids}
    grouped = bank.by_query()
    for query_id in query_ids:
        if query_id not in grouped:
            raise InputError(name, None, f"no questions of query {query_id!r}")
        chosen.update(q.question_id for q in grouped[query_id])
    return [q for q in bank if q.question_id in chosen]


def _ids(bank: QuestionBank) -> Iterable[str]:
    return (q.question_id for q in bank)


# -- helpers -------------------------------------------------------------------------------------


def _read_bank_bytes(path: Path) -> bytes:
    with open_input(path) as fh:
        try:
            return fh.read()
        except OSError as exc:
            raise InputError(path, None, f"cannot read: {exc.strerror or exc}") from None


def _bank_bytes_or_none(path: Path) -> bytes | None:
    return _read_bank_bytes(path) if path.exists() else None


def _readable_or_none(data: bytes | None, name: str) -> QuestionBank | None:
    """The bank ``data`` holds; None when there is none or it cannot be read as a bank."""
    if data is None:
        return None
    try:
        return bank_from_bytes(data, name)
    except InputError:
        return None


def _write_bytes(path: PathLike, data: bytes) -> None:
    """Write ``data`` atomically, exactly (a gzipped bank's bytes are not gzipped again)."""
    with atomic_write(path, gzipped=False) as fh:
        fh.flush()
        fh.buffer.write(data)  # the binary file under the text handle: bytes as they are


def _check_pending_target(bank: Path, to: PathLike) -> None:
    if os.path.exists(to) and os.path.samefile(to, bank):
        raise InputError(to, None, "is the bank itself: leave out --to to change the bank (with its history)")


def _catch_up(history: BankHistory, data: bytes | None, name: str) -> tuple[Version, ...]:
    """Record the bank file's content ``data`` when the history lacks it: as version 0 when the
    history is new, as an external change when it differs from the last version."""
    if data is None:  # no file: nothing to keep
        return ()
    last = history.last()
    if last is not None and last.sha256 == content_hash(data):
        return ()
    current = _readable_or_none(data, name)
    if last is None:
        summary = (f"history begins: {_count(len(current))} over {_count(len(current.query_ids()), 'query')}"
                   if current is not None else "history begins with a file that is not a readable bank")
        return (history.record(time=_now(), user=_user(), operation="begin", summary=summary, reason=None,
                               content=data, bank=current, changes=[]),)
    before = _readable_or_none(history.content(last.number), f"version {last.number}")
    changes: list[Change]
    if current is None:
        what, changes = "not a readable bank", []
    elif before is None:
        what, changes = f"{_count(len(current))} (version {last.number} was not a readable bank)", []
    else:
        changes = diff_banks(before, current)
        what = _counts(changes)
    summary = f"changed outside exampp since version {last.number}: {what}"
    return (history.record(time=_now(), user=_user(), operation=EXTERNAL, summary=summary, reason=None,
                           content=data, bank=current, changes=changes),)


def _restore_diff(history: BankHistory, current: QuestionBank | None, target: QuestionBank | None) -> list[Change]:
    """What going from ``current`` to ``target`` changes; a question there under an id that an
    edit of its text gave or took away is paired with itself (edited), as its history says."""
    current, target = current or QuestionBank(), target or QuestionBank()
    root: dict[str, str] = {}  # union-find over the ids an edit linked

    def find(qid: str) -> str:
        while root.get(qid, qid) != qid:
            qid = root[qid]
        return qid

    for old_id, new_id in history.renames():
        root[find(old_id)] = find(new_id)
    arriving: dict[str, list[str]] = {}
    for question in target:
        if question.question_id not in current:
            arriving.setdefault(find(question.question_id), []).append(question.question_id)
    renames = {q.question_id: arriving[find(q.question_id)].pop(0) for q in current
               if q.question_id not in target and arriving.get(find(q.question_id))}
    return diff_banks(current, target, renames)


def _warn_if_changed(bank: PathLike, history: BankHistory, warn: Warn) -> None:
    last = history.last()
    if last is None:
        return
    path = Path(bank)
    if not path.exists():
        warn(f"warning: {bank} does not exist; `exampp bank restore` can bring back any version")
    elif content_hash(_read_bank_bytes(path)) != last.sha256:
        warn(f"warning: {bank} has changed since version {last.number} (outside exampp, or a change was cut "
             f"short); the next change records it first")


def _id_chain(history: BankHistory, changes: list[tuple[int, Change]], given: str, name: str) -> set[str]:
    """The ids ``given`` (or the one id starting with it) had over the history: a question keeps
    its identity through edits of its text."""
    known = {i for _, c in changes for i in (c.old_id, c.new_id) if i}
    last = history.last()
    if last is not None:
        latest = _readable_or_none(history.content(last.number), name)
        known.update(_ids(latest or QuestionBank()))
    ids = {resolve_id(sorted(known), given, name)}
    grown = True
    while grown:
        linked = {i for _, c in changes if {c.old_id, c.new_id} & ids for i in (c.old_id, c.new_id) if i}
        grown = not linked <= ids
        ids |= linked
    return ids


def _grouped(questions: list[Question], added: list[Question]) -> list[Question]:
    """``questions`` with each of ``added`` after the last question of its query (else at the end)."""
    result = list(questions)
    for question in added:
        last = max((i for i, q in enumerate(result) if q.query_id == question.query_id), default=len(result) - 1)
        result.insert(last + 1, question)
    return result


def _facet_text(bank: QuestionBank, query_id: str, facet_id: str) -> str | None:
    """The text the bank's questions of this facet give it."""
    return next((q.facet_text for q in bank if q.query_id == query_id and q.facet_id == facet_id
                 and q.facet_text), None)


def _with_facet_text(bank: QuestionBank, question: Question) -> Question:
    if question.facet_id is None or question.facet_text is not None:
        return question
    known = _facet_text(bank, question.query_id, question.facet_id)
    return dataclasses.replace(question, facet_text=known) if known else question


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _user() -> str | None:
    try:
        return getpass.getuser()
    except (OSError, KeyError, ImportError):  # no login name known (a container without a passwd entry)
        return None


def _count(n: int, noun: str = "question") -> str:
    plural = noun[:-1] + "ies" if noun.endswith("y") else noun + "s"
    return f"{n} {noun if n == 1 else plural}"


def _queries(questions: Sequence[Question]) -> str:
    """The queries of ``questions``: ``Q1, Q3`` (at most three named)."""
    ids = list(dict.fromkeys(q.query_id for q in questions))
    named = ", ".join(ids[:3])
    return named if len(ids) <= 3 else f"{named} and {_count(len(ids) - 3, 'more query')}"


def _which(questions: Sequence[Question]) -> str:
    """The id of a single question, for the summary."""
    return f" ({questions[0].question_id})" if len(questions) == 1 else ""


def _counts(changes: Sequence[Change]) -> str:
    """``2 added, 1 edited``: how many questions each kind of change touched."""
    per = {kind: sum(c.kind == kind for c in changes) for kind in CHANGE_KINDS}
    said = ", ".join(f"{n} {kind}" for kind, n in per.items() if n)
    return said or "no question changed"
