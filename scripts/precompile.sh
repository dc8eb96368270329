#!/usr/bin/env bash
# Compile the package's modules to __pycache__ before the suite runs. Where PYTHONDONTWRITEBYTECODE is set (the
# environment of the machines we run on sets it, as many container images do), no import writes bytecode, so each
# of the suite's `qa` and worker processes compiled our ~320 modules from source again: 0.3 s of CPU each,
# measured. Imports still read the bytecode compileall writes. Only importable packages: the folders of scripts
# and task templates that are uploaded into sandboxes or copied into new tasks get no __pycache__.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${QA_VENV:-.venv}"
"$VENV/bin/python" -m compileall -q -j 0 -x '(exploit_scripts|/scripts/|generator_templates)' \
  envqa core agents probes graphs sandbox store scheduler providers app demo prompts > /dev/null
