# The README's commands. Nothing runs in CI that a person cannot run with these targets.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
export PATH := $(HOME)/.cargo/bin:$(PATH)

.PHONY: setup setup-core peer election demo test test-rust test-python lint ct-check fmt bench bench-arith bench-eg bench-eg-ceremony bench-eg-encrypt bench-eg-verify bench-eg-decrypt bench-eg-pipeline bench-verify bench-service bench-service-v1 bench-service-attack bench-web bench-mix bench-sv bench-sv-peer bench-chvote bench-nodes bench-nodes-memory bench-ivxv bench-other-records bench-eg2-verify bench-eg21 bench-eg21-service bench-eg21-own bench-eg21-large bench-eg21-memory bench-eg21-verify bench-egrs bench-record-size bench-ifma bench-cluster bench-cluster-netns fuzz clean

setup:
	@scripts/setup.sh

## What the main job needs and no more (no PostgreSQL, Chromium or network tools): `make election`.
setup-core:
	@scripts/setup.sh core

## The reference implementation (electionguard 1.4.0, Python 3.10) for interop tests and benchmarks.
## Outside CI a missing Python 3.10 is not an error here: the interop tests then skip and say why.
peer:
	@scripts/setup-peer.sh || { rc=$$?; if [ -n "$$CI" ] || [ $$rc -ne 3 ]; then exit $$rc; fi; }

## The main job: a whole ElectionGuard 1.0 election on embedded defaults.
election: setup-core
	$(VENV)/bin/votum election

demo: setup-core
	$(VENV)/bin/votum demo

## Every test: lints, Rust tests, Python tests.
test: setup peer lint ct-check test-rust test-python

# secret-exponent paths under valgrind memcheck, secrets marked undefined (ADR 0002)
ct-check:
	scripts/ct-check.sh

# examples are left to clippy (--all-targets): building them here cost a minute of the test command. The
# benchmark drivers and the constant-time check have no tests (clippy checks them, ct-check runs votum-ct);
# scripts/check-test-targets.py (in lint) fails if a test appears where this command would not run it. The doc
# tests exclude the same crates: the same features unify, so they reuse the first command's build
test-rust:
	cargo test --workspace --exclude votum-bench --exclude votum-ct --profile ci --locked --tests
	cargo test --workspace --exclude votum-py --exclude votum-bench --exclude votum-ct --profile ci --locked --doc

# two processes, a test file to each at a time (tests/netlab.py keeps their network labs apart); schemathesis
# gives all its cases one node id, which pytest-xdist would run once, so the API fuzz test runs apart
test-python:
	$(PY) -m pytest -q -n 2 --dist loadfile --durations=30 --ignore=tests/service/test_service_fuzz.py
	$(PY) -m pytest -q tests/service/test_service_fuzz.py

lint:
	cargo fmt --all -- --check
	cargo clippy --workspace --release --all-targets --locked -- -D warnings
	scripts/check-verifier-tree.sh
	$(VENV)/bin/ruff check python tests benches
	$(VENV)/bin/ruff format --check python tests benches
	$(VENV)/bin/mypy
	python3 scripts/check-circles.py
	python3 scripts/check-test-targets.py
	$(VENV)/bin/pylint --disable=all --enable=cyclic-import --score=n python/votum

fmt:
	cargo fmt --all
	$(VENV)/bin/ruff format python tests benches
	$(VENV)/bin/ruff check --fix python tests benches

## Coverage-guided fuzzing of every decoder (nightly Rust + cargo-fuzz, installed by the script; never in CI,
## which replays the kept inputs on stable). FUZZ_SECONDS per target, two targets at a time.
FUZZ_SECONDS ?= 1800
fuzz:
	scripts/fuzz.sh all $(FUZZ_SECONDS)

## Benchmarks (never part of the tests). Results go to BENCHMARKS.md by hand, with the machine facts.
bench: bench-arith bench-eg bench-verify bench-mix

## Every homomorphic-election benchmark against electionguard 1.4.0.
bench-eg: bench-eg-ceremony bench-eg-encrypt bench-eg-verify bench-eg-decrypt bench-eg-pipeline

bench-arith: setup
	cargo run --release --locked -p votum-bench --bin bench-arith
	$(PY) benches/bench_arith_python.py

clean:
	rm -rf target $(VENV)

## The key ceremony (5 guardians, quorum 3) in one native call against the same steps called from Python.
bench-eg-ceremony: setup
	RAYON_NUM_THREADS=1 $(PY) benches/bench_eg_ceremony.py
	RAYON_NUM_THREADS=2 $(PY) benches/bench_eg_ceremony.py

## One ballot, single thread, votum against electionguard 1.4.0 in the same run.
bench-eg-encrypt: setup peer
	RAYON_NUM_THREADS=1 $(PY) benches/bench_eg_encrypt.py

