#!/bin/sh
# Registers (or updates) the Debezium SQL Server connector of the compose
# stack: PUT /connectors/NAME/config is idempotent, so running it again applies
# an edited sqlserver-connector.json. POSIX sh, so it runs both on the host and
# in the register-connector service (curl image).
#
#   compose/connect/register.sh                 # Connect on localhost:8083
#   CONNECT_URL=http://connect:8083 register.sh
#   register.sh --print                         # print the config it would send
#
# The config file's ${MSSQL_SA_PASSWORD} is replaced with the variable's value
# (default the stack's sa password) so the password lives in one place.
set -eu

dir=$(cd "$(dirname "$0")" && pwd)
connect_url=${CONNECT_URL:-http://localhost:8083}
name=${CONNECTOR_NAME:-sqlserver-sales}
config=${CONNECTOR_CONFIG:-$dir/sqlserver-connector.json}
password=${MSSQL_SA_PASSWORD:-Cdc2delta-Passw0rd}

# render prints the connector config with the password filled in, escaped
# first for JSON (\ and ") and then for sed's replacement (&, | and \).
render() {
	escaped=$(printf '%s' "$password" | sed -e 's/[\\"]/\\&/g' -e 's/[&|\\]/\\&/g')
	sed "s|\${MSSQL_SA_PASSWORD}|$escaped|" "$config"
}

if [ "${1:-}" = "--print" ]; then
	render
	exit 0
fi

# Connect answers 404 until its REST server is up; wait up to 5 minutes.
i=0
until curl -fsS -o /dev/null "$connect_url/connectors"; do
	i=$((i + 1))
	if [ "$i" -ge 60 ]; then
		echo "register.sh: Kafka Connect at $connect_url is not answering" >&2
		exit 1
	fi
	sleep 5
done

render | curl -fsS -X PUT -H 'Content-Type: application/json' --data-binary @- \
	"$connect_url/connectors/$name/config"
echo
echo "register.sh: connector $name registered; status: curl $connect_url/connectors/$name/status"
