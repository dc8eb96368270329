"""The LangGraph checkpointer next to the store: SQLite beside an SQLite store, Postgres beside a Postgres
store (same database), so a run waiting for approval can be resumed from any host that reaches the store."""

from __future__ import annotations

import sqlite3
from contextlib import ExitStack

from envqa.core.config import QAConfig

SETUP_LOCK = 0x656E7663


def open_checkpointer(config: QAConfig, store, stack: ExitStack):
    """A checkpointer whose connection `stack` closes."""
    if getattr(store, "url", None):
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row

        conn = psycopg.connect(store.url, autocommit=True, prepare_threshold=0, row_factory=dict_row)
        stack.callback(conn.close)
        saver = PostgresSaver(conn)
        conn.execute("SELECT pg_advisory_lock(%s)", (SETUP_LOCK,))  # one process at a time sets the tables up
        try:
            saver.setup()
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (SETUP_LOCK,))
        return saver
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(config.checkpoint_path, check_same_thread=False)
    stack.callback(conn.close)
    return SqliteSaver(conn)
