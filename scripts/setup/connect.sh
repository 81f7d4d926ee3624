#!/usr/bin/env bash
# connect.sh runs a standalone Kafka Connect worker from Maven Central jars
# with Debezium's PostgreSQL and MariaDB connectors as plugins, writing to a
# broker the caller names. Its REST API listens on 127.0.0.1 only; tests
# register and remove connectors through it (internal/harness/fulltier).
#
#   connect.sh fetch                 resolve the worker and the plugins into
#                                    the cache; print the cache dir
#   connect.sh start DIR BOOTSTRAP   start a worker (offsets in DIR); print
#                                    its REST URL (http://127.0.0.1:PORT)
#   connect.sh stop DIR              stop the worker started in DIR
#
# Converters: the JSON converter (connect-json), and a plugin of our own
# (internal/harness/connectavro) that writes Avro in the Confluent wire format
# with AvroData, Apicurio's port of Confluent's Connect<->Avro mapping, and
# registers schemas through the Confluent REST API: Confluent's AvroConverter
# is not on Maven Central. Connectors choose it with
#   key.converter=io.github.cdc2delta.connectavro.ConfluentWireAvroConverter
#   key.converter.schema.registry.url=http://127.0.0.1:PORT (and the same
#   for value.converter).
set -euo pipefail
# shellcheck source=scripts/setup/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

here="$CDC2DELTA_ROOT/scripts/setup/connect"
avro="$CDC2DELTA_ROOT/internal/harness/connectavro"
plugins=(postgres mariadb)

cache_dir() {
	local sources
	mapfile -t sources < <(find "$avro/src" -type f | sort)
	printf '%s/connect/%s\n' "$CDC2DELTA_CACHE" \
		"$(sha256_of "$here/pom.xml" "$here/postgres/pom.xml" "$here/mariadb/pom.xml" \
			"$avro/pom.xml" "${sources[@]}" | cut -c1-16)"
}

# The worker provides these; a plugin's own copies would shadow the
# worker's classes in the plugin's class loader.
drop_worker_jars() { rm -f "$1"/{kafka-clients,connect-api,slf4j-api}-*.jar; }

# build_avro DIR puts the Avro converter plugin (its dependencies and its
# own jar, compiled against the worker's libs in DIR/../../libs) into DIR.
build_avro() {
	local dir=$1 work sources
	copy_deps "$avro/pom.xml" "$dir"
	drop_worker_jars "$dir"
	# connect-json comes with Apicurio's converters; the worker has its own.
	rm -f "$dir"/connect-json-*.jar
	work="$(mktemp -d)"
	mapfile -t sources < <(find "$avro/src" -name '*.java' | sort)
	javac -nowarn -Xlint:-options -d "$work/classes" -cp "$dir/*:$dir/../../libs/*" "${sources[@]}" >&2 ||
		{ rm -rf "$work"; die "compiling the Avro converter plugin failed"; }
	cp -r "$avro/src/META-INF" "$work/classes/"
	jar cf "$dir/cdc2delta-connectavro.jar" -C "$work/classes" .
	rm -rf "$work"
}

# copy_deps POM DIR resolves POM's runtime dependencies into DIR.
copy_deps() {
	mvn -B -q -Dstyle.color=never -f "$1" dependency:copy-dependencies \
		-DincludeScope=runtime -DoutputDirectory="$2" >&2
}

fetch() {
	local dir p
	dir="$(cache_dir)"
	if [[ ! -f $dir/.complete ]]; then
		need_cmd java openjdk-17-jre-headless "the Kafka Connect worker of the full tier"
		need_cmd mvn maven "fetching the Kafka Connect worker's jars from Maven Central"
		need_cmd javac openjdk-17-jdk-headless "compiling the full tier's Avro converter plugin"
		need_cmd jar openjdk-17-jdk-headless "packing the full tier's Avro converter plugin"
		log "resolving the Kafka Connect worker and Debezium's connectors with maven into $dir"
		rm -rf "$dir"
		mkdir -p "$dir/plugins"
		copy_deps "$here/pom.xml" "$dir/libs"
		for p in "${plugins[@]}"; do
			copy_deps "$here/$p/pom.xml" "$dir/plugins/debezium-connector-$p"
			drop_worker_jars "$dir/plugins/debezium-connector-$p"
		done
		build_avro "$dir/plugins/cdc2delta-avro-converter"
		touch "$dir/.complete"
	fi
	printf '%s\n' "$dir"
}

start() {
	local dir=$1 bootstrap=$2 cache port pid i
	cache="$(fetch)"
	mkdir -p "$dir"
	dir="$(cd "$dir" && pwd)"
	port="$(free_port)"
	cat >"$dir/worker.properties" <<PROPS
bootstrap.servers=$bootstrap
key.converter=org.apache.kafka.connect.json.JsonConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
offset.storage.file.filename=$dir/offsets.dat
offset.flush.interval.ms=1000
plugin.path=$cache/plugins
plugin.discovery=service_load
listeners=http://127.0.0.1:$port
PROPS
	# setsid: an interrupt of the test run reaches the worker only through
	# the caller's trap, which stops it cleanly.
	setsid java -Xms128m -Xmx${CONNECT_HEAP:-512m} -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
		-Djava.awt.headless=true \
		-Dlog4j2.configurationFile="$here/log4j2.properties" -Dconnect.logfile="$dir/connect.log" \
		-cp "$cache/libs/*" org.apache.kafka.connect.cli.ConnectStandalone "$dir/worker.properties" \
		>"$dir/stdout.log" 2>&1 </dev/null &
	pid=$!
	printf '%s\n' "$pid" >"$dir/connect.pid"
	if ! wait_port "$port" 120 "$pid"; then
		tail -50 "$dir/connect.log" "$dir/stdout.log" >&2 || true
		stop "$dir"
		die "the Kafka Connect worker did not start"
	fi
	# The REST port opens before the herder has started; the connector
	# plugin list answers only once it has.
	for ((i = 0; i < 240; i++)); do
		if curl -fsS "http://127.0.0.1:$port/connector-plugins" 2>/dev/null | grep -q PostgresConnector; then
			break
		fi
		kill -0 "$pid" 2>/dev/null || { tail -50 "$dir/connect.log" >&2; die "the Kafka Connect worker exited"; }
		sleep 0.25
	done
	if ((i == 240)); then
		tail -50 "$dir/connect.log" >&2 || true
		stop "$dir"
		die "the Kafka Connect worker did not list Debezium's connectors within 60s"
	fi
	printf 'http://127.0.0.1:%s\n' "$port" >"$dir/url"
	log "kafka connect ready on http://127.0.0.1:$port (pid $pid, logs in $dir)"
	cat "$dir/url"
}

stop() { stop_pid "kafka connect" "$1/connect.pid" 30; }

case "${1:-}" in
fetch) fetch ;;
start) start "${2:?usage: connect.sh start DIR BOOTSTRAP}" "${3:?usage: connect.sh start DIR BOOTSTRAP}" ;;
stop) stop "${2:?usage: connect.sh stop DIR}" ;;
*) die "usage: connect.sh fetch | start DIR BOOTSTRAP | stop DIR" ;;
esac
