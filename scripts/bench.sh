#!/usr/bin/env bash
# bench.sh runs the benchmark of issue #6: cdc2delta against delta-rs and
# Spark on the same change batches, on this machine.
#
#   scripts/bench.sh small|full|tiny [OUTDIR] [cdc2bench flags...]
#   scripts/bench.sh stores small|full|tiny [OUTDIR]
#   scripts/bench.sh estate [OUTDIR] [cdc2bench estate flags...]
#
# The second form is the stores row set: the end-to-end workload of the
# preset on local disk and on each object store's emulator (moto, Azurite,
# fake-gcs-server, in memory on loopback), one after the other, reported as
# events/s and the ratio to local disk (`cdc2bench stores`); it starts the
# broker and the emulators (CDC2DELTA_AZURE_ENDPOINT, CDC2DELTA_GCS_ENDPOINT
# set: those are used) and stops them after.
#
# The third form is the estate scenario (`cdc2bench estate`): 500 tables
# (5 of 100M rows, 50 of 1M, 445 of 10k) loaded in bulk, 20,000 updates/s
# spread over them by a Zipf law for 30 minutes, change logs, control table
# and maintenance on, judged against the estate's goals; OUTDIR receives
# results.json and ESTATE.md. Loading the full estate takes hours and
# needs the disk for 500M rows: `-scale 100 -duration 10m` runs the same
# estate with rows divided by 100. It starts the broker and the venv as
# below and builds cmd/cdc2delta.
#
# It sets up the Python venv (scripts/setup/venv.sh), starts a Kafka broker
# and a moto S3 server of its own (stopped on exit), builds cmd/cdc2bench and
# runs it; OUTDIR (default bench-<preset>-<UTC time>) receives results.json,
# BENCHMARKS.md and plots/. Extra flags go to cdc2bench, e.g.
# `-workloads 2b,6 -systems cdc2delta-dv,deltars`. Knobs: SKIP_KAFKA=1 (no
# cdc2delta-e2e), SKIP_S3=1 (no workload 6-s3); servers and a venv that are
# already running are used instead of starting new ones when
# CDC2DELTA_PYTHON, CDC2DELTA_S3_ENDPOINT or CDC2DELTA_KAFKA_BROKERS are set
# (as `source` of the full tier's environment leaves them).
set -euo pipefail
# shellcheck source=scripts/setup/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/setup/lib.sh"
cd "$CDC2DELTA_ROOT"

if [[ ${1:-} == estate ]]; then
	shift
	out=${1:-bench-estate-$(date -u +%Y%m%dT%H%M%SZ)}
	[[ $# -gt 0 ]] && shift
	mkdir -p "$out"
	out="$(cd "$out" && pwd)"
	run_dir="$(mktemp -d "${TMPDIR:-/tmp}/cdc2bench.XXXXXX")"
	# shellcheck disable=SC2317 # called by the trap
	cleanup_estate() {
		local rc=$?
		bash scripts/setup/kafka.sh stop "$run_dir/kafka" || true
		rm -rf "$run_dir"
		exit "$rc"
	}
	trap cleanup_estate EXIT
	trap 'log "interrupted"; exit 130' INT
	trap 'log "terminated"; exit 143' TERM
	python=${CDC2DELTA_PYTHON:-}
	if [[ -z $python ]]; then
		section "setup: python venv"
		python="$(bash scripts/setup/venv.sh)"
	fi
	brokers=${CDC2DELTA_KAFKA_BROKERS:-}
	if [[ -z $brokers ]]; then
		section "start: kafka"
		bash scripts/setup/kafka.sh fetch >&2
		brokers="$(bash scripts/setup/kafka.sh start "$run_dir/kafka")"
	fi
	section "build: cdc2delta, cdc2bench"
	go build -o "$run_dir/cdc2delta" ./cmd/cdc2delta
	go build -o "$run_dir/cdc2bench" ./cmd/cdc2bench
	section "run: cdc2bench estate $*"
	rc=0
	"$run_dir/cdc2bench" estate -out "$out/estate" -bin "$run_dir/cdc2delta" -brokers "$brokers" \
		-python "$python" -peers "$CDC2DELTA_ROOT/scripts/py/bench_peers.py" "$@" || rc=$?
	if [[ $rc -eq 0 ]]; then
		log "done: $out/estate/ESTATE.md"
	else
		log "FAILED (exit $rc): see $out/estate/ESTATE.md and the log above"
	fi
	exit "$rc"
fi

stores=
if [[ ${1:-} == stores ]]; then
	stores=1
	shift
fi
preset=${1:-}
case $preset in
small | full | tiny) ;;
*)
	echo "usage: scripts/bench.sh small|full|tiny [OUTDIR] [cdc2bench flags...]" >&2
	echo "       scripts/bench.sh stores small|full|tiny [OUTDIR]" >&2
	echo "       scripts/bench.sh estate [OUTDIR] [cdc2bench estate flags...]" >&2
	exit 2
	;;
