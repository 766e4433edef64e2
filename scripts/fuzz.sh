#!/usr/bin/env bash
# Fuzzes the decoders of untrusted bytes with libFuzzer (cargo-fuzz, nightly Rust).
#   scripts/fuzz.sh TARGET [SECONDS]   one target (default 1800 s); new inputs go to fuzz/corpus/TARGET
#   scripts/fuzz.sh all [SECONDS]      every target, two at a time
# Crashes do not stop the run (fork mode); each lands in fuzz/artifacts/TARGET/. The corpus is minimized
# afterwards (cargo fuzz cmin). It is a working directory, not committed (.gitignore, as cargo-fuzz's own
# template and OSS-Fuzz keep it): a run grows it from fuzz/seeds/TARGET, which is committed with the
# regression inputs. A finding gets a regression input in fuzz/regressions/TARGET/, named for it; `cargo test
# -p votum-fuzz` (in CI) replays the seeds, the regressions and whatever corpus is on the machine.
# Installs nightly and cargo-fuzz when missing (development only: CI replays the corpus on stable).
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?target or all}
seconds=${2:-1800}
targets=(group_codec mix_wire mix_record archive eg_json manifest sv_record chv_record node_frame ivxv_record
    belenios_record vmn_session eg2_record eg2_party eg21_record eg21_party)

rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
(cd fuzz && cargo +nightly fuzz build -O >/dev/null)

run_one() {
    local t=$1
    mkdir -p "fuzz/corpus/$t" "fuzz/artifacts/$t" fuzz/logs
    # max_len: the largest seed (archives and records are tens to hundreds of KiB)
    local max=$(( $(find "fuzz/seeds/$t" -type f -printf '%s\n' | sort -n | tail -1) + 4096 ))
    (cd fuzz && cargo +nightly fuzz run -O "$t" "corpus/$t" "seeds/$t" -- \
        -max_total_time="$seconds" -max_len="$max" -rss_limit_mb=2048 -malloc_limit_mb=2048 \
        -timeout=20 -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
        -artifact_prefix="artifacts/$t/" -print_final_stats=1) > "fuzz/logs/$t.log" 2>&1 || true
    # keep the corpus small enough to commit: the fewest inputs that cover what the run reached
    (cd fuzz && cargo +nightly fuzz cmin -O "$t" "corpus/$t" -- -rss_limit_mb=2048 -timeout=20) \
        > "fuzz/logs/cmin_$t.log" 2>&1 || true
    echo "$t: $(grep -c 'crash-\|timeout-\|oom-' "fuzz/logs/$t.log" || true) artifact lines," \
        "$(find "fuzz/corpus/$t" -type f | wc -l) corpus inputs, log fuzz/logs/$t.log"
}

if [ "$target" = all ]; then
    for ((i = 0; i < ${#targets[@]}; i += 2)); do
        run_one "${targets[i]}" &
        if [ -n "${targets[i+1]:-}" ]; then run_one "${targets[i+1]}" & fi
        wait
    done
else
    run_one "$target"
fi
