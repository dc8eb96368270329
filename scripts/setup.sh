#!/usr/bin/env bash
# Take a fresh Debian/Ubuntu machine (as root) to one that runs envqa and its tests:
# Docker engine (started without systemd), redis-server, strace, the local base image, the venv.
# Re-running is harmless: every step checks before it acts.
set -euo pipefail
cd "$(dirname "$0")/.."

BASE_IMAGE="${QA_BASE_IMAGE:-envqa-base:bookworm}"
BASE_PACKAGES="python3,python3-pytest,procps,gcc,libc6-dev,file"
VENV="${QA_VENV:-.venv}"
say() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; }

need_apt=()
command -v dockerd >/dev/null 2>&1 || need_apt+=(docker.io)
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
command -v strace >/dev/null 2>&1 || need_apt+=(strace)
command -v debootstrap >/dev/null 2>&1 || need_apt+=(debootstrap)
command -v iptables >/dev/null 2>&1 || need_apt+=(iptables)
python3 -c 'import venv, ensurepip' 2>/dev/null || need_apt+=(python3-venv)
if [ ${#need_apt[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || { echo "setup: installing ${need_apt[*]} needs root" >&2; exit 2; }
  say "installing ${need_apt[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

if ! docker info >/dev/null 2>&1; then
  say "starting dockerd (no systemd here)"
  mkdir -p /var/log
  nohup dockerd >/var/log/envqa-dockerd.log 2>&1 &
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null 2>&1 || { echo "setup: dockerd did not come up; see /var/log/envqa-dockerd.log" >&2; exit 3; }
fi

if ! docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
  say "building $BASE_IMAGE with debootstrap (about a minute)"
  rootfs="$(mktemp -d /tmp/envqa-rootfs.XXXXXX)"
  trap 'rm -rf "$rootfs"' EXIT
  debootstrap --variant=minbase --include="$BASE_PACKAGES" bookworm "$rootfs" >/tmp/envqa-debootstrap.log 2>&1 \
    || { echo "setup: debootstrap failed; see /tmp/envqa-debootstrap.log" >&2; exit 3; }
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -c . | docker import \
    -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    -c 'ENV LANG=C.UTF-8' -c 'WORKDIR /root' - "$BASE_IMAGE" >/dev/null
  rm -rf "$rootfs"; trap - EXIT
fi
say "base image $BASE_IMAGE ready"

if [ ! -x "$VENV/bin/python" ]; then
  say "creating $VENV"
  python3 -m venv "$VENV"
fi
stamp="$VENV/.envqa-installed"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  say "installing envqa with dev extras"
  "$VENV/bin/pip" install -q --disable-pip-version-check -e '.[dev]' 2>&1 | grep -v '^WARNING: Location' || true
  "$VENV/bin/python" -c 'import envqa.cli' && touch "$stamp"
fi
say "ready: $VENV/bin/qa"
