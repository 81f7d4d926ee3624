#!/usr/bin/env bash
# scripts/setup/prometheus.sh fetch|start DIR|stop DIR: a Prometheus for the full
# tier's dashboard and alert checks (cmd/cdc2delta/prometheus_integration_test.go).
#
#   fetch      installs Debian's prometheus package when prometheus is missing (as
#              root, with apt-get; only the binaries are used: the system service
#              is not started) and prints the prometheus binary's path.
#   start DIR  starts prometheus (PROMETHEUS, default the one on PATH) with
#              DIR/prometheus.yml on a free port of 127.0.0.1, its data in DIR,
#              waits until it is ready (60 s) and prints its URL.
#   stop DIR   stops what start started in DIR.
set -euo pipefail
# shellcheck source=scripts/setup/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

case ${1:-} in
fetch)
	need_cmd prometheus prometheus "the full tier's dashboard and alert checks"
	need_cmd promtool prometheus "promtool test rules"
	command -v prometheus
	;;
start)
	dir=${2:?usage: prometheus.sh start DIR}
	bin=${PROMETHEUS:-$(command -v prometheus)} || die "no prometheus: run scripts/setup/prometheus.sh fetch"
	[[ -f $dir/prometheus.yml ]] || die "$dir/prometheus.yml is missing"
	port=$(free_port)
	"$bin" --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
		--web.listen-address="127.0.0.1:$port" >"$dir/prometheus.log" 2>&1 &
	echo $! >"$dir/prometheus.pid"
	wait_port "$port" 60 "$(cat "$dir/prometheus.pid")" || { tail -20 "$dir/prometheus.log" >&2; exit 1; }
	for ((i = 0; i < 240; i++)); do
		if curl -fsS "http://127.0.0.1:$port/-/ready" >/dev/null 2>&1; then
			echo "http://127.0.0.1:$port"
			exit 0
		fi
		sleep 0.25
	done
	tail -20 "$dir/prometheus.log" >&2
	die "prometheus in $dir not ready after 60s"
	;;
stop)
	dir=${2:?usage: prometheus.sh stop DIR}
	[[ -f $dir/prometheus.pid ]] || exit 0
	pid=$(cat "$dir/prometheus.pid")
	kill "$pid" 2>/dev/null || true
	for ((i = 0; i < 80; i++)); do
		kill -0 "$pid" 2>/dev/null || { rm -f "$dir/prometheus.pid"; exit 0; }
		sleep 0.25
	done
	kill -9 "$pid" 2>/dev/null || true
	rm -f "$dir/prometheus.pid"
	;;
*) die "usage: scripts/setup/prometheus.sh fetch|start DIR|stop DIR" ;;
esac
