#!/usr/bin/env bash
# hive.sh runs Apache Hive's standalone metastore (3.1) (the Thrift service that
# Spark, Trino and Hive itself use as a table catalog) from Maven Central jars,
# on 127.0.0.1 only, backed by an embedded Derby database in DIR.
#
#   hive.sh fetch        resolve the jars into the cache; print the libs dir
#   hive.sh start DIR    start a metastore on a free port (HIVE_PORT to pick
#                        one); print its URI, thrift://127.0.0.1:PORT
#   hive.sh stop DIR     stop the metastore started in DIR
#
# The metastore creates its schema in Derby on first start
# (datanucleus.schema.autoCreateAll: the schema scripts ship only in Hive's
# binary tarball, not in its Maven artifacts). An initialised empty database
# is kept in the cache and copied into DIR, so only the first start on a
# machine pays for creating the schema. The jars live in
# $CDC2DELTA_CACHE/hive/<hash of pom.xml>/libs and Maven's downloads in ~/.m2.
set -euo pipefail
# shellcheck source=scripts/setup/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

here="$CDC2DELTA_ROOT/scripts/setup/hive"

cache_dir() {
	printf '%s/hive/%s\n' "$CDC2DELTA_CACHE" "$(sha256_of "$here/pom.xml" "$here/log4j2.properties" | cut -c1-16)"
}

fetch() {
	local libs stamp
	libs="$(cache_dir)/libs"
	stamp="$libs/.complete"
	if [[ ! -f $stamp ]]; then
		need_cmd java openjdk-17-jre-headless "the Hive Metastore of the full tier"
		need_cmd mvn maven "fetching the Hive Metastore's jars from Maven Central"
		log "resolving the Hive Metastore's jars with maven into $libs"
		rm -rf "$libs"
		mkdir -p "$libs"
		mvn -B -q -Dstyle.color=never -f "$here/pom.xml" dependency:copy-dependencies \
			-DincludeScope=runtime -DoutputDirectory="$libs" >&2
		touch "$stamp"
	fi
	printf '%s\n' "$libs"
}

# site_xml DIR PORT writes the metastore's configuration.
site_xml() {
	local dir=$1 port=$2
	mkdir -p "$dir/conf"
	cat >"$dir/conf/metastore-site.xml" <<XML
<?xml version="1.0"?>
<configuration>
  <property><name>javax.jdo.option.ConnectionURL</name><value>jdbc:derby:;databaseName=$dir/metastore_db;create=true</value></property>
  <property><name>javax.jdo.option.ConnectionDriverName</name><value>org.apache.derby.jdbc.EmbeddedDriver</value></property>
  <property><name>datanucleus.schema.autoCreateAll</name><value>true</value></property>
  <property><name>metastore.schema.verification</name><value>false</value></property>
  <property><name>metastore.try.direct.sql</name><value>false</value></property>
  <property><name>metastore.thrift.bind.host</name><value>127.0.0.1</value></property>
  <property><name>metastore.thrift.port</name><value>$port</value></property>
  <property><name>metastore.warehouse.dir</name><value>file://$dir/warehouse</value></property>
  <property><name>metastore.warehouse.external.dir</name><value>file://$dir/warehouse-external</value></property>
  <property><name>metastore.event.db.notification.api.auth</name><value>false</value></property>
  <!-- The defaults name classes of hive-exec, which the standalone metastore
       does not ship. -->
  <property><name>metastore.expression.proxy</name><value>org.apache.hadoop.hive.metastore.DefaultPartitionExpressionProxy</value></property>
  <property><name>metastore.task.threads.always</name><value>org.apache.hadoop.hive.metastore.events.EventCleanerTask</value></property>
</configuration>
XML
}

# launch DIR LIBS PORT starts the metastore configured in DIR and waits until
# it accepts connections on PORT.
launch() {
	local dir=$1 libs=$2 port=$3
	start_bg hive "$dir" "$port" 180 java -Xms128m -Xmx"${HIVE_HEAP:-512m}" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
		-Djava.awt.headless=true \
		-Dhive.log.file="$dir/metastore.log" \
		-Dlog4j2.configurationFile="file:$here/log4j2.properties" \
		-Dderby.system.home="$dir" -Dderby.stream.error.file="$dir/derby.log" \
		-cp "$dir/conf:$libs/*" org.apache.hadoop.hive.metastore.HiveMetaStore
}

start() {
	local dir=$1 libs cache port
	libs="$(fetch)"
	cache="$(cache_dir)"
	mkdir -p "$dir"
	dir="$(cd "$dir" && pwd)"
	port="${HIVE_PORT:-$(free_port)}"
	site_xml "$dir" "$port"
	rm -rf "$dir/metastore_db"
	if [[ -f $cache/metastore_db.tar ]]; then
		tar -xf "$cache/metastore_db.tar" -C "$dir"
		launch "$dir" "$libs" "$port"
	else
		launch "$dir" "$libs" "$port"
		# The schema is in place once the port is open. Copying a live Derby
		# database is unsafe: keep the template of a stopped one, then start
		# again.
		stop "$dir"
		if tar -cf "$cache/metastore_db.tar.$$" -C "$dir" metastore_db; then
			mv "$cache/metastore_db.tar.$$" "$cache/metastore_db.tar"
		else
			log "could not keep an initialised metastore database (the next start creates it again)"
		fi
		launch "$dir" "$libs" "$port"
	fi
	log "hive metastore ready on thrift://127.0.0.1:$port (pid $(cat "$dir/hive.pid"), logs in $dir)"
	printf 'thrift://127.0.0.1:%s\n' "$port" >"$dir/uris"
	cat "$dir/uris"
}

stop() { stop_pid "hive metastore" "$1/hive.pid" 20; }

case "${1:-}" in
fetch) fetch ;;
start) start "${2:?usage: hive.sh start DIR}" ;;
stop) stop "${2:?usage: hive.sh stop DIR}" ;;
*) die "usage: hive.sh fetch | start DIR | stop DIR" ;;
esac
