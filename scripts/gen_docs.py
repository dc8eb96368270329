"""`make docs`: regenerate the generated blocks of the documentation (the rule catalogue in
docs/reference/rules.md, the configuration reference in docs/reference/configuration.md).

`--check` writes nothing and exits 1 naming the stale pages (tests/test_docs.py does the same in memory).
"""

from __future__ import annotations

import sys
from pathlib import Path

from envqa.app.docs_pages import stale_pages, write_pages

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str]) -> int:
    if "--check" in argv:
        stale = stale_pages(ROOT)
        for path in stale:
            print(f"{path} is stale: run make docs", file=sys.stderr)
        return 1 if stale else 0
    changed = write_pages(ROOT)
    print("\n".join(f"wrote {p}" for p in changed) or "docs are up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
