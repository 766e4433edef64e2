#!/usr/bin/env bash
# Sets up everything votum needs on a fresh machine of this kind, idempotently:
# system packages, the Python virtual environment, and the Rust build of votum._native.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; }

# --- system packages -------------------------------------------------------------------------
# m4: GMP's build (bundled by rug) needs it; postgresql for the service's tests; iproute2, nftables and
# tshark for the tests across network namespaces; chromium for the web pages' tests; belenios-tool for the
# Belenios archives' tests. Everything else
# the project needs comes from crates.io and PyPI.
# `scripts/setup.sh core` (make election, make demo): only what an election needs, so that a user without
# root runs the main job when a compiler and m4 are there (issue 42, C.5); the default also installs what
# the tests need.
mode="${1:-all}"
case "$mode" in core|all) ;; *) log "usage: scripts/setup.sh [core|all]"; exit 2 ;; esac
need_apt=()
command -v m4 >/dev/null 2>&1 || need_apt+=(m4)
command -v cc >/dev/null 2>&1 || need_apt+=(build-essential)
if [ "$mode" = all ]; then
# PostgreSQL: the service's second store; the tests start a throwaway server (votum.store.tempdb)
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || command -v initdb >/dev/null 2>&1 || need_apt+=(postgresql)
# network namespaces, nftables (loss, partitions), tc and tshark: the channels' tests across real interfaces
command -v ip >/dev/null 2>&1 && command -v tc >/dev/null 2>&1 || need_apt+=(iproute2)
command -v nft >/dev/null 2>&1 || need_apt+=(nftables)
command -v tshark >/dev/null 2>&1 || need_apt+=(tshark)
# headless Chromium and its WebDriver: the web pages' tests run in a real browser
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need_apt+=(chromium-driver)
# valgrind: `make ct-check` runs the secret-exponent paths under memcheck, and votum-ct builds
# against its client-request headers
command -v valgrind >/dev/null 2>&1 && [ -f /usr/include/valgrind/memcheck.h ] || need_apt+=(valgrind)
# belenios-tool (Debian's Belenios 2.0): the tests hold Belenios elections with it and compare its verdicts
# with `votum verify`'s (spec/94)
command -v belenios-tool >/dev/null 2>&1 || need_apt+=(belenios-tool)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    log "installing ${need_apt[*]} with apt-get"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    log "missing system packages: ${need_apt[*]} (run: sudo apt-get install -y ${need_apt[*]})"
    exit 1
  fi
fi

# --- Rust ------------------------------------------------------------------------------------
if ! command -v cargo >/dev/null 2>&1; then
  if [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
  else
    log "cargo not found: install Rust (https://rustup.rs) and run again"
    exit 1
  fi
fi

# --- Python ----------------------------------------------------------------------------------
pick_python() {
  for candidate in "${VOTUM_PYTHON:-}" python3.11 python3.12 python3.10 python3; do
    [ -n "$candidate" ] || continue
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' 2>/dev/null; then
      command -v "$candidate"; return 0
    fi
  done
  return 1
}
if [ ! -x .venv/bin/python ]; then
  py=$(pick_python) || { log "need Python >= 3.10"; exit 1; }
  log "creating .venv with $py ($("$py" --version))"
  "$py" -m venv .venv
fi
stamp=.venv/.deps-stamp
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  log "installing Python build and test dependencies"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q "maturin>=1.7,<2" typer rich pytest pytest-timeout pytest-xdist hypothesis ruff mypy "pylint>=3.2" gmpy2 \
    "fastapi>=0.165" "pydantic>=2.7" "uvicorn>=0.30" "httptools>=0.6" "uvloop>=0.19" "msgpack>=1.0" "cryptography>=50" "httpx>=0.27" "httpx2>=2.16" \
    "sqlalchemy>=2.0" "psycopg[binary]>=3.2" "prometheus-client>=0.20" "jinja2>=3.1" "distributed>=2024.8" "bokeh>=3.1" "selenium>=4.20" "schemathesis>=4.0" "trustme>=1.1" "prompt_toolkit>=3.0" "tomli>=2.0; python_version < '3.11'"
  touch "$stamp"
fi

# --- the Rust core as votum._native ----------------------------------------------------------
log "building votum._native (release; the first build compiles GMP, about two minutes)"
mkdir -p target
if ! VIRTUAL_ENV="$PWD/.venv" PATH="$PWD/.venv/bin:$PATH" .venv/bin/maturin develop --release >target/maturin.log 2>&1; then
  cat target/maturin.log >&2
  log "maturin develop failed (log above, also in target/maturin.log)"
  exit 1
fi
# Check the result:
.venv/bin/python -c 'import votum, votum._native as n; assert n.__version__' \
  || { log "votum._native did not build"; exit 1; }
log "ready: $(.venv/bin/python -c 'import votum; print("votum", votum.__version__)')"
