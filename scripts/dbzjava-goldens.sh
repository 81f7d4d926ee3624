#!/usr/bin/env bash
# dbzjava-goldens.sh regenerates codecs/testdata/debezium/java: SQL Server
# change events built by Debezium's own SQL Server connector classes and
# serialised by Kafka Connect's JsonConverter and by AvroData in the
# Confluent wire format (internal/harness/dbzjava). The TestJava* tests of
# codecs, internal/dbzgen and processor/merge read them.
#
#   scripts/dbzjava-goldens.sh [OUTDIR]
#
# OUTDIR defaults to codecs/testdata/debezium/java; every directory in it is
# replaced. scripts/test.sh's full tier writes to an empty directory and
# requires the committed files to be identical.
#
# Needs java, javac and mvn (Debian packages openjdk-17-jdk-headless, maven;
# installed when missing). Cost, measured 2026-12-06 on the 2-core test
# machine with a warm ~/.m2: 23-27 s (Maven's classpath resolution ~10 s,
# javac ~7 s, the run ~7 s); a cold ~/.m2 downloads ~60 MB first.
set -euo pipefail
# shellcheck source=scripts/setup/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/setup/lib.sh"

need_cmd java openjdk-17-jre-headless "the Debezium golden-file harness"
need_cmd javac openjdk-17-jdk-headless "compiling the Debezium golden-file harness"
need_cmd mvn maven "fetching Debezium's SQL Server connector from Maven Central"

here="$CDC2DELTA_ROOT/internal/harness/dbzjava"
out="${1:-$CDC2DELTA_ROOT/codecs/testdata/debezium/java}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

log "resolving the harness classpath with maven"
if ! mvn -B -q -Dstyle.color=never -f "$here/pom.xml" dependency:build-classpath \
	-Dmdep.outputFile="$work/cp.txt" >"$work/mvn.log" 2>&1; then
	cat "$work/mvn.log" >&2
	die "maven could not resolve the harness's dependencies"
fi
cp="$(cat "$work/cp.txt")"
log "compiling the harness"
mapfile -t sources < <(find "$here/src" -name '*.java' | sort)
javac -nowarn -Xlint:-options -d "$work/classes" -cp "$cp" "${sources[@]}" 2>&1 | grep -v '^Note:' >&2 || true
[[ -f $work/classes/io/github/cdc2delta/dbzjava/Goldens.class ]] || die "javac failed"
log "writing $out"
# Every variant directory is rewritten; README.md stays.
find "$out" -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} + 2>/dev/null || true
mkdir -p "$out"
# UTC: the driver's java.sql.Timestamp values are built and read in the
# JVM's zone; any zone gives the same wall clock, UTC keeps the logs plain.
if ! java -Duser.timezone=UTC -cp "$work/classes:$cp" \
	io.github.cdc2delta.dbzjava.Goldens "$out" >"$work/java.log" 2>&1; then
	grep -v '^SLF4J' "$work/java.log" >&2
	die "the harness failed"
fi
[[ -f $out/default/events.jsonl ]] || die "the harness wrote no events"
log "done: $(find "$out" -name events.jsonl | wc -l) variants"