## One lone ballot checked, single thread, votum's ballot box against electionguard 1.4.0's is_valid_encryption.
bench-eg-verify: setup peer
	RAYON_NUM_THREADS=1 $(PY) benches/bench_eg_verify.py
	RAYON_NUM_THREADS=2 $(PY) benches/bench_eg_verify.py

## One spoiled ballot decrypted with 2 of 5 guardians missing: producing shares, checking and combining.
bench-eg-decrypt: setup peer
	RAYON_NUM_THREADS=1 $(PY) benches/bench_eg_decrypt.py
	RAYON_NUM_THREADS=2 $(PY) benches/bench_eg_decrypt.py

## The whole pipeline (N = 1,000 one-contest ballots, 100 five-contest ballots), votum on 1 and 2 threads
## against electionguard 1.4.0 in the same run (the reference takes several minutes).
bench-eg-pipeline: setup peer
	$(PY) benches/bench_eg_pipeline.py

bench-verify: setup peer
	cargo build --release --locked -p votum-verify
	$(PY) benches/bench_verify_record.py

## Mixnets (issue 7): per-ciphertext shuffle costs per group on one and two threads, then whole
## elections: CHVote's (4 authorities, 2048-bit, 1-of-3, N = 1,000 and 20,000) and nVotes' (2
## trustees, 2048-bit and ristretto255). BENCH_MIX_LARGE=0 skips the N = 20,000 run.
BENCH_MIX_LARGE ?= 1
bench-mix:
	cargo build --release --locked -p votum-bench --bin bench-shuffle --bin bench-mix
	RAYON_NUM_THREADS=1 target/release/bench-shuffle ristretto255=10000 modp-2048=1000 eg-4096=300
	RAYON_NUM_THREADS=2 target/release/bench-shuffle ristretto255=10000 modp-2048=1000 eg-4096=300
	target/release/bench-mix modp-2048 1000 4 4
	target/release/bench-mix modp-2048 2000 2 2
	target/release/bench-mix ristretto255 20000 2 2
	if [ "$(BENCH_MIX_LARGE)" != 0 ]; then target/release/bench-mix modp-2048 20000 4 4; fi
	if [ "$(BENCH_MIX_LARGE)" != 0 ]; then target/release/bench-mix ristretto255 1000000 3 3; fi

## Split-value elections (spec/97), the thesis's election at 10^3..10^5 voters (10^6 unless BENCH_SV_LARGE=0):
## in one process, then with every party in its own process over the channels: per-phase times, the
## verifier's, record size, peak memory (per process), bytes per hop.
## CHVote (spec/92) beside the Geneva proof of concept in the same run (shared/reference/chvote-peer.md):
## CHVOTE_POC_SRC is a checkout of republique-et-canton-de-geneve/chvote-protocol-poc; it is built outside
## the repository by scripts/setup-chvote-peer.sh. BENCH_CHVOTE_RUNS picks the runs, BENCH_REPEAT the repeats.
bench-chvote:
	cargo build --release --locked -p votum-bench --bin bench-chvote
	scripts/setup-chvote-peer.sh
	$(PY) benches/bench_chvote.py

bench-sv: setup
	cargo build --release --locked -p votum-bench --bin bench-sv
	target/release/bench-sv 1000 10000 100000
	if [ "$(BENCH_SV_LARGE)" != 0 ]; then target/release/bench-sv 1000000; fi
	$(PY) benches/bench_sv_processes.py 10000 100000
	if [ "$(BENCH_SV_LARGE)" != 0 ]; then $(PY) benches/bench_sv_processes.py 1000000; fi

## The thesis's default election against ron-rivest/split-value-voting in the same run (SV_PEER=checkout).
bench-sv-peer: setup
	$(PY) benches/bench_sv_peer.py --voters 1000 --repeat 3

## The seed endpoints over real HTTP (votum serve + the load client): per-endpoint p50/p95, memory.
bench-service: setup
	$(PY) benches/bench_service_seed.py

## Sustained ballot submissions through the stateful API, on SQLite and on PostgreSQL.
bench-service-v1: setup
	$(PY) benches/bench_service_v1.py

## An ElectionGuard 2.1 election through the service, timed by stage (spec/80.11).
bench-eg21-service: setup
	$(PY) benches/bench_eg21_service.py

## Ballot intake while anonymous clients loop on the record export (issue 43, item 1).
bench-service-attack: setup
	$(PY) benches/bench_service_attack.py

## The web pages (spec/80.9) with 10^5 ballots on the board: an election through /v1, then each page fetched 30
## times (BENCH_N, BENCH_REPEAT; BENCH_WEB_DATA=DIR keeps the data directory to run the pages again).
bench-web: setup
	$(PY) benches/bench_web.py

## The channels between election parties (spec/95) on loopback against seed 002's figures: new connection, pooled
## round trips (256 B, 64 KiB, 16 MiB), bulk, one-way and pipelined rates, broadcast to 10 peers, idle and 500
## connections. The listening nodes run in a second process.
bench-nodes: setup
	$(VENV)/bin/votum node bench

