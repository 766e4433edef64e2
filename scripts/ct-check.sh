#!/usr/bin/env bash
# The constant-time check (issue 45, finding 12; ADR 0002): votum's secret-exponent paths run under
# valgrind memcheck with every secret marked undefined, so that memcheck reports each branch and
# each memory address that depends on a secret. Fails when a secret path reports one, and when the
# control (a variable-time power given the same secret) reports none.
set -euo pipefail
cd "$(dirname "$0")/.."
profile="${CT_PROFILE:-release}"
cargo build --profile "$profile" --locked -p votum-ct
dir=release; [ "$profile" = release ] || dir="$profile"
log="target/ct-check.log"
# memcheck's reports go to the log (the control alone makes thousands); the table to stdout
if valgrind --quiet --log-file="$log" --suppressions=scripts/ct-check.supp --num-callers=12 \
  "target/$dir/votum-ct"; then
  exit 0
fi
echo "ct-check failed; the first reports of $log:" >&2
grep -v "^==[0-9]*== *by 0x[0-9A-F]*: ???" "$log" | head -80 >&2
exit 1
