#!/usr/bin/env bash
# azurite.sh runs Azurite's Blob service (the Azure Storage emulator, from npm) on
# 127.0.0.1, in memory.
#
#   azurite.sh fetch       npm-install azurite into $CDC2DELTA_CACHE (once)
#   azurite.sh start DIR   start on a free port; print the Blob endpoint URL,
#                          http://127.0.0.1:PORT/devstoreaccount1
#   azurite.sh stop DIR    stop the server started in DIR
#
# The account is Azurite's well-known devstoreaccount1 with its published key.
set -euo pipefail
# shellcheck source=scripts/setup/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

AZURITE_VERSION=3.37.0
prefix="$CDC2DELTA_CACHE/azurite-$AZURITE_VERSION"
bin="$prefix/node_modules/.bin/azurite-blob"

fetch() {
	[[ -x $bin ]] && return 0
	need_cmd npm npm "Azurite (the Azure Storage emulator)"
	mkdir -p "$prefix"
	log "installing azurite $AZURITE_VERSION into $prefix"
	timeout 600 npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error \
		"azurite@$AZURITE_VERSION" >&2 || die "npm install azurite failed"
	[[ -x $bin ]] || die "npm installed azurite but $bin is missing"
}

start() {
	local dir=$1 port pid
	fetch
	mkdir -p "$dir"
	dir="$(cd "$dir" && pwd)"
	port="$(free_port)"
	# In memory, Azurite writes nothing; run it in DIR all the same.
	cd "$dir"
	setsid "$bin" --blobHost 127.0.0.1 --blobPort "$port" --inMemoryPersistence \
		--skipApiVersionCheck --loose \
		>"$dir/azurite.log" 2>&1 </dev/null &
	pid=$!
	printf '%s\n' "$pid" >"$dir/azurite.pid"
	if ! wait_port "$port" 60 "$pid"; then
		tail -30 "$dir/azurite.log" >&2 || true
		stop "$dir"
		die "azurite-blob did not start"
	fi
	log "azurite blob ready on http://127.0.0.1:$port/devstoreaccount1 (pid $pid)"
	printf 'http://127.0.0.1:%s/devstoreaccount1\n' "$port"
}

stop() {
	local dir=$1 pid i
	[[ -f $dir/azurite.pid ]] || return 0
	pid="$(cat "$dir/azurite.pid")"
	kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < 40; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.25
	done
	kill -KILL "$pid" 2>/dev/null || true
	rm -f "$dir/azurite.pid"
	log "azurite stopped (pid $pid)"
}

case "${1:-}" in
fetch) fetch ;;
start) start "${2:?usage: azurite.sh start DIR}" ;;
stop) stop "${2:?usage: azurite.sh stop DIR}" ;;
*) die "usage: azurite.sh fetch | start DIR | stop DIR" ;;
esac
