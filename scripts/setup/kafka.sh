#!/usr/bin/env bash
# kafka.sh runs a single-node Apache Kafka (KRaft, combined broker and
# controller) from Maven Central jars, bound to 127.0.0.1 only.
#
#   kafka.sh fetch        resolve the jars into the cache; print the libs dir
#   kafka.sh start DIR    format DIR and start a broker on a free port; print
#                         its bootstrap address (127.0.0.1:PORT). It also
#                         listens with SASL (PLAIN, SCRAM-SHA-256/512) and with
#                         SASL over TLS; DIR/secure.env names those listeners,
#                         the user and the CA file (see secure_listeners)
#   kafka.sh stop DIR     stop the broker started in DIR
#
# The jars live in $CDC2DELTA_CACHE/kafka/<hash of pom.xml>/libs and Maven's
# downloads in ~/.m2, so only the first run on a machine downloads anything.
set -euo pipefail
# shellcheck source=scripts/setup/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

here="$CDC2DELTA_ROOT/scripts/setup/kafka"

libs_dir() {
	printf '%s/kafka/%s/libs\n' "$CDC2DELTA_CACHE" "$(sha256_of "$here/pom.xml" | cut -c1-16)"
}

fetch() {
	local libs stamp
	libs="$(libs_dir)"
	stamp="$libs/.complete"
	if [[ ! -f $stamp ]]; then
		need_cmd java openjdk-17-jre-headless "the Kafka broker of the full tier"
		need_cmd mvn maven "fetching the Kafka broker's jars from Maven Central"
		log "resolving kafka jars with maven into $libs"
		rm -rf "$libs"
		mkdir -p "$libs"
		mvn -B -q -Dstyle.color=never -f "$here/pom.xml" dependency:copy-dependencies \
			-DincludeScope=runtime -DoutputDirectory="$libs" >&2
		touch "$stamp"
	fi
	printf '%s\n' "$libs"
}

# java_cmd runs a Kafka main class with the cached jars.
java_cmd() {
	local libs
	libs="$(fetch)"
	# Tools are short-lived: a small heap and the C1 compiler start fastest.
	exec java -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
		-Djava.awt.headless=true \
		-Dlog4j2.configurationFile="$here/log4j2.yaml" \
		-cp "$libs/*" "$@"
}

# cluster_id prints a random Kafka cluster id (what `kafka-storage random-uuid`
# prints) without paying for a JVM start.
cluster_id() {
	python3 - <<'PY'
import base64, uuid
while True:
    s = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
    if not s.startswith("-"):  # Kafka avoids ids that look like CLI flags
        print(s)
        break
PY
}

# secure_listeners DIR: a self-signed certificate for 127.0.0.1 (PKCS12 keystore
# for the broker, PEM for clients) and DIR/secure.env for the tests.
secure_listeners() {
	local dir=$1 sport=$2 tport=$3
	rm -f "$dir/broker.p12" "$dir/ca.pem"
	keytool -genkeypair -alias broker -keyalg RSA -keysize 2048 -validity 30 \
		-dname CN=127.0.0.1 -ext SAN=ip:127.0.0.1 -keystore "$dir/broker.p12" \
		-storetype PKCS12 -storepass test-store -keypass test-store >/dev/null 2>&1 ||
		die "keytool could not make the broker certificate"
	keytool -exportcert -rfc -alias broker -keystore "$dir/broker.p12" \
		-storepass test-store -file "$dir/ca.pem" >/dev/null 2>&1 ||
		die "keytool could not export the broker certificate"
	cat >"$dir/secure.env" <<ENV
CDC2DELTA_KAFKA_SASL_BROKERS=127.0.0.1:$sport
CDC2DELTA_KAFKA_SASL_SSL_BROKERS=127.0.0.1:$tport
CDC2DELTA_KAFKA_SASL_USER=cdc
CDC2DELTA_KAFKA_SASL_PASSWORD=cdc-secret
CDC2DELTA_KAFKA_CA_FILE=$dir/ca.pem
ENV
}

