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
	local dir=$1 port
	fetch
	mkdir -p "$dir"
	dir="$(cd "$dir" && pwd)"
	port="$(free_port)"
	# In memory, Azurite writes nothing; run it in DIR all the same.
	cd "$dir"
	start_bg azurite "$dir" "$port" 60 "$bin" --blobHost 127.0.0.1 --blobPort "$port" --inMemoryPersistence \
		--skipApiVersionCheck --loose
	log "azurite blob ready on http://127.0.0.1:$port/devstoreaccount1 (pid $(cat "$dir/azurite.pid"))"
	printf 'http://127.0.0.1:%s/devstoreaccount1\n' "$port"
}

stop() { stop_pid "azurite" "$1/azurite.pid" 10; }

case "${1:-}" in
fetch) fetch ;;
start) start "${2:?usage: azurite.sh start DIR}" ;;
stop) stop "${2:?usage: azurite.sh stop DIR}" ;;
*) die "usage: azurite.sh fetch | start DIR | stop DIR" ;;
esac
