"""The Postgres backend of `Store`: a connection that speaks the SQLite dialect the store's methods are
written in, so every method (and every table someone adds to SCHEMA) runs unchanged on both backends.

What it translates, and why that is enough:
- `?` placeholders become `%s` (and a literal `%` becomes `%%`), outside quoted strings;
- `BEGIN IMMEDIATE` becomes `BEGIN` plus a transaction-scoped advisory lock: SQLite lets one writer in at a
  time, and the store's read-then-write transactions (record a trial exactly once, first approval wins)
  rely on that; the lock gives Postgres the same semantics, across every host;
- DDL types: INTEGER -> BIGINT, REAL -> DOUBLE PRECISION (Postgres' REAL is 4 bytes), BLOB -> BYTEA,
  `INTEGER PRIMARY KEY AUTOINCREMENT` -> BIGSERIAL;
- rows behave like sqlite3.Row: `row["col"]`, `row[0]`, `row.keys()`, `dict(row)`.

A restarted Postgres must not fail a worker: outside a transaction a statement reconnects and retries
until `retry_sec`; a transaction cut by a restart raises `StoreUnavailable`, a ConnectionError, which the
scheduler's policy treats as transient (the job runs again, and the store's idempotent writes keep it once).
"""

from __future__ import annotations

import os
import re
import time
from functools import lru_cache
from typing import TYPE_CHECKING

from envqa.core.defaults import POSTGRES_CONNECT_SEC, POSTGRES_RETRY_SEC

if TYPE_CHECKING:
    import psycopg

# psycopg is imported where a connection is made or used, not here: every `qa` process imports the store, most
# of them on SQLite, and psycopg's import cost 0.15 s of CPU each (measured with -X importtime).

WRITE_LOCK = 0x656E7671  # "envq": the one advisory lock that serialises writers, as SQLite does
_DDL = re.compile(r"^\s*(CREATE|ALTER)\s+TABLE", re.I)


def is_postgres_url(target: object) -> bool:
    return str(target).startswith(("postgresql://", "postgres://"))


class StoreUnavailable(ConnectionError):
    """The Postgres connection broke (server restart, network): transient, try again."""


@lru_cache(maxsize=512)
def translate(sql: str) -> str:
    """SQLite-dialect statement -> Postgres (placeholders everywhere, types in DDL)."""
    out, quoted = [], False
    for ch in sql:
        if ch == "'":
            quoted = not quoted
        if ch == "%":
            out.append("%%")
        elif ch == "?" and not quoted:
            out.append("%s")
        else:
            out.append(ch)
    text = "".join(out)
    if _DDL.match(text):
        text = re.sub(r"\bINTEGER\s+PRIMARY\s+KEY\s+AUTOINCREMENT\b", "BIGSERIAL PRIMARY KEY", text, flags=re.I)
        text = re.sub(r"\bINTEGER\b", "BIGINT", text, flags=re.I)
        text = re.sub(r"\bREAL\b", "DOUBLE PRECISION", text, flags=re.I)
        text = re.sub(r"\bBLOB\b", "BYTEA", text, flags=re.I)
    return text


def split_script(script: str) -> list[str]:
    """Statements of a schema script (no `;` inside string literals there), `--` comment lines dropped."""
    code = "\n".join(line for line in script.splitlines() if not line.lstrip().startswith("--"))
    return [s.strip() for s in code.split(";") if s.strip()]


class Row(tuple):
    """A result row usable like sqlite3.Row."""

    def __new__(cls, values, names: tuple[str, ...], index: dict[str, int]):
        row = super().__new__(cls, values)
        row._names, row._index = names, index
        return row

    def __getitem__(self, key):
        if isinstance(key, str):
            return tuple.__getitem__(self, self._index[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self._names)


def _row_factory(cursor):
    names = tuple(c.name for c in cursor.description or ())
    index = {n: i for i, n in enumerate(names)}
    return lambda values: Row(values, names, index)


class PgConnection:
    """One thread's connection (autocommit; transactions are explicit, as in the SQLite backend)."""

    def __init__(self, url: str, retry_sec: float = POSTGRES_RETRY_SEC):
        self.url, self.retry_sec = url, retry_sec
        self._conn: psycopg.Connection | None = None

    def _connect(self) -> psycopg.Connection:
        import psycopg

        deadline = time.monotonic() + self.retry_sec
        while True:
            try:
                return psycopg.connect(
                    self.url, autocommit=True, row_factory=_row_factory, connect_timeout=POSTGRES_CONNECT_SEC
                )
            except psycopg.OperationalError as e:
                if time.monotonic() > deadline:
                    raise StoreUnavailable(f"Postgres store unreachable: {e}") from e
                time.sleep(0.5)

    def _live(self) -> psycopg.Connection:
        if self._conn is None or self._conn.closed or self._conn.broken:
            self._conn = self._connect()
        return self._conn

    @property
    def in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus

        conn = self._conn
        return (
            conn is not None
            and not conn.closed
            and not conn.broken
            and conn.info.transaction_status in (TransactionStatus.INTRANS, TransactionStatus.INERROR)
        )

    def execute(self, sql: str, params=()):
        head = sql.strip().upper()
        if head in ("BEGIN", "BEGIN IMMEDIATE", "BEGIN EXCLUSIVE"):
            return self._begin()
        if head in ("COMMIT", "ROLLBACK") and self._conn is not None and (self._conn.closed or self._conn.broken):
            raise StoreUnavailable("the Postgres connection broke during the transaction")
        import psycopg

        in_tx = self.in_transaction
        deadline = time.monotonic() + self.retry_sec
        while True:
            try:
                return self._live().execute(translate(sql), tuple(params))
            except psycopg.OperationalError as e:
                if in_tx:
                    raise StoreUnavailable(f"Postgres store: {e}") from e
                if self._conn is not None and not (self._conn.closed or self._conn.broken):
                    raise  # the server answered: a real error, not a lost connection
                if time.monotonic() > deadline:
                    raise StoreUnavailable(f"Postgres store unreachable: {e}") from e
                time.sleep(0.5)  # outside a transaction a statement can simply be sent again

    def _begin(self):
        import psycopg

        deadline = time.monotonic() + self.retry_sec
        while True:
            conn = self._live()
            try:
                conn.execute("BEGIN")
                return conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            except psycopg.OperationalError as e:
                if not (conn.closed or conn.broken) or time.monotonic() > deadline:
                    raise StoreUnavailable(f"Postgres store: {e}") from e
                time.sleep(0.5)

    def executemany(self, sql: str, seq):
        cur = self._live().cursor()
        cur.executemany(translate(sql), [tuple(p) for p in seq])
        return cur

    def executescript(self, script: str) -> None:
        for stmt in split_script(script):
            self.execute(stmt)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def store_url(target: object) -> str | None:
    """The Postgres URL a store opened on `target` uses, or None for SQLite: `target` itself when it is a
    URL, else QA_STORE_URL (so every process of a deployment, workers included, follows one setting)."""
    if is_postgres_url(target):
        return str(target)
    url = os.environ.get("QA_STORE_URL", "").strip()
    if url and not is_postgres_url(url):
        from envqa.core.errors import InputError

        raise InputError("QA_STORE_URL", "must be a postgresql://user@host/db URL (unset it for the SQLite store)")
    return url or None


def store_exists(path: object) -> bool:
    """Is there a store to read? A Postgres store always is; an SQLite one when its file exists."""
    return store_url(path) is not None or os.path.exists(str(path))
