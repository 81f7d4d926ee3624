#!/usr/bin/env bash
# unitycatalog.sh builds the OSS Unity Catalog server from its pinned source
# (it is not published on Maven Central) and runs it on 127.0.0.1 for the
# catalog tests. The first build takes minutes (sbt resolves and compiles);
# later runs reuse the build under CDC2DELTA_CACHE. UC_SOURCE, when set, is a
# directory holding that commit's source tree, used instead of fetching it
# from GitHub (machines without GitHub access).
#
# When the server can be neither reused nor built because its source cannot
# be had (no build in the cache, UC_SOURCE unset, GitHub unreachable), build
# and start exit with status 3 (EXIT_UNAVAILABLE) and start writes why to
# DIR/unavailable; scripts/test.sh then runs without the server and the tests
# that need it skip with that reason. Any other failure (sbt, the server not
# starting) is an error.
#
#   unitycatalog.sh build        build (or reuse) the server; print its directory
#   unitycatalog.sh start DIR    start on a free port; print the URL
#   unitycatalog.sh stop DIR     stop the server started in DIR
set -euo pipefail
# shellcheck source=scripts/setup/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

UC_REPO=https://github.com/unitycatalog/unitycatalog.git
UC_COMMIT=c9ed6b142f851b4d32c56eed9e85e917f27d7b7a
EXIT_UNAVAILABLE=3
unavailable_file="" # start DIR sets it to DIR/unavailable

# unavailable REASON ends the script with EXIT_UNAVAILABLE, saying why.
unavailable() {
	log "Unity Catalog server unavailable: $*"
	[[ -z $unavailable_file ]] || printf '%s\n' "$*" >"$unavailable_file"
	exit "$EXIT_UNAVAILABLE"
}

build() {
	local dir="$CDC2DELTA_CACHE/unitycatalog-$UC_COMMIT" cp
	if [[ -f $dir/server/target/classpath && -f $dir/loopback/Loopback.class ]]; then
		printf '%s\n' "$dir"
		return
	fi
	need_cmd java openjdk-17-jdk-headless "the Unity Catalog server"
	need_cmd git git "the Unity Catalog source"
	if [[ ! -f $dir/build.sbt ]]; then
		rm -rf "$dir"
		if [[ -n ${UC_SOURCE:-} ]]; then
			[[ -f $UC_SOURCE/build.sbt ]] || die "UC_SOURCE=$UC_SOURCE holds no build.sbt: not Unity Catalog's source tree"
			log "copying Unity Catalog's source from $UC_SOURCE"
			mkdir -p "$dir"
			cp -r "$UC_SOURCE/." "$dir"
		else
			log "fetching Unity Catalog $UC_COMMIT from $UC_REPO"
			git init -q "$dir"
			# A firewall may drop packets rather than refuse: bound the fetch.
			if ! GIT_TERMINAL_PROMPT=0 timeout 300 git -C "$dir" fetch -q --depth 1 "$UC_REPO" "$UC_COMMIT"; then
				rm -rf "$dir"
				unavailable "no build in $dir, UC_SOURCE is unset, and fetching $UC_REPO failed (no GitHub access?); set UC_SOURCE to a checkout of $UC_COMMIT to build it"
			fi
			git -C "$dir" checkout -q FETCH_HEAD
		fi
		# ~/.m2 may hold a pom without its jar; sbt must not stop there.
		sed -i '/maven-local/d' "$dir/build/sbt-config/repositories"
	fi
	log "building the Unity Catalog server with sbt (minutes the first time)"
	(cd "$dir" && build/sbt -info "server/package" >"$dir/build.log" 2>&1) || {
		tail -30 "$dir/build.log" >&2
		die "sbt could not build the Unity Catalog server (log $dir/build.log)"
	}
	cp="$(cat "$dir/server/target/classpath")"
	mkdir -p "$dir/loopback"
	javac -cp "$cp" -d "$dir/loopback" "$CDC2DELTA_ROOT/scripts/setup/unitycatalog/Loopback.java"
	printf '%s\n' "$dir"
}

start() {
	local dir=$1 uc port i
	mkdir -p "$dir"
	dir="$(cd "$dir" && pwd)"
	unavailable_file="$dir/unavailable"
	rm -f "$unavailable_file"
	uc="$(build)" || exit $?
	# The server reads etc/conf and keeps its H2 database in etc/db, relative
	# to its working directory: one per run.
	rm -rf "$dir/etc"
	cp -r "$uc/etc" "$dir/etc"
	rm -rf "$dir/etc/db"
	port="$(free_port)"
	cd "$dir"
	start_bg uc "$dir" "$port" 120 java -cp "$uc/loopback:$(cat "$uc/server/target/classpath")" Loopback "$port"
	for ((i = 0; i < 120; i++)); do
		curl -fsS "http://127.0.0.1:$port/api/2.1/unity-catalog/catalogs" >/dev/null 2>&1 && break
		sleep 0.5
	done
	log "Unity Catalog ready on http://127.0.0.1:$port (pid $(cat "$dir/uc.pid"))"
	printf 'http://127.0.0.1:%s\n' "$port"
}

stop() { stop_pid "Unity Catalog" "$1/uc.pid" 10; }

case "${1:-}" in
build) build ;;
start) start "${2:?usage: unitycatalog.sh start DIR}" ;;
stop) stop "${2:?usage: unitycatalog.sh stop DIR}" ;;
*) die "usage: unitycatalog.sh build | start DIR | stop DIR" ;;
esac
