#!/usr/bin/env bash
# Builds benches/egrs (votum against microsoft/electionguard-rust) in a scratch folder beside a checkout of
# electionguard-rust at commit f5c8c1b, the last whose library encrypts and verifies ballots with a working
# API (spec/65.10), and prints the binary's path. Nothing of electionguard-rust enters the repository.
#
# EGRS_REPO: a clone of github.com/microsoft/electionguard-rust (default: the tool library's mirror).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
repo="${EGRS_REPO:-/work/.mirror/microsoft+electionguard-rust/repo}"
scratch="${EGRS_SCRATCH:-/tmp/votum-egrs}"
if [ ! -d "$repo" ]; then
    echo "no electionguard-rust checkout at $repo (set EGRS_REPO)" >&2
    exit 2
fi
if [ ! -d "$scratch/src" ]; then
    rm -rf "$scratch"
    git clone -q "$repo" "$scratch"
fi
git -C "$scratch" checkout -q f5c8c1b
mkdir -p "$scratch/src/votum-egrs-bench/src"
cp "$here/benches/egrs/main.rs" "$scratch/src/votum-egrs-bench/src/main.rs"
cat > "$scratch/src/votum-egrs-bench/Cargo.toml" <<TOML
[package]
name = "votum-egrs-bench"
version = "0.1.0"
edition = "2021"
publish = false

[dependencies]
eg = { path = "../eg" }
util = { path = "../util" }
votum-eg2 = { path = "$here/crates/votum-eg2" }
votum-group = { path = "$here/crates/votum-group" }
votum-verify = { path = "$here/crates/votum-verify" }
rand_chacha = "0.3"
serde_json = "1"
TOML
# a member of electionguard-rust's workspace, so its own Cargo.lock pins its dependencies
grep -q '"votum-egrs-bench"' "$scratch/src/Cargo.toml" ||
    sed -i 's/^members = \[/members = [\n  "votum-egrs-bench",/' "$scratch/src/Cargo.toml"
(cd "$scratch/src" && CARGO_TARGET_DIR="$scratch/target" cargo build --release -q -p votum-egrs-bench >&2)
echo "$scratch/target/release/votum-egrs-bench"
