#!/usr/bin/env bash
# scripts/test.sh is the test command of cdc2delta: it runs the fast tier,
# installs and starts what the full tier needs (a Python venv with the Delta
# readers, a real Kafka broker, a moto S3 server), runs the full tier, and
# always stops the servers it started. It exits non-zero if any step fails.
#
# Knobs (environment variables), all off by default:
#   SKIP_FAST=1          skip the fast tier (go vet + go test ./...)
#   SKIP_FULL=1          skip the full tier and its setup
#   ONLY_FULL_RUN=REGEX  pass -run REGEX to the full tier
#   FULL_PKGS="./x/..."  packages of the full tier (default: every package
#                        with an integration-tagged file)
#   GO_TEST_FLAGS="-v"   extra flags for both tiers' go test
#   FAIL_FAST=1          stop at the first failed step
#   KEEP_SERVERS_LOGS=1  keep the servers' directory (logs) after the run
#   CDC2DELTA_CACHE=DIR  cache directory (default ~/.cache/cdc2delta)
# See docs/TESTING.md.
set -euo pipefail
# shellcheck source=scripts/setup/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/setup/lib.sh"
cd "$CDC2DELTA_ROOT"

# A fresh CI shell may lack Go's directory on PATH.
if ! command -v go >/dev/null 2>&1 && [[ -x /usr/local/go/bin/go ]]; then
	PATH="/usr/local/go/bin:$PATH"
fi

steps=()    # "name|seconds|result" per step, for the summary
failed=0
run_dir=""

# step NAME CMD... runs one timed step and records its result.
step() {
	local name=$1 start rc
	shift
	section "$name"
	start=$SECONDS
	set +e
	"$@"
	rc=$?
	set -e
	if ((rc == 0)); then
		steps+=("$name|$((SECONDS - start))|ok")
	else
		steps+=("$name|$((SECONDS - start))|FAILED (exit $rc)")
		failed=$((failed + 1))
		log "step '$name' failed with exit $rc"
		if [[ -n ${FAIL_FAST:-} ]]; then exit 1; fi
	fi
	return 0
}

summary() {
	local s name secs result ok=0
	section "summary"
	for s in "${steps[@]}"; do
		IFS='|' read -r name secs result <<<"$s"
		printf '  %-32s %6ss  %s\n' "$name" "$secs" "$result" >&2
		[[ $result == ok ]] && ok=$((ok + 1))
	done
	printf 'steps: %d passed, %d failed\n' "$ok" "$failed"
}

