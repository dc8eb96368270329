"""Queue names, effective per-queue settings and the retry policy: pure functions, no Redis."""

import random
import sqlite3

import pytest

from envqa.core.config import QueueSettings, SchedulerSettings, load_config
from envqa.core.errors import (
    InfraError,
    InputError,
    ProviderAuthError,
    ProviderOverloaded,
    RateLimited,
    TransientProviderError,
)
from envqa.core.policy import Action, backoff, decide
from envqa.core.queues import normalize_queue, queue_for_model, queue_settings
from envqa.store.db import Store

pytestmark = pytest.mark.fast  # the fast tier (make test-fast): no Docker, Redis or Postgres


def test_model_names_normalise_to_one_queue():
    assert normalize_queue(" Anthropic/Claude-Sonnet-4-5 ") == "anthropic/claude-sonnet-4-5"
    assert queue_for_model(None) == "sandbox"
    assert queue_for_model("OpenAI/gpt-5") == "openai/gpt-5"
    with pytest.raises(ValueError, match="provider/model"):
        normalize_queue("gpt-5")


def test_per_model_settings_fall_back_to_defaults(tmp_path):
    (tmp_path / "qa.toml").write_text(
        '[scheduler.models."OpenAI/GPT-5"]\nconcurrency = 7\n[scheduler.defaults]\nmax_attempts = 5\n'
    )
    s = load_config(tmp_path / "qa.toml").scheduler
    gpt = queue_settings(s, "openai/gpt-5")
    assert (gpt.concurrency, gpt.max_attempts) == (7, 5)
    other = queue_settings(s, "anthropic/claude-sonnet-4-5")
    assert other.concurrency == 4 and other.max_attempts == 5
    assert queue_settings(s, "sandbox").concurrency == 2


def test_bad_scheduler_config_names_the_field(tmp_path):
    (tmp_path / "qa.toml").write_text('[scheduler.models."openai/gpt-5"]\nconcurrency = 0\n')
    with pytest.raises(InputError, match=r"scheduler\.models\.openai/gpt-5\.concurrency"):
        load_config(tmp_path / "qa.toml")


POLICY = queue_settings(SchedulerSettings(), "openai/gpt-5")


def test_rate_limit_parks_without_spending_an_attempt():
    d = decide(RateLimited("429", retry_after=12.5), failures=2, parks=0, policy=POLICY)
    assert (d.action, d.delay_sec) == (Action.PARK, 12.5)
    d = decide(ProviderOverloaded("529"), failures=0, parks=0, policy=POLICY)
    assert (d.action, d.delay_sec) == (Action.PARK, POLICY.park_default_sec)
    d = decide(RateLimited("429", retry_after=1), failures=0, parks=POLICY.max_parks, policy=POLICY)
    assert d.action == Action.FAIL


def test_transient_errors_back_off_then_give_up():
    pol = QueueSettings(**{**POLICY.model_dump(), "max_attempts": 3, "backoff_base_sec": 1.0, "jitter": 0.0})
    first = decide(TransientProviderError("500"), failures=0, parks=0, policy=pol)
    second = decide(TransientProviderError("500"), failures=1, parks=0, policy=pol)
    assert (first.action, first.delay_sec, second.delay_sec) == (Action.RETRY, 1.0, 2.0)
    assert decide(TransientProviderError("500"), failures=2, parks=0, policy=pol).action == Action.FAIL
    assert decide(InfraError("no start", "sandbox_start"), failures=0, parks=0, policy=pol).action == Action.RETRY
    # a container removed under a trial, and a job past its RQ timeout, are the machinery's: retried
    for cls in ("sandbox_gone", "job_timeout"):
        assert decide(InfraError("gone", cls), failures=0, parks=0, policy=pol).action == Action.RETRY


def test_permanent_errors_fail_fast():
    for exc in (ProviderAuthError("401"), InputError("x", "bad"), KeyError("bug")):
        assert decide(exc, failures=0, parks=0, policy=POLICY).action == Action.FAIL


def test_jitter_stays_within_its_fraction():
    pol = QueueSettings(**{**POLICY.model_dump(), "backoff_base_sec": 4.0, "jitter": 0.5})
    rng = random.Random(1)
    delays = [backoff(1, pol, rng) for _ in range(200)]
    assert min(delays) >= 2.0 and max(delays) <= 4.0 and max(delays) - min(delays) > 1.0


def test_a_busy_store_is_retried_but_a_broken_one_is_not():
    policy = SchedulerSettings().defaults
    assert decide(sqlite3.OperationalError("database is locked"), 0, 0, policy).action == Action.RETRY
    assert decide(sqlite3.OperationalError("no such table: trials"), 0, 0, policy).action == Action.FAIL


def test_a_failed_transaction_surfaces_its_own_error_not_a_rollback_error(tmp_path, monkeypatch):
    monkeypatch.delenv("QA_STORE_URL", raising=False)  # SQLite's own behaviour (it rolls back by itself)
    store = Store(tmp_path / "envqa.db")
    with pytest.raises(sqlite3.OperationalError, match="no such table"), store.tx() as db:
        db.execute("ROLLBACK")  # what SQLite does by itself on busy or I/O errors
        db.execute("SELECT * FROM no_such_table")
    store.create_run("r1", "/env")  # the connection is still usable afterwards
    assert store.get_run("r1")["env_dir"] == "/env"
