#!/usr/bin/env bash
# The independent verifier must compile without any proving or secret-handling code
# (issue 5, ADR in ARCHITECTURE.md "Verifier build"). Those live behind the features
# `prove` (votum-elgamal, votum-proofs, votum-eg, votum-shuffle, votum-mixnet, votum-chvote, votum-eg2), `secret` (votum-arith, votum-group) and `sign` (votum-node).
# This fails when votum-verify's own dependency tree turns either of them on, and checks
# that the crates it uses still build, warning-free, without them.
set -euo pipefail
cd "$(dirname "$0")/.."

tree=$(cargo tree -p votum-verify -e features --locked --prefix none)
if ! grep -q '^votum-eg ' <<<"$tree"; then
    echo "check-verifier-tree: cargo tree printed no votum-eg; cannot judge the tree" >&2
    exit 1
fi
bad=$(grep -E '^votum-[a-z]+ feature "(prove|secret|sign|default)"' <<<"$tree" \
    | grep -v '^votum-record ' || true)
if [ -n "$bad" ]; then
    echo "check-verifier-tree: votum-verify pulls in proving or secret-handling code:" >&2
    echo "$bad" >&2
    exit 1
fi

# The same crates, without those features, must compile with no warning (dead code left
# behind by a missing gate shows up here).
cargo clippy --release --locked --no-default-features \
    -p votum-arith -p votum-group -p votum-hash -p votum-elgamal -p votum-proofs \
    -p votum-eg -p votum-shuffle -p votum-mixnet -p votum-splitvalue -p votum-chvote -p votum-eg2 -p votum-node -p votum-verify -- -D warnings
echo "check-verifier-tree: votum-verify builds without features prove/secret"
