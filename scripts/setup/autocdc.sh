#!/usr/bin/env bash
# autocdc.sh prepares Spark 4.3's AutoCDC for the SCD type 2 oracle
# (scripts/py/scd2_oracle.py) and prints two lines on stdout: the python of
# its venv ($CDC2DELTA_CACHE/venv-autocdc, scripts/py/requirements-autocdc.txt)
# and the path of Spark's catalyst test jar, whose in-memory catalog with
# row-level operations holds AutoCDC's tables (Delta does not run on Spark
# 4.3). The jar comes from Maven Central once, into $CDC2DELTA_CACHE/autocdc.
set -euo pipefail
# shellcheck source=scripts/setup/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Spark 4.3.0's test jars are not on Maven Central; 4.2.0's in-memory catalog
# loads in Spark 4.3.0 (the oracle's own tests run on it).
artifact="org.apache.spark:spark-catalyst_2.13:4.2.0:jar:tests"
dir="$CDC2DELTA_CACHE/autocdc"
jar="$dir/spark-catalyst_2.13-4.2.0-tests.jar"

need_cmd java openjdk-17-jre-headless "Spark of the SCD type 2 oracle"
python="$(bash "$(dirname "${BASH_SOURCE[0]}")/venv.sh" autocdc)"
if [[ ! -s $jar ]]; then
	need_cmd mvn maven "fetching Spark's catalyst test jar from Maven Central"
	log "fetching $artifact into $dir"
	mkdir -p "$dir"
	mvn -B -q -Dstyle.color=never \
		org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
		-Dartifact="$artifact" -DoutputDirectory="$dir.tmp" >&2
	mv "$dir.tmp/$(basename "$jar")" "$jar"
	rm -rf "$dir.tmp"
fi
printf '%s\n%s\n' "$python" "$jar"