## IVXV decryption proofs: votum-verify against the independent Go checker (IVXV_PEER=its built ProofChecker).
bench-ivxv: setup
	cargo build --release --locked -p votum-verify --bin votum-verify
	$(VENV)/bin/python benches/bench_ivxv.py

## One 2048-bit power with a 256-bit exponent: AVX-512 IFMA alone and two at a time, against GMP (ADR 0011)
bench-ifma:
	cargo test --release --locked -p votum-arith --lib ifma::timing -- --ignored --nocapture

## Other systems' records against their own verifiers, in the same run: a 10,000-ballot Belenios election on
## BELENIOS-2048 and a 500-ballot one on RFC-3526-2048 (made once with belenios-tool, kept in
## $VOTUM_BENCH_DIR, default /tmp/votum-bench), `belenios-tool election verify` against `votum-verify`;
## Verificatum: VMN 3.1.0's `vmnv` (built from source by scripts/build-vmnv.sh) against `votum-verify` on ONPE's stored sessions;
## IVXV's largest stored session against its Go checker is `make bench-ivxv`.
## ElectionGuard 2.x records (spec/65): votum-verify against egk-ec's RunVerifier, built from source with Maven.
bench-eg2-verify: setup
	cargo build --release --locked -p votum-verify --bin votum-verify
	$(VENV)/bin/python benches/bench_eg2_verify.py 5

## ElectionGuard 2.x written by votum: encryption per selection, the whole election, and votum's records
## verified by votum-verify and by egk-ec's own verifier (built from source with Maven, issue 44).
bench-eg21: setup
	cargo build --release --locked -p votum-verify --bin votum-verify -p votum-bench --bin bench-eg21
	$(VENV)/bin/python benches/bench_eg21.py 1000 100 3

## ElectionGuard 2.1 itself (spec/66) beside egk-ec's 2.0 form, the same election written both ways in one run.
bench-eg21-own: setup
	$(VENV)/bin/python benches/bench_eg21_own.py 200 3

## A 1,000-ballot ElectionGuard 2.1 record on P-256 verified by the votum-verify binary, on one thread and on every
## core (VS=path/to/another/votum-verify runs that one in turn on the same record, for a ratio).
bench-eg21-verify: setup
	cargo build --release --locked -p votum-verify --bin votum-verify
	$(VENV)/bin/python benches/bench_eg21_verify.py 1000 5 p256 $(if $(VS),--vs $(VS))

## One 100,000-ballot ElectionGuard 2.1 election in one process, its peak resident memory reported
## (benches: crates/votum-bench/src/bin/bench-eg21-run.rs).
bench-eg21-memory:
	cargo build --release --locked -p votum-bench --bin bench-eg21-run
	target/release/bench-eg21-run 100000

## A 100,000-ballot ElectionGuard 2.1 record written, then verified from disk by the votum-verify binary.
bench-eg21-large: setup
	cargo build --release --locked -p votum-verify --bin votum-verify
	$(VENV)/bin/python benches/bench_eg21_large.py 100000 1

## votum against microsoft/electionguard-rust (a checkout at EGRS_REPO, built in a scratch folder): the same
## ballots encrypted and verified by each on one thread (benches/egrs/main.rs, spec/65.10).
bench-egrs:
	RAYON_NUM_THREADS=1 taskset -c 0 "$$(scripts/build-egrs-bench.sh)" 10 5

## One election's record in each form votum writes (1.0 directory and archive, 2.x on P-256 and 4096 bits).
bench-record-size: setup
	$(VENV)/bin/python benches/bench_record_size.py 1000 3

bench-other-records: setup
	cargo build --release --locked -p votum-verify --bin votum-verify
	$(VENV)/bin/python benches/bench_other_records.py 10000 3 BELENIOS-2048
	$(VENV)/bin/python benches/bench_other_records.py 500 3 RFC-3526-2048
	$(VENV)/bin/python benches/bench_other_records.py 200 3 RFC-3526-2048 --mixnet
	$(VENV)/bin/python benches/bench_vmn.py 3

## A receiver's peak memory under a flood of 64 KiB one-way messages, read-ahead bounded in bytes or not (C.14).
bench-nodes-memory: setup
	$(VENV)/bin/python benches/bench_node_readahead.py

## votum's batch work on a Dask LocalCluster against the same work in one process (spec/98; BENCH_N, BENCH_RECORD,
## BENCH_WORKERS, BENCH_REPEAT, BENCH_ELECTION; see benches/bench_cluster.py).
bench-cluster: setup
	$(PY) benches/bench_cluster.py

## Two workers in their own network namespaces, delays added by a relay (root; docs/cluster.md)
bench-cluster-netns: setup
	$(PY) benches/bench_cluster_netns.py
