#!/usr/bin/env bash
# postgres.sh runs a throwaway PostgreSQL server with logical decoding on
# (wal_level=logical, for Debezium's pgoutput plugin), bound to 127.0.0.1.
#
#   postgres.sh start DIR   initdb in DIR and start on a free port; print
#                           127.0.0.1:PORT (user postgres, trust auth)
#   postgres.sh stop DIR    stop the server started in DIR
#
# PostgreSQL refuses to run as root: as root the server runs as the postgres
# user that Debian's package creates.
set -euo pipefail
# shellcheck source=scripts/setup/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bin_dir() {
	local d
	d="$(find /usr/lib/postgresql -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -1)"
	if [[ -z $d ]]; then
		apt_install "the PostgreSQL source of the full tier" postgresql >/dev/null
		d="$(find /usr/lib/postgresql -maxdepth 2 -name bin -type d | sort -V | tail -1)"
	fi
	need_cmd psql postgresql-client "the full tier's PostgreSQL workloads" >/dev/null
	printf '%s\n' "$d"
}

# as_owner runs a server command as the data directory's owner.
as_owner() {
	if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start() {
	local dir=$1 bin port
	bin="$(bin_dir)"
	mkdir -p "$dir"
	dir="$(cd "$dir" && pwd)"
	rm -rf "$dir/data"
	if [[ $(id -u) -eq 0 ]]; then
		chown postgres:postgres "$dir"
		# The server runs as postgres, which must reach DIR: a parent made by
		# mktemp -d (0700, root's) would stop it. Open only the parents that
		# block it, to traversal only (o+x: no listing, no writing).
		local p=$dir
		while [[ $p != / ]]; do
			p="$(dirname "$p")"
			if ! runuser -u postgres -- test -x "$p"; then
				log "postgres.sh: letting the postgres user traverse $p (chmod o+x)"
				chmod o+x "$p"
			fi
		done
	fi
	as_owner "$bin/initdb" -D "$dir/data" -A trust -U postgres --no-sync -E UTF8 \
		>"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; die "initdb failed"; }
	port="$(free_port)"
	cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses='127.0.0.1'
port=$port
unix_socket_directories='$dir'
wal_level=logical
max_replication_slots=20
max_wal_senders=20
fsync=off
synchronous_commit=off
full_page_writes=off
CONF
	# pg_ctl -w waits until the server accepts connections; -t bounds it.
	if ! as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 60 start >/dev/null; then
		tail -30 "$dir/postgres.log" >&2 || true
		die "postgres did not start"
	fi
	printf '127.0.0.1:%s\n' "$port" >"$dir/addr"
	log "postgres ready on 127.0.0.1:$port (logs in $dir)"
	cat "$dir/addr"
}

stop() {
	local dir=$1
	[[ -f $dir/data/postmaster.pid ]] || return 0
	# fast mode: disconnect clients (the Connect worker's replication
	# connection) instead of waiting for them; -t bounds the wait.
	as_owner "$(bin_dir)/pg_ctl" -D "$dir/data" -m fast -w -t 30 stop >/dev/null ||
		log "postgres in $dir did not stop"
	log "postgres stopped ($dir)"
}

case "${1:-}" in
start) start "${2:?usage: postgres.sh start DIR}" ;;
stop) stop "${2:?usage: postgres.sh stop DIR}" ;;
*) die "usage: postgres.sh start DIR | stop DIR" ;;
esac