esac
shift
out=${1:-bench-${stores:+stores-}$preset-$(date -u +%Y%m%dT%H%M%SZ)}
[[ $# -gt 0 ]] && shift
mkdir -p "$out"
out="$(cd "$out" && pwd)"

run_dir="$(mktemp -d "${TMPDIR:-/tmp}/cdc2bench.XXXXXX")"
cleanup() {
	local rc=$?
	bash scripts/setup/moto.sh stop "$run_dir/moto" || true
	bash scripts/setup/azurite.sh stop "$run_dir/azurite" || true
	bash scripts/setup/fakegcs.sh stop "$run_dir/fakegcs" || true
	bash scripts/setup/kafka.sh stop "$run_dir/kafka" || true
	rm -rf "$run_dir"
	exit "$rc"
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT
trap 'log "terminated"; exit 143' TERM

if [[ -n $stores ]]; then
	brokers=${CDC2DELTA_KAFKA_BROKERS:-}
	if [[ -z $brokers ]]; then
		section "start: kafka"
		bash scripts/setup/kafka.sh fetch >&2
		brokers="$(bash scripts/setup/kafka.sh start "$run_dir/kafka")"
	fi
	s3=${CDC2DELTA_S3_ENDPOINT:-}
	if [[ -z $s3 ]]; then
		section "start: moto s3"
		s3="$(bash scripts/setup/moto.sh start "$run_dir/moto")"
	fi
	azure=${CDC2DELTA_AZURE_ENDPOINT:-}
	if [[ -z $azure ]]; then
		section "start: azurite"
		azure="$(bash scripts/setup/azurite.sh start "$run_dir/azurite")"
	fi
	gcs=${CDC2DELTA_GCS_ENDPOINT:-}
	if [[ -z $gcs ]]; then
		section "start: fake-gcs-server"
		gcs="$(bash scripts/setup/fakegcs.sh start "$run_dir/fakegcs")"
	fi
	# moto takes any key; Azurite's development account and key are published
	# in its documentation, not a secret.
	export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true
	export AZURE_STORAGE_ACCOUNT_NAME=devstoreaccount1
	export AZURE_STORAGE_ACCOUNT_KEY='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
	section "build: cdc2bench"
	go build -o "$run_dir/cdc2bench" ./cmd/cdc2bench
	section "run: cdc2bench stores -preset $preset"
	rc=0
	"$run_dir/cdc2bench" stores -preset "$preset" -out "$out" -brokers "$brokers" \
		-s3-endpoint "$s3" -azure-endpoint "$azure" -gcs-endpoint "$gcs" || rc=$?
	if [[ $rc -eq 0 ]]; then
		log "done: $out/stores.md"
	else
		log "FAILED (exit $rc): see $out/stores.md and the log above"
	fi
	exit "$rc"
fi

python=${CDC2DELTA_PYTHON:-}
if [[ -z $python ]]; then
	section "setup: python venv"
	python="$(bash scripts/setup/venv.sh)"
fi
args=(-preset "$preset" -out "$out" -python "$python" -peers "$CDC2DELTA_ROOT/scripts/py/bench_peers.py")

if [[ -z ${SKIP_S3:-} ]]; then
	s3=${CDC2DELTA_S3_ENDPOINT:-}
	if [[ -z $s3 ]]; then
		section "start: moto s3"
		s3="$(bash scripts/setup/moto.sh start "$run_dir/moto")"
	fi
	export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true
	args+=(-s3-endpoint "$s3")
else
	args+=(-s3-endpoint "")
fi
if [[ -z ${SKIP_KAFKA:-} ]]; then
	brokers=${CDC2DELTA_KAFKA_BROKERS:-}
	if [[ -z $brokers ]]; then
		section "start: kafka"
		bash scripts/setup/kafka.sh fetch >&2
		brokers="$(bash scripts/setup/kafka.sh start "$run_dir/kafka")"
	fi
	args+=(-brokers "$brokers")
else
	args+=(-brokers "")
fi

section "build: cdc2bench"
go build -o "$run_dir/cdc2bench" ./cmd/cdc2bench

section "run: cdc2bench ${args[*]} $*"
# Not exec: the trap must stop the servers afterwards.
rc=0
"$run_dir/cdc2bench" "${args[@]}" "$@" || rc=$?
if [[ $rc -eq 0 ]]; then
	log "done: $out/BENCHMARKS.md"
else
	log "FAILED (exit $rc): see $out/BENCHMARKS.md and the log above"
fi
exit "$rc"