cleanup() {
	local rc=$?
	set +e
	if [[ -n $run_dir ]]; then
		section "stopping servers"
		bash scripts/setup/moto.sh stop "$run_dir/moto"
		bash scripts/setup/kafka.sh stop "$run_dir/kafka"
		if [[ -n ${KEEP_SERVERS_LOGS:-} ]]; then
			log "server logs kept in $run_dir"
		else
			rm -rf "$run_dir"
		fi
	fi
	summary
	if ((rc == 0 && failed > 0)); then rc=1; fi
	exit "$rc"
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT
trap 'log "terminated"; exit 143' TERM

section "environment"
log "repo $CDC2DELTA_ROOT, cache $CDC2DELTA_CACHE, CI=${CI:-}"
log "$(go version)"

# fast tier --------------------------------------------------------------------

# staticcheck's release for this Go (honnef.co/go/tools); `go run` fetches it
# from the module proxy once and caches the build.
STATICCHECK_VERSION=v0.8.2

if [[ -z ${SKIP_FAST:-} ]]; then
	step "go mod download" go mod download
	step "fast: go vet" go vet ./...
	# shellcheck disable=SC2086 # GO_TEST_FLAGS is a list of flags
	step "fast: go test" go test -count=1 ${GO_TEST_FLAGS:-} ./...
	# The pipeline and the MERGE engine are where goroutines meet.
	# shellcheck disable=SC2086
	step "fast: go test -race (processor, merge)" go test -race -count=1 ${GO_TEST_FLAGS:-} ./processor/ ./processor/merge/
	step "fast: staticcheck" go run "honnef.co/go/tools/cmd/staticcheck@${STATICCHECK_VERSION}" -tags integration ./...
fi

[[ -n ${SKIP_FULL:-} ]] && exit 0

# full tier: setup -------------------------------------------------------------

venv_python=""
setup_venv() { venv_python="$(bash scripts/setup/venv.sh)"; }
setup_engines() { "$venv_python" scripts/py/deltaread.py --check; }

step "setup: python venv" setup_venv
[[ -n $venv_python ]] || exit 1
step "setup: kafka jars" bash scripts/setup/kafka.sh fetch
# Starts each Delta reader once; the first time, Spark resolves delta-spark
# from Maven Central into the cache.
step "setup: delta readers" setup_engines
# The compose stack and the Dockerfile, checked without a Docker engine:
# `docker-compose config`, pinned images, a non-root user, the Dockerfile's
# go build line, and `cdc2delta validate` of the stack's config.
step "full: compose and Dockerfile" bash scripts/setup/compose.sh check

# full tier: servers -----------------------------------------------------------

run_dir="$(mktemp -d "${TMPDIR:-/tmp}/cdc2delta-test.XXXXXX")"
kafka_brokers=""
s3_endpoint=""
start_kafka() { kafka_brokers="$(bash scripts/setup/kafka.sh start "$run_dir/kafka")"; }
start_moto() { s3_endpoint="$(bash scripts/setup/moto.sh start "$run_dir/moto")"; }
step "start: kafka" start_kafka
step "start: moto s3" start_moto
if [[ -z $kafka_brokers || -z $s3_endpoint ]]; then
	log "servers did not start; skipping the full tier"
	exit 1
fi

export CDC2DELTA_KAFKA_BROKERS="$kafka_brokers"
export CDC2DELTA_KAFKA_TOOL="$CDC2DELTA_ROOT/scripts/setup/kafka-tool.sh"
# The broker's SASL and SASL_SSL listeners, user and CA (kafka.sh writes them).
set -a
# shellcheck source=/dev/null
source "$run_dir/kafka/secure.env"
set +a
export CDC2DELTA_S3_ENDPOINT="$s3_endpoint"
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1
export AWS_DEFAULT_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true
export CDC2DELTA_PYTHON="$venv_python"
export CDC2DELTA_SCRIPTS="$CDC2DELTA_ROOT/scripts/py"
log "CDC2DELTA_KAFKA_BROKERS=$CDC2DELTA_KAFKA_BROKERS CDC2DELTA_S3_ENDPOINT=$CDC2DELTA_S3_ENDPOINT"

# full tier: tests -------------------------------------------------------------

if [[ -n ${FULL_PKGS:-} ]]; then
	read -r -a full_pkgs <<<"$FULL_PKGS"
else
	# Only packages with integration-tagged files: the fast tier already ran
	# the others, and their tests do not change under the tag.
	mapfile -t full_pkgs < <(
		grep -rlE --include='*_test.go' '^//go:build .*\bintegration\b' . |
			xargs -r -n1 dirname | sort -u | sed 's|^\./||; s|^|./|'
	)
fi
if ((${#full_pkgs[@]} == 0)); then
	log "no integration-tagged tests found"
	exit 1
fi
log "full tier packages: ${full_pkgs[*]}"
run_flag=()
[[ -n ${ONLY_FULL_RUN:-} ]] && run_flag=(-run "$ONLY_FULL_RUN")
# shellcheck disable=SC2086 # GO_TEST_FLAGS is a list of flags
step "full: go test -tags integration" \
	go test -tags integration -count=1 -timeout 60m "${run_flag[@]}" ${GO_TEST_FLAGS:-} "${full_pkgs[@]}"
