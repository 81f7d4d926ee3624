# shellcheck shell=bash
# Shared helpers for scripts/test.sh and scripts/setup/*.sh. Source it; do not run it.
#
# Everything downloaded or built lives under CDC2DELTA_CACHE so that a second run
# on the same machine reuses it. Maven keeps its own cache in ~/.m2 and Go in
# $(go env GOMODCACHE); both are left where the tools expect them.

CDC2DELTA_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CDC2DELTA_CACHE="${CDC2DELTA_CACHE:-$HOME/.cache/cdc2delta}"
export CDC2DELTA_ROOT CDC2DELTA_CACHE

# log writes to stderr so that scripts can print results on stdout.
log() { printf '%s %s\n' "[$(date -u +%H:%M:%S)]" "$*" >&2; }

die() { log "ERROR: $*"; exit 1; }

# section prints a header that is easy to find in a long CI log.
section() { printf '\n==== [%s] %s ====\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

# sha256_of prints one hash over the given files' contents and any extra words.
sha256_of() {
	local f
	{
		for f in "$@"; do
			if [[ -f $f ]]; then cat "$f"; else printf '%s\n' "$f"; fi
		done
	} | sha256sum | cut -d' ' -f1
}

# free_port prints a TCP port on 127.0.0.1 that nothing listens on right now.
free_port() {
	python3 - <<'PY'
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()
PY
}

# wait_port waits until 127.0.0.1:PORT accepts connections, or fails after
# TIMEOUT seconds. PID, when given, must stay alive while we wait.
wait_port() {
	local port=$1 timeout=$2 pid=${3:-} i
	for ((i = 0; i < timeout * 4; i++)); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			return 0
		fi
		if [[ -n $pid ]] && ! kill -0 "$pid" 2>/dev/null; then
			log "process $pid exited before 127.0.0.1:$port opened"
			return 1
		fi
		sleep 0.25
	done
	log "timed out after ${timeout}s waiting for 127.0.0.1:$port"
	return 1
}

# need_cmd CMD PKG WHY installs the Debian package PKG when CMD is missing, so
# that a fresh machine needs nothing done by hand; WHY says what needs it.
need_cmd() {
	local cmd=$1 pkg=$2 why=${3:-}
	command -v "$cmd" >/dev/null 2>&1 && return 0
	log "$cmd not found"
	apt_install "${why:-$cmd}" "$pkg"
}

# apt_install WHY PKG... installs Debian packages system-wide, only as root (as in
# CI) and only with apt-get, saying first what it installs (with how many
# dependencies) and why. Without root or apt it fails, naming the packages to
# install by hand.
apt_install() {
	local why=$1 n
	shift
	if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
		die "missing: $* (needed for $why); install them by hand (this script installs them with apt-get only as root on Debian)"
	fi
	if [[ -z ${CDC2DELTA_APT_UPDATED:-} ]]; then
		DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 || die "apt-get update failed: install $* by hand"
		CDC2DELTA_APT_UPDATED=1
	fi
	n=$(DEBIAN_FRONTEND=noninteractive apt-get install -s --no-install-recommends "$@" 2>/dev/null | grep -c '^Inst ' || true)
	log "installing system-wide with apt-get: $* ($n packages with their dependencies), for $why"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2
}

# start_bg NAME DIR PORT TIMEOUT CMD... runs CMD in its own session, its output
# in DIR/NAME.log and its pid in DIR/NAME.pid, and waits up to TIMEOUT seconds
# for 127.0.0.1:PORT; if it does not open, prints the log's tail, stops CMD and
# fails.
start_bg() {
	local name=$1 dir=$2 port=$3 timeout=$4
	shift 4
	setsid "$@" >"$dir/$name.log" 2>&1 </dev/null &
	printf '%s\n' "$!" >"$dir/$name.pid"
	if ! wait_port "$port" "$timeout" "$!"; then
		tail -30 "$dir/$name.log" >&2 || true
		stop_pid "$name" "$dir/$name.pid"
		die "$name did not start"
	fi
}

# stop_pid LABEL PIDFILE [GRACE] stops the process in PIDFILE: SIGCONT and SIGTERM, then
# SIGKILL after GRACE seconds (default 10), and removes PIDFILE.
stop_pid() {
	local label=$1 file=$2 grace=${3:-10} pid i
	[[ -f $file ]] || return 0
	pid="$(cat "$file")"
	if kill -0 "$pid" 2>/dev/null; then
		kill -CONT "$pid" 2>/dev/null || true # a frozen (SIGSTOPped) one acts on SIGTERM only when it runs
		kill -TERM "$pid" 2>/dev/null || true
		for ((i = 0; i < grace * 4; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.25
		done
		if kill -0 "$pid" 2>/dev/null; then
			log "$label (pid $pid) ignored SIGTERM for ${grace}s; killing it"
			kill -KILL "$pid" 2>/dev/null || true
		fi
	fi
	rm -f "$file"
	log "$label stopped (pid $pid)"
}
