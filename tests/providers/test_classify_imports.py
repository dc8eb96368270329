"""`classify` maps an SDK's exception without importing the other SDK: a worker's first 429 used to import
anthropic (~0.6 s of CPU) on the path from the 429 to parking its queue, the scheduler benchmark's regression
(docs/benchmarks.md). Run in a fresh interpreter: this session has imported both SDKs long ago."""

from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = """
import json, sys
import httpx, openai
from envqa.providers.errors import classify
request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
limited = openai.RateLimitError("slow down", response=httpx.Response(429, headers={"retry-after": "3"}, request=request), body=None)
timeout = openai.APITimeoutError(request=request)
out = [classify(e, "m", None) for e in (limited, timeout)]
print(json.dumps({"anthropic_loaded": "anthropic" in sys.modules,
                  "classes": [type(e).__name__ for e in out], "retry_after": out[0].retry_after,
                  "error_class": out[1].error_class}))
"""


def test_an_openai_error_is_classified_without_importing_anthropic():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, check=True)
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got == {
        "anthropic_loaded": False,
        "classes": ["RateLimited", "TransientProviderError"],
        "retry_after": 3.0,
        "error_class": "provider_timeout",
    }
