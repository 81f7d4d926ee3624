#!/usr/bin/env bash
# fakegcs.sh runs fake-gcs-server, a Google Cloud Storage emulator, on 127.0.0.1.
#
#   fakegcs.sh fetch        build the pinned version into $CDC2DELTA_CACHE/bin
#   fakegcs.sh start DIR    start on a free port (in-memory backend); print the endpoint URL
#   fakegcs.sh stop DIR     stop the server started in DIR
#
# The endpoint goes to STORAGE_EMULATOR_HOST (the Go SDK's own switch) or
# CDC2DELTA_GCS_ENDPOINT; the server does no authentication.
set -euo pipefail
# shellcheck source=scripts/setup/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

FAKEGCS_VERSION=v1.56.1
BIN="$CDC2DELTA_CACHE/bin/fake-gcs-server-$FAKEGCS_VERSION"

fetch() {
	[[ -x $BIN ]] && return 0
	mkdir -p "$CDC2DELTA_CACHE/bin"
	local tmp
	tmp="$(mktemp -d)"
	log "building fake-gcs-server $FAKEGCS_VERSION"
	# GOFLAGS from the caller (-mod=vendor, say) would not apply outside this module.
	if ! GOFLAGS= GOBIN="$tmp" timeout 600 go install "github.com/fsouza/fake-gcs-server@$FAKEGCS_VERSION"; then
		rm -rf "$tmp"
		die "go install of fake-gcs-server $FAKEGCS_VERSION failed"
	fi
	mv "$tmp/fake-gcs-server" "$BIN"
	rm -rf "$tmp"
}

start() {
	local dir=$1 port
	fetch
	mkdir -p "$dir"
	dir="$(cd "$dir" && pwd)"
	port="$(free_port)"
	start_bg fakegcs "$dir" "$port" 30 "$BIN" -scheme http -host 127.0.0.1 -port "$port" -backend memory \
		-public-host "127.0.0.1:$port" -log-level warn
	log "fake-gcs-server ready on http://127.0.0.1:$port (pid $(cat "$dir/fakegcs.pid"))"
	printf 'http://127.0.0.1:%s\n' "$port"
}

stop() { stop_pid "fake-gcs-server" "$1/fakegcs.pid" 10; }

case "${1:-}" in
fetch) fetch ;;
start) start "${2:?usage: fakegcs.sh start DIR}" ;;
stop) stop "${2:?usage: fakegcs.sh stop DIR}" ;;
*) die "usage: fakegcs.sh fetch | start DIR | stop DIR" ;;
esac
