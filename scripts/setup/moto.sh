#!/usr/bin/env bash
# moto.sh runs moto's S3-compatible server from the venv on 127.0.0.1.
#
#   moto.sh start DIR    start on a free port; print the endpoint URL
#   moto.sh stop DIR     stop the server started in DIR
set -euo pipefail
# shellcheck source=scripts/setup/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

start() {
	local dir=$1 python port pid
	python="$(bash "$CDC2DELTA_ROOT/scripts/setup/venv.sh")"
	mkdir -p "$dir"
	dir="$(cd "$dir" && pwd)"
	port="$(free_port)"
	setsid "$(dirname "$python")/moto_server" -H 127.0.0.1 -p "$port" \
		>"$dir/moto.log" 2>&1 </dev/null &
	pid=$!
	printf '%s\n' "$pid" >"$dir/moto.pid"
	if ! wait_port "$port" 60 "$pid"; then
		tail -30 "$dir/moto.log" >&2 || true
		stop "$dir"
		die "moto_server did not start"
	fi
	log "moto S3 ready on http://127.0.0.1:$port (pid $pid)"
	printf 'http://127.0.0.1:%s\n' "$port"
}

stop() {
	local dir=$1 pid i
	[[ -f $dir/moto.pid ]] || return 0
	pid="$(cat "$dir/moto.pid")"
	kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < 40; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.25
	done
	kill -KILL "$pid" 2>/dev/null || true
	rm -f "$dir/moto.pid"
	log "moto stopped (pid $pid)"
}

case "${1:-}" in
start) start "${2:?usage: moto.sh start DIR}" ;;
stop) stop "${2:?usage: moto.sh stop DIR}" ;;
*) die "usage: moto.sh start DIR | stop DIR" ;;
esac
