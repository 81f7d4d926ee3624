#!/usr/bin/env bash
# scripts/test.sh is the test command of cdc2delta: it runs the fast tier,
# installs and starts what the full tier needs (a Python venv with the Delta
# readers, a real Kafka broker, a moto S3 server, a Hive Metastore, ...), runs
# the full tier, and always stops the servers it started. It exits non-zero if
# any step fails.
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
#
# Every go test runs with -json through scripts/testsum, which prints what plain
# go test prints and keeps the JSON under $CDC2DELTA_CACHE/test-json; the run ends
# with every skipped test by name and "tests: N passed, M failed, K skipped".
#
# System-wide, and only when missing, as root on Debian (apt-get), it installs
# Java 17 and Maven (the Kafka broker), python3-venv (the Delta readers' venv),
# docker-compose and python3-yaml (the compose check); it says so first.
# Everything else goes to $CDC2DELTA_CACHE, ~/.m2 and Go's caches.
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
skipped=0
step_skip="" # a step's command sets it to why it did nothing (and returns 0)
run_dir=""
testsum=""  # scripts/testsum, built below
json_dir="" # where each go test step's -json output goes

# step NAME CMD... runs one timed step and records its result: ok, FAILED, or
# skipped when CMD set step_skip to why (a server this machine cannot have;
# the tests that need it skip, naming the reason).
step() {
	local name=$1 start rc
	shift
	section "$name"
	start=$SECONDS
	step_skip=""
	set +e
	"$@"
	rc=$?
	set -e
	if ((rc == 0)) && [[ -n $step_skip ]]; then
		steps+=("$name|$((SECONDS - start))|skipped: $step_skip")
		skipped=$((skipped + 1))
	elif ((rc == 0)); then
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
		printf '  %-38s %6ss  %s\n' "$name" "$secs" "$result" >&2
		[[ $result == ok ]] && ok=$((ok + 1))
	done
	if [[ -n $testsum && -x $testsum ]]; then
		log "go test -json output: $json_dir"
		"$testsum" summary "$json_dir"/*.json
	fi
	printf 'steps: %d passed, %d failed, %d skipped (%d min %d s)\n' "$ok" "$failed" "$skipped" $((SECONDS / 60)) $((SECONDS % 60))
}

cleanup() {
	local rc=$?
	set +e
	if [[ -n $run_dir ]]; then
		section "stopping servers"
		bash scripts/setup/moto.sh stop "$run_dir/moto"
		bash scripts/setup/azurite.sh stop "$run_dir/azurite"
		bash scripts/setup/connect.sh stop "$run_dir/connect"
		bash scripts/setup/postgres.sh stop "$run_dir/postgres"
		bash scripts/setup/mariadb.sh stop "$run_dir/mariadb"
		bash scripts/setup/fakegcs.sh stop "$run_dir/fakegcs"
		bash scripts/setup/unitycatalog.sh stop "$run_dir/unitycatalog"
		bash scripts/setup/hive.sh stop "$run_dir/hive"
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

# Say up front what the full tier would install system-wide (the setup steps
# install it when they get there, and say so again).
if [[ -z ${SKIP_FULL:-} ]]; then
	system=()
	command -v java >/dev/null 2>&1 || system+=("openjdk-17-jre-headless (the Kafka broker)")
	command -v mvn >/dev/null 2>&1 || system+=("maven (the broker's jars)")
	python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || system+=("python3-venv (the Delta readers' venv)")
	if ! command -v docker-compose >/dev/null 2>&1 && ! docker compose version >/dev/null 2>&1; then
		system+=("docker-compose and python3-yaml (the compose check, no Docker engine)")
	fi
	if ((${#system[@]} > 0)); then
		if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
			log "the full tier installs system-wide with apt-get (with their dependencies; SKIP_FULL=1 avoids it):"
		else
			log "the full tier needs these, which it installs only as root on Debian; install them by hand or set SKIP_FULL=1:"
		fi
		for s in "${system[@]}"; do log "  $s"; done
	fi
fi

# go test output goes through testsum (-json kept for the closing counts), one
# directory per checkout so that runs in two worktrees do not mix.
json_dir="$CDC2DELTA_CACHE/test-json/$(sha256_of "$CDC2DELTA_ROOT" | cut -c1-12)"
testsum="$json_dir/testsum"
mkdir -p "$json_dir"
rm -f "$json_dir"/*.json
go build -o "$testsum" ./scripts/testsum || die "building scripts/testsum failed"
testsum_flags=()
[[ " ${GO_TEST_FLAGS:-} " == *" -v "* ]] && testsum_flags=(-v)
# gotest NAME ARGS... runs go test -json ARGS, its JSON in $json_dir/NAME.json.
gotest() {
	local name=$1
	shift
	"$testsum" run "${testsum_flags[@]}" "$json_dir/$name.json" -- go test -json "$@"
}

# fast tier --------------------------------------------------------------------

# staticcheck's release for this Go (honnef.co/go/tools); `go run` fetches it
# from the module proxy once and caches the build.
STATICCHECK_VERSION=v0.8.2

# release_check builds the release for this machine's platform only (the four
# targets cost minutes) and checks what a user checks: the checksums, the stamped
# version, and that a version that is not semver is refused.
release_check() {
	local d rc=0 v=v0.0.0-check name
	d="$(mktemp -d)"
	name="cdc2delta_${v}_$(go env GOHOSTOS)_$(go env GOHOSTARCH)"
	{
		RELEASE_TARGETS="$(go env GOHOSTOS)/$(go env GOHOSTARCH)" bash scripts/release.sh "$v" "$d" >/dev/null &&
			(cd "$d" && sha256sum --quiet -c SHA256SUMS && tar -xzf "$name.tar.gz") &&
			"$d/$name/cdc2delta" version | grep -q "^cdc2delta $v" &&
			! bash scripts/release.sh 0.2 "$d" 2>/dev/null
	} || rc=$?
	rm -rf "$d"
	return "$rc"
}

if [[ -z ${SKIP_FAST:-} ]]; then
	step "go mod download" go mod download
	step "fast: go vet" go vet ./...
	# -timeout: the MERGE engine's package takes minutes, several times that
	# under -race on 2 cores; go test's default of 10 minutes is too close.
	# shellcheck disable=SC2086 # GO_TEST_FLAGS is a list of flags
	step "fast: go test" gotest fast -count=1 -timeout 30m ${GO_TEST_FLAGS:-} ./...
	# The pipeline and the MERGE engine are where goroutines meet.
	# shellcheck disable=SC2086
	step "fast: go test -race (processor, merge)" gotest race -race -count=1 -timeout 30m ${GO_TEST_FLAGS:-} ./processor/ ./processor/merge/
	# The compiled row decoders against goavro on generated inputs (ADR 0033);
	# the seeds alone run in every go test.
	step "fast: fuzz decoder vs goavro (60s)" go test -run '^$' -fuzz '^FuzzDecodeChange$' -fuzztime 60s ./codecs/
	# The JsonConverter scanner against encoding/json; minimizing a record
	# of several kB would otherwise take the whole 20s.
	step "fast: fuzz JSON decoder vs encoding/json (20s)" go test -run '^$' -fuzz '^FuzzDecodeJSONChange$' -fuzztime 20s -fuzzminimizetime 50x ./codecs/
	# The hand-written tombstone line decoder against encoding/json.
	step "fast: fuzz tombstone lines vs encoding/json (20s)" go test -run '^$' -fuzz '^FuzzTombstoneLine$' -fuzztime 20s ./processor/cdctable/
	step "fast: release build (this platform)" release_check
	# The README's `go install ...@latest`, from a module proxy serving HEAD.
	step "fast: go install from a module proxy" bash scripts/check-goinstall.sh
	step "fast: deploy (chart, image, alert rules)" bash scripts/check-deploy.sh
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
# After the readers' check: Maven may leave a pom without its jar in ~/.m2,
# which Spark's first Ivy resolution would then fail on.
step "setup: hive metastore jars" bash scripts/setup/hive.sh fetch
# Spark 4.3's AutoCDC, the SCD type 2 oracle (scripts/py/scd2_oracle.py):
# its own venv (Delta does not run on Spark 4.3) and Spark's catalyst test
# jar from Maven Central.
autocdc_python=""
autocdc_jar=""
setup_autocdc() {
	local out
	out="$(bash scripts/setup/autocdc.sh)" || return
	autocdc_python="$(sed -n 1p <<<"$out")"
	autocdc_jar="$(sed -n 2p <<<"$out")"
}
step "setup: spark autocdc (scd2 oracle)" setup_autocdc
# The benchmark harness's own checks: its generator against the product's
# tables, checksums, warm interleaved read timing, plots.
step "full: bench harness selftest" "$venv_python" scripts/py/bench_peers.py selftest
# The compose stack and the Dockerfile, checked without a Docker engine:
# `docker-compose config`, pinned images, a non-root user, the Dockerfile's
# go build line, and `cdc2delta validate` of the stack's config.
step "full: compose and Dockerfile" bash scripts/setup/compose.sh check

# SQL Server events from Debezium's own classes: the committed golden files
# must be what the harness writes today (java, javac, mvn; ~25 s warm).
check_dbz_goldens() {
	local d
	d="$(mktemp -d "${TMPDIR:-/tmp}/cdc2delta-goldens.XXXXXX")"
	bash scripts/dbzjava-goldens.sh "$d" &&
		diff -r -q -x README.md codecs/testdata/debezium/java "$d"
	local rc=$?
	rm -rf "$d"
	return $rc
}
step "full: debezium sql server goldens" check_dbz_goldens

# full tier: servers -----------------------------------------------------------

run_dir="$(mktemp -d "${TMPDIR:-/tmp}/cdc2delta-test.XXXXXX")"
kafka_brokers=""
s3_endpoint=""
start_kafka() { kafka_brokers="$(bash scripts/setup/kafka.sh start "$run_dir/kafka")"; }
start_moto() { s3_endpoint="$(bash scripts/setup/moto.sh start "$run_dir/moto")"; }
setup_prometheus() { prometheus_bin="$(bash scripts/setup/prometheus.sh fetch)"; }
step "start: kafka" start_kafka
step "start: moto s3" start_moto
start_azurite() { azure_endpoint="$(bash scripts/setup/azurite.sh start "$run_dir/azurite")"; }; step "start: azurite" start_azurite
step "setup: prometheus" setup_prometheus
# Debezium's sources: the databases and a Kafka Connect worker on the broker.
start_sources() {
	postgres_addr="$(bash scripts/setup/postgres.sh start "$run_dir/postgres")" &&
		mariadb_addr="$(bash scripts/setup/mariadb.sh start "$run_dir/mariadb")" &&
		connect_url="$(bash scripts/setup/connect.sh start "$run_dir/connect" "$kafka_brokers")"
}
step "start: postgres, mariadb, kafka connect" start_sources
start_fakegcs() { CDC2DELTA_GCS_ENDPOINT="$(bash scripts/setup/fakegcs.sh start "$run_dir/fakegcs")" && export CDC2DELTA_GCS_ENDPOINT; }
step "start: fake-gcs-server" start_fakegcs
# The OSS Unity Catalog server, built from its pinned source the first time
# (minutes; not on Maven Central). UC_SOURCE names a local copy of that source
# on a machine without GitHub access. With neither a cached build, UC_SOURCE
# nor GitHub, the script exits 3: the step is skipped, CDC2DELTA_UNITY_URL
# stays unset and CDC2DELTA_UNITY_UNAVAILABLE carries the reason, which the
# tests that need the server skip with. The requests our client sends are
# still checked against UC's published API (processor/catalog/unity).
start_unitycatalog() {
	local url rc=0
	url="$(bash scripts/setup/unitycatalog.sh start "$run_dir/unitycatalog")" || rc=$?
	if ((rc == 3)); then
		CDC2DELTA_UNITY_UNAVAILABLE="$(cat "$run_dir/unitycatalog/unavailable")"
		export CDC2DELTA_UNITY_UNAVAILABLE
		step_skip="no server: $CDC2DELTA_UNITY_UNAVAILABLE"
		log "running without the Unity Catalog server: $CDC2DELTA_UNITY_UNAVAILABLE"
		return 0
	fi
	((rc == 0)) || return "$rc"
	CDC2DELTA_UNITY_URL="$url"
	export CDC2DELTA_UNITY_URL
}
step "start: unity catalog" start_unitycatalog
# A Hive Metastore (3.1, embedded Derby) for the catalog registration tests.
start_hive() { CDC2DELTA_HIVE_URIS="$(bash scripts/setup/hive.sh start "$run_dir/hive")" && export CDC2DELTA_HIVE_URIS; }
step "start: hive metastore" start_hive
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
export CDC2DELTA_AZURE_ENDPOINT="${azure_endpoint:-}" # Azurite's Blob service, account devstoreaccount1
export CDC2DELTA_PROMETHEUS="${prometheus_bin:-}"
export CDC2DELTA_POSTGRES_ADDR="${postgres_addr:-}" CDC2DELTA_MARIADB_ADDR="${mariadb_addr:-}" CDC2DELTA_CONNECT_URL="${connect_url:-}"
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1
export AWS_DEFAULT_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true
export CDC2DELTA_PYTHON="$venv_python"
export CDC2DELTA_SCRIPTS="$CDC2DELTA_ROOT/scripts/py"
export CDC2DELTA_AUTOCDC_PYTHON="$autocdc_python" CDC2DELTA_AUTOCDC_JAR="$autocdc_jar"
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
	gotest full -tags integration -count=1 -timeout 60m "${run_flag[@]}" ${GO_TEST_FLAGS:-} "${full_pkgs[@]}"
