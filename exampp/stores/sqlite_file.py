"""What exampp's SQLite stores share: the file opened in autocommit mode (every write is a
transaction of ours), write transactions that take the lock up front, and SQLite's failures
as one-line errors naming the file. :class:`~exampp.stores.grade_store.GradeStore` (grades) and
:class:`~exampp.stores.assessments.AssessmentStore` (assessors' labels) build on it."""
from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import ClassVar, Self

from exampp.errors import InputError, OutputError
from exampp.files.io import PathLike


class SQLiteFile:
    """One SQLite file, created when missing (``read_only``: opened for reading only, never created).

    Safe to share between the threads of one process (transactions are serialised) and between
    processes (SQLite's locks). Use as a context manager or call :meth:`close`."""

    noun: ClassVar[str] = "SQLite file"  # what the file holds, as errors name it ("grade store")
    article: ClassVar[str] = "a"
    # Write failures that become an OutputError naming the file; None: every OperationalError.
    # Others (a lock held past the busy timeout, say) propagate as SQLite raised them.
    failures: ClassVar[tuple[str, ...] | None] = None

    def __init__(self, path: PathLike, busy_timeout: float = 60.0, *, read_only: bool = False):
        self.path = Path(path)
        if self.path.is_dir():
            raise InputError(self.path, None, f"is a folder, not {self.article} {self.noun} file")
        self._lock = threading.RLock()
        try:
            if not read_only:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            # isolation_level=None: BEGIN and COMMIT are ours, one transaction per write call
            self._db = sqlite3.connect(f"{self.path.absolute().as_uri()}?mode=ro" if read_only else self.path,
                                       timeout=busy_timeout, isolation_level=None, uri=read_only,
                                       check_same_thread=False)
        except (OSError, sqlite3.Error) as exc:
            raise OutputError(self.path, f"cannot open the {self.noun}: {exc}") from None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; inside another (a batch), part of it. IMMEDIATE takes the write lock
        up front: a second process waits here on the busy timeout instead of failing later on a lock
        upgrade, and what the transaction read stays true until it commits."""
        with self._lock:
            if self._db.in_transaction:
                yield self._db
                return
            with self._failing():
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    yield self._db
                    self._db.execute("COMMIT")
                except BaseException:
                    if self._db.in_transaction:  # a failed COMMIT (disk full) may leave it open
                        self._db.execute("ROLLBACK")
                    raise

    @contextmanager
    def _failing(self) -> Iterator[None]:
        """SQLite's write failures (:attr:`failures`) as an OutputError naming the file; what was
        committed before stays, the failed transaction is rolled back."""
        try:
            yield
        except sqlite3.OperationalError as exc:
            message = str(exc)
            if self.failures is None or any(word in message for word in self.failures):
                raise OutputError(self.path, f"cannot write the {self.noun}: {message}") from None
            raise
