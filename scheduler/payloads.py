"""Job payloads on the wire: a job names its configuration by hash, never carries it.

A trial, a probe, a model call or a run's graph runs with a whole QAConfig (models, limits, probes, the
gate's focused settings). Putting that in every Redis job copied it thousands of times and let two copies of
one run's config drift. Instead the submitter saves the config in the store (one row per distinct config,
`Store.save_config`) and the job carries `config_hash` and the store's path; the body reads the config back
(envqa.app.jobs.resolve_config). Redis is transport; the store is the truth.
"""

from __future__ import annotations

import json

from envqa.store.db import Store


def by_reference(store: Store, payload: dict, db_path: str) -> dict:
    """The payload with its `config` (a dict or JSON text), and a call's `args.config`, replaced by the hash of
    the stored copy; `db_path` tells the worker which store holds it (QA_STORE_URL wins there, as everywhere)."""
    out = dict(payload)
    if "config" in out:
        out["config_hash"] = store.save_config(_text(out.pop("config")))
    args = out.get("args")
    if isinstance(args, dict) and "config" in args:
        out["args"] = {k: v for k, v in args.items() if k != "config"}
        out["args"]["config_hash"] = store.save_config(_text(args["config"]))
    out["db_path"] = db_path
    return out


def _text(config: dict | str) -> str:
    return config if isinstance(config, str) else json.dumps(config, sort_keys=True)
