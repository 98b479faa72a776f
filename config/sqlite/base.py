"""Django's SQLite backend, with writers queued on a file lock instead of SQLite's busy wait.

Two web processes of four threads each, plus the task worker, write to one SQLite file. When a
writer finds the file locked, SQLite's busy handler sleeps and retries: 1, 2, 5, 10, 15, 20,
25 ... ms. Under concurrent autosaves a save that needs 0.2 ms could wait tens of ms that way.
Here every write (an autocommit statement that is not a read, or a transaction from its BEGIN to
its COMMIT or ROLLBACK) first takes an exclusive `flock` on a file beside the database, one
per connection. The kernel hands the lock to the next writer the moment it is released, so
writers queue instead of sleeping. Reads never take it (WAL lets them run beside a writer).
A program that writes without this backend (sqlite3 in a shell) still meets SQLite's own
lock, as before.

It also remembers each statement's conversion from Django's `%s` placeholders to SQLite's `?`:
Django runs a regular expression over the SQL on every execute (about 7 us a statement here,
and a signed-in request runs four or five), although the same statements recur.
"""

from __future__ import annotations

import fcntl
import os
from functools import lru_cache

from django.db.backends.sqlite3 import base

_READS = ("SELECT", "EXPLAIN", "PRAGMA")
_REMEMBERED_SQL_CHARS = 4000  # longer statements (big IN lists, bulk inserts) are one-offs


@lru_cache(maxsize=1024)
def _qmark(query: str) -> str:
    return base.FORMAT_QMARK_REGEX.sub("?", query).replace("%%", "%")


class WriteLock:
    """An exclusive flock on `path`, held by one connection at a time across all processes."""

    def __init__(self, path: str) -> None:
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        self.held = False

    def acquire(self) -> None:
        if not self.held:
            fcntl.flock(self.fd, fcntl.LOCK_EX)  # blocks without the GIL
            self.held = True

    def release(self) -> None:
        if self.held:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            self.held = False

    def close(self) -> None:
        self.release()
        os.close(self.fd)


class CursorWrapper(base.SQLiteCursorWrapper):
    write_lock: WriteLock | None = None

    def convert_query(self, query, *, param_names=None):
        if param_names is None and len(query) <= _REMEMBERED_SQL_CHARS:
            return _qmark(query)
        return super().convert_query(query, param_names=param_names)

    def execute(self, query, params=None):
        lock = self.write_lock
        if lock is None or self.connection.in_transaction:
            return super().execute(query, params)  # inside a transaction: its BEGIN locked
        head = query.lstrip()[:8].upper()
        if head.startswith(_READS):
            return super().execute(query, params)
        lock.acquire()
        try:
            return super().execute(query, params)
        finally:
            if not self.connection.in_transaction:  # a BEGIN keeps it until COMMIT/ROLLBACK
                lock.release()

    def executemany(self, query, param_list):
        lock = self.write_lock
        if lock is None or self.connection.in_transaction:
            return super().executemany(query, param_list)
        lock.acquire()
        try:
            return super().executemany(query, param_list)
        finally:
            if not self.connection.in_transaction:
                lock.release()


class DatabaseWrapper(base.DatabaseWrapper):
    write_lock: WriteLock | None = None

    def get_new_connection(self, conn_params):
        connection = super().get_new_connection(conn_params)
        if not self.is_in_memory_db():
            self.write_lock = WriteLock(f"{self.settings_dict['NAME']}.write-lock")
        return connection

    def create_cursor(self, name=None):
        cursor = self.connection.cursor(factory=CursorWrapper)
        cursor.write_lock = self.write_lock
        return cursor

    def _commit(self):
        try:
            return super()._commit()
        finally:
            self._release_unless_in_transaction()

    def _rollback(self):
        try:
            return super()._rollback()
        finally:
            self._release_unless_in_transaction()

    def _close(self):
        try:
            return super()._close()
        finally:
            if self.write_lock is not None:
                self.write_lock.close()
                self.write_lock = None

    def _release_unless_in_transaction(self) -> None:
        if self.write_lock is not None and not (
            self.connection is not None and self.connection.in_transaction
        ):
            self.write_lock.release()
