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
# Converters: the JSON converter (connect-json); Confluent's Avro converter is
# not on Maven Central.
set -euo pipefail
# shellcheck source=scripts/setup/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

here="$CDC2DELTA_ROOT/scripts/setup/connect"
plugins=(postgres mariadb)

cache_dir() {
	printf '%s/connect/%s\n' "$CDC2DELTA_CACHE" \
		"$(sha256_of "$here/pom.xml" "$here/postgres/pom.xml" "$here/mariadb/pom.xml" | cut -c1-16)"
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
		log "resolving the Kafka Connect worker and Debezium's connectors with maven into $dir"
		rm -rf "$dir"
		mkdir -p "$dir/plugins"
		copy_deps "$here/pom.xml" "$dir/libs"
		for p in "${plugins[@]}"; do
			copy_deps "$here/$p/pom.xml" "$dir/plugins/debezium-connector-$p"
			# The worker provides these; a plugin's own copies would shadow
			# the worker's classes in the plugin's class loader.
			rm -f "$dir/plugins/debezium-connector-$p"/{kafka-clients,connect-api,slf4j-api}-*.jar
		done
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
