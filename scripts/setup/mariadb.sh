#!/usr/bin/env bash
# mariadb.sh runs a throwaway MariaDB server with a row-based binlog (for
# Debezium's MariaDB connector), bound to 127.0.0.1.
#
#   mariadb.sh start DIR   create a data dir in DIR and start on a free port;
#                          print 127.0.0.1:PORT. User cdc, password cdc-secret,
#                          with every privilege the tests and Debezium need
#   mariadb.sh stop DIR    stop the server started in DIR
set -euo pipefail
# shellcheck source=scripts/setup/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

start() {
	local dir=$1 port pid user=() i
	need_cmd mariadbd mariadb-server "the MariaDB source of the full tier"
	need_cmd mariadb mariadb-client "the full tier's MariaDB workloads"
	mkdir -p "$dir"
	dir="$(cd "$dir" && pwd)"
	rm -rf "$dir/data"
	[[ $(id -u) -eq 0 ]] && user=(--user=root)
	mariadb-install-db --no-defaults --datadir="$dir/data" "${user[@]}" \
		--auth-root-authentication-method=normal --skip-test-db >"$dir/install.log" 2>&1 ||
		{ cat "$dir/install.log" >&2; die "mariadb-install-db failed"; }
	port="$(free_port)"
	setsid mariadbd --no-defaults --datadir="$dir/data" "${user[@]}" \
		--bind-address=127.0.0.1 --port="$port" --socket="$dir/sock" --pid-file="$dir/mariadb.pid" \
		--log-bin="$dir/data/binlog" --binlog-format=ROW --binlog-row-image=FULL --server-id=1 \
		--log-error="$dir/error.log" --innodb-flush-log-at-trx-commit=2 --skip-name-resolve \
		</dev/null >/dev/null 2>&1 &
	pid=$!
	printf '%s\n' "$pid" >"$dir/server.pid"
	for ((i = 0; i < 240; i++)); do
		mariadb-admin --no-defaults -uroot -S "$dir/sock" ping >/dev/null 2>&1 && break
		kill -0 "$pid" 2>/dev/null || { tail -30 "$dir/error.log" >&2; die "mariadbd exited"; }
		sleep 0.25
	done
	if ((i == 240)); then
		stop "$dir"
		die "mariadbd did not answer within 60s"
	fi
	mariadb --no-defaults -uroot -S "$dir/sock" -e "
		CREATE USER 'cdc'@'%' IDENTIFIED BY 'cdc-secret';
		GRANT ALL PRIVILEGES ON *.* TO 'cdc'@'%';" ||
		{ stop "$dir"; die "creating the cdc user failed"; }
	printf '127.0.0.1:%s\n' "$port" >"$dir/addr"
	log "mariadb ready on 127.0.0.1:$port (pid $pid, logs in $dir)"
	cat "$dir/addr"
}

stop() { stop_pid "mariadb" "$1/server.pid" 30; }

case "${1:-}" in
start) start "${2:?usage: mariadb.sh start DIR}" ;;
stop) stop "${2:?usage: mariadb.sh stop DIR}" ;;
*) die "usage: mariadb.sh start DIR | stop DIR" ;;
esac