start() {
	local dir=$1 libs port cport sport tport id pid
	libs="$(fetch)"
	mkdir -p "$dir"
	dir="$(cd "$dir" && pwd)"
	port="$(free_port)"
	cport="$(free_port)"
	while [[ $cport == "$port" ]]; do cport="$(free_port)"; done
	sport="$(free_port)"
	while [[ $sport == "$port" || $sport == "$cport" ]]; do sport="$(free_port)"; done
	tport="$(free_port)"
	while [[ $tport == "$port" || $tport == "$cport" || $tport == "$sport" ]]; do tport="$(free_port)"; done
	secure_listeners "$dir" "$sport" "$tport"
	local scram='org.apache.kafka.common.security.scram.ScramLoginModule required;'
	local plain='org.apache.kafka.common.security.plain.PlainLoginModule required user_cdc="cdc-secret";'
	cat >"$dir/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport,SASL_PLAINTEXT://127.0.0.1:$sport,SASL_SSL://127.0.0.1:$tport
advertised.listeners=PLAINTEXT://127.0.0.1:$port,SASL_PLAINTEXT://127.0.0.1:$sport,SASL_SSL://127.0.0.1:$tport
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL
inter.broker.listener.name=PLAINTEXT
sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512
listener.name.sasl_plaintext.plain.sasl.jaas.config=$plain
listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config=$scram
listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=$scram
listener.name.sasl_ssl.plain.sasl.jaas.config=$plain
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=$scram
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=$scram
ssl.keystore.type=PKCS12
ssl.keystore.location=$dir/broker.p12
ssl.keystore.password=test-store
ssl.key.password=test-store
log.dirs=$dir/data
num.partitions=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=true
log.segment.bytes=16777216
PROPS
	id="$(cluster_id)"
	java -cp "$libs/*" -Dlog4j2.configurationFile="$here/log4j2.yaml" \
		kafka.tools.StorageTool format --standalone -t "$id" \
		--add-scram 'SCRAM-SHA-256=[name=cdc,password=cdc-secret]' \
		--add-scram 'SCRAM-SHA-512=[name=cdc,password=cdc-secret]' \
		-c "$dir/server.properties" >"$dir/format.out" 2>&1 ||
		{ cat "$dir/format.out" >&2; die "formatting kafka storage failed"; }
	# setsid puts the broker in its own process group so that an interrupt of
	# the test run reaches it only through our trap, which stops it cleanly.
	setsid java -Xms256m -Xmx${KAFKA_HEAP:-768m} -XX:+UseG1GC \
		-Djava.awt.headless=true \
		-Dlog4j2.configurationFile="$here/log4j2.yaml" \
		-Dkafka.logfile="$dir/kafka.log" -Dkafka.appender=FILE -Dkafka.loglevel=INFO \
		-cp "$libs/*" kafka.Kafka "$dir/server.properties" \
		>"$dir/stdout.log" 2>&1 </dev/null &
	pid=$!
	printf '%s\n' "$pid" >"$dir/kafka.pid"
	printf '127.0.0.1:%s\n' "$port" >"$dir/bootstrap"
	if ! wait_port "$port" 120 "$pid"; then
		tail -50 "$dir/kafka.log" "$dir/stdout.log" >&2 || true
		stop "$dir"
		die "kafka did not start"
	fi
	# The port opens before the broker has caught up with the metadata log;
	# an admin round trip proves it serves requests.
	if ! java -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -cp "$libs/*" \
		-Dlog4j2.configurationFile="$here/log4j2.yaml" \
		org.apache.kafka.tools.TopicCommand --bootstrap-server "127.0.0.1:$port" \
		--list >/dev/null 2>"$dir/ready.err"; then
		cat "$dir/ready.err" >&2
		stop "$dir"
		die "kafka is not answering admin requests"
	fi
	log "kafka ready on 127.0.0.1:$port (pid $pid, logs in $dir)"
	cat "$dir/bootstrap"
}

stop() { stop_pid "kafka" "$1/kafka.pid" 30; }

case "${1:-}" in
fetch) fetch ;;
start) start "${2:?usage: kafka.sh start DIR}" ;;
stop) stop "${2:?usage: kafka.sh stop DIR}" ;;
java) shift; java_cmd "$@" ;;
*) die "usage: kafka.sh fetch | start DIR | stop DIR | java MAINCLASS ARGS..." ;;
esac
