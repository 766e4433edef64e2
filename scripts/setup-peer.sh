#!/usr/bin/env bash
# Installs the reference implementation, electionguard 1.4.0, in .peer (a Python 3.10 virtual
# environment) for interoperability tests and side-by-side benchmarks. It does not import on 3.11+.
# Exit 3 when no Python 3.10 can be found (tests then fail in CI and skip elsewhere).
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '\033[1m[setup-peer]\033[0m %s\n' "$*" >&2; }

if [ -x .peer/bin/python ] && .peer/bin/python -c 'import electionguard, electionguard_tools' 2>/dev/null; then
  exit 0
fi
py=""
for candidate in "${VOTUM_PEER_PYTHON:-}" python3.10 \
    "$(command -v pyenv >/dev/null 2>&1 && echo "$(pyenv root)/versions/3.10.13/bin/python" || true)"; do
  [ -n "$candidate" ] || continue
  if command -v "$candidate" >/dev/null 2>&1 &&
     "$candidate" -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 10) else 1)' 2>/dev/null; then
    py=$(command -v "$candidate"); break
  fi
done
if [ -z "$py" ]; then
  for found in "$HOME"/.pyenv/versions/3.10*/bin/python /usr/bin/python3.10; do
    [ -x "$found" ] && py="$found" && break
  done
fi
if [ -z "$py" ]; then
  log "no Python 3.10 found (set VOTUM_PEER_PYTHON); the reference peer is not installed"
  exit 3
fi
log "installing electionguard 1.4.0 into .peer with $py"
rm -rf .peer
"$py" -m venv .peer
.peer/bin/python -m pip install -q --upgrade pip
# dacite >= 1.7 breaks electionguard 1.4.0's deserialization of datetimes; hypothesis is needed by
# electionguard_tools.
.peer/bin/python -m pip install -q "electionguard==1.4.0" "dacite==1.6.0" "hypothesis<7"
.peer/bin/python -c 'import electionguard, electionguard_tools'
log "ready: $(.peer/bin/python -c 'import electionguard, sys; print("electionguard 1.4.0 on Python", sys.version.split()[0])')"
