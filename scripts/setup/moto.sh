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
	start_bg moto "$dir" "$port" 60 "$(dirname "$python")/moto_server" -H 127.0.0.1 -p "$port"
	log "moto S3 ready on http://127.0.0.1:$port (pid $(cat "$dir/moto.pid"))"
	printf 'http://127.0.0.1:%s\n' "$port"
}

stop() { stop_pid "moto" "$1/moto.pid" 10; }

case "${1:-}" in
start) start "${2:?usage: moto.sh start DIR}" ;;
stop) stop "${2:?usage: moto.sh stop DIR}" ;;
*) die "usage: moto.sh start DIR | stop DIR" ;;
esac
