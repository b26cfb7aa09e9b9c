"""The OpenAI Batch API's journal, kept in the grade store's file: the batches a job submitted (id, server,
model, method, state, requests) and, per request key, its batch and, once downloaded, its answer.

Each change is one transaction of the grade store's: a process killed between submitting and downloading
finds its batches here and polls them instead of submitting again, and one killed after downloading loses
no answer. The tables do not bear on grades: a store with them stays readable by older exampp.
:class:`~exampp.stores.grade_store.GradeStore` creates them (:data:`SCHEMA`, added when a writer opens a store without
them) and gives its journal as :attr:`~exampp.stores.grade_store.GradeStore.batches`; :mod:`exampp.llm.openai.batch`
writes and reads it.
"""
from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager

# The batches and their requests by key, each with its answer once downloaded (status NULL until then; 0: the
# batch ended without one).
SCHEMA = """
CREATE TABLE IF NOT EXISTS batches (
    id TEXT PRIMARY KEY, url TEXT NOT NULL, model TEXT NOT NULL, method_id TEXT NOT NULL, state TEXT NOT NULL,
    requests INTEGER NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS batch_answers (
    key BLOB PRIMARY KEY, batch TEXT NOT NULL, status INTEGER, body BLOB) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS batch_answers_by_batch ON batch_answers (batch);
"""
ENDED = ("completed", "failed", "expired", "cancelled")  # the Batch API's final states


class BatchJournal:
    """The batches and answers in the SQLite file ``db`` is connected to, each write one ``transaction()``
    (the store's: inside a transaction of its own, part of that one)."""

    def __init__(self, db: sqlite3.Connection,
                 transaction: Callable[[], AbstractContextManager[sqlite3.Connection]]) -> None:
        self._db = db
        self._transaction = transaction

    def add(self, batch_id: str, url: str, model: str, method_id: str, keys: Sequence[str]) -> None:
        """Keep a batch just created at ``url`` for ``model``, with its requests' keys (hex), awaiting answers."""
        with self._transaction() as db:
            db.execute("INSERT OR REPLACE INTO batches (id, url, model, method_id, state, requests, created)"
                       " VALUES (?, ?, ?, ?, 'validating', ?, ?)",
                       (batch_id, url, model, method_id, len(keys), time.time()))
            db.executemany("INSERT OR REPLACE INTO batch_answers (key, batch, status, body) VALUES (?, ?, NULL, NULL)",
                           ((bytes.fromhex(key), batch_id) for key in keys))

    def pending(self, url: str, model: str) -> list[str]:
        """The batches of ``model`` at ``url`` whose answers are not in, oldest first."""
        marks = ", ".join("?" * len(ENDED))
        return [row[0] for row in self._db.execute(
            f"SELECT id FROM batches WHERE url = ? AND model = ? AND state NOT IN ({marks}) ORDER BY created, id",
            (url, model, *ENDED))]

    def end(self, batch_id: str, state: str, answers: Iterable[tuple[str, tuple[int, bytes]]] | None) -> None:
        """Keep the answers of an ended batch (key -> status, body; lines of keys it lacks are ignored), its
        requests without one as unanswered (status 0), and its final ``state``: all in one transaction.
        ``answers`` None: the batch answered nothing, and its requests are forgotten (to be submitted anew)."""
        with self._transaction() as db:
            if answers is None:
                db.execute("DELETE FROM batch_answers WHERE batch = ?", (batch_id,))
                answers = ()
            db.executemany("UPDATE batch_answers SET status = ?, body = ? WHERE key = ? AND batch = ?",
                           ((status, body, bytes.fromhex(key), batch_id) for key, (status, body) in answers))
            db.execute("UPDATE batch_answers SET status = 0 WHERE batch = ? AND status IS NULL", (batch_id,))
            db.execute("UPDATE batches SET state = ? WHERE id = ?", (state, batch_id))

    def answers(self, url: str, model: str, batch_id: str | None = None) -> dict[str, tuple[int | None, bytes | None]]:
        """The requests of the batches of ``model`` at ``url`` (or of batch ``batch_id`` alone): key (hex) ->
        (status, body), both None while the batch is open."""
        sql = ("SELECT a.key, a.status, a.body FROM batch_answers a JOIN batches b ON b.id = a.batch"
               " WHERE b.url = ? AND b.model = ?" + (" AND b.id = ?" if batch_id is not None else ""))
        params = (url, model) + ((batch_id,) if batch_id is not None else ())
        return {key.hex(): (status, body) for key, status, body in self._db.execute(sql, params)}

    def forget_answers(self, url: str, model: str, method_id: str) -> None:
        """Drop the answers of the batches ``method_id`` submitted to ``model`` at ``url`` (its grades are
        committed); requests still awaited stay."""
        with self._transaction() as db:
            db.execute("DELETE FROM batch_answers WHERE status IS NOT NULL AND batch IN"
                       " (SELECT id FROM batches WHERE url = ? AND model = ? AND method_id = ?)",
                       (url, model, method_id))
