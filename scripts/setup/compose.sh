#!/usr/bin/env bash
# scripts/setup/compose.sh checks the compose stack and the Dockerfile on a
# machine without a Docker engine (CI):
#
#   scripts/setup/compose.sh install   # make sure docker-compose is there
#   scripts/setup/compose.sh check     # install if needed, then every check
#
# check runs:
#   1. `docker-compose -f compose/docker-compose.yml config -q`: the file
#      parses and its references (depends_on, volumes, anchors) resolve.
#   2. checks in Python (inline below): every image and
#      base image pinned (no missing or `latest` tag), a non-root USER in the
#      Dockerfile, the connector's topics equal cdc2delta.yaml's, the decoding
#      modes match, the config path of the container is the mounted one, every
#      ${VAR:-localhost...} of the config is set by the service, and init.sql
#      creates and CDC-enables each captured table.
#   3. the Dockerfile's own `go build` line, run with the local Go toolchain.
#   4. the binary from 3 runs `validate` on compose/cdc2delta.yaml with exactly
#      the cdc2delta service's environment from the rendered compose file.
#   5. connect/register.sh parses (sh -n) and renders valid JSON.
set -euo pipefail
# shellcheck source=scripts/setup/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$CDC2DELTA_ROOT"

compose_file=compose/docker-compose.yml

# compose_cmd prints the compose command: Debian's docker-compose (v1, what
# apt provides on bookworm) or the Docker CLI's v2 plugin when present.
compose_cmd() {
	if command -v docker-compose >/dev/null 2>&1; then
		echo docker-compose
	elif docker compose version >/dev/null 2>&1; then
		echo "docker compose"
	else
		return 1
	fi
}

# yaml_python prints a python3 that can import yaml: Debian's python3-yaml
# comes with docker-compose, but a pyenv python3 first on PATH lacks it.
yaml_python() {
	local py
	for py in python3 /usr/bin/python3; do
		if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import yaml' 2>/dev/null; then
			command -v "$py"
			return 0
		fi
	done
	return 1
}

install() {
	if compose_cmd >/dev/null && yaml_python >/dev/null; then
		return 0
	fi
	# Without recommends: docker.io (the engine) is only recommended, and
	# `config` needs no engine. apt keeps the .debs in /var/cache/apt/archives.
	apt_install "checking compose/docker-compose.yml with \`docker-compose config\` (no Docker engine is installed; the Docker CLI's compose plugin would do too)" \
		docker-compose python3-yaml
	compose_cmd >/dev/null || die "docker-compose still not found after installing it"
}

check() {
	local cc py tmp rendered bin build_line
	install
	cc=$(compose_cmd)
	py=$(yaml_python) || die "no python3 with the yaml module"
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/cdc2delta-compose.XXXXXX")
	# shellcheck disable=SC2064 # expand tmp now
	trap "rm -rf '$tmp'" RETURN

	log "$($cc version 2>/dev/null | head -1)"
	log "1. $cc -f $compose_file config -q"
	# shellcheck disable=SC2086 # cc may be two words
	$cc -f "$compose_file" config -q
	rendered=$tmp/rendered.yml
	# shellcheck disable=SC2086
	$cc -f "$compose_file" config >"$rendered"

	log "2. pins, user, topics, decoding, paths, init.sql"
	"$py" - "$rendered" <<'PY'
import json, re, sys, yaml

problems = []
def problem(msg):
    problems.append(msg)

def check_tag(where, ref):
    # The tag follows the last ':' of the last path element (a registry
    # host may carry a port).
    name = ref.split("@")[0]
    last = name.rsplit("/", 1)[-1]
    if ":" not in last:
        problem(f"{where}: image {ref!r} has no tag")
    elif last.split(":", 1)[1] in ("", "latest"):
        problem(f"{where}: image {ref!r} is not pinned")

def dockerfile(path):
    """Returns the FROM references (ARG defaults substituted), stage names and the final stage's USER."""
    args, stages, froms, user = {}, set(), [], None
    for line in open(path):
        line = line.strip()
        m = re.match(r"ARG\s+(\w+)=(\S+)", line)
        if m and not froms:
            args[m.group(1)] = m.group(2)
        m = re.match(r"FROM\s+(\S+)(?:\s+AS\s+(\S+))?", line, re.I)
        if m:
            ref = re.sub(r"\$\{(\w+)\}", lambda a: args.get(a.group(1), ""), m.group(1))
            if ref not in stages:
                froms.append(ref)
            if m.group(2):
                stages.add(m.group(2))
            user = None
        m = re.match(r"USER\s+(\S+)", line)
        if m:
            user = m.group(1)
    return froms, user

compose = yaml.safe_load(open(sys.argv[1]))
services = compose["services"]
for name, svc in services.items():
    if "image" not in svc:
        problem(f"service {name}: no image name")
    elif "build" not in svc:
        check_tag(f"service {name}", svc["image"])

froms, user = dockerfile("Dockerfile")
for ref in froms:
    check_tag("Dockerfile", ref)
if user is None or user.split(":")[0] in ("root", "0"):
    problem(f"Dockerfile: the final stage runs as {user or 'root'}; set a non-root USER")
connect_froms, _ = dockerfile("compose/connect/Dockerfile")
for ref in connect_froms:
    check_tag("compose/connect/Dockerfile", ref)
debezium = services["connect"]["build"].get("args", {}).get("DEBEZIUM_VERSION", "")
if debezium in ("", "latest"):
    problem("service connect: DEBEZIUM_VERSION build arg is not pinned")

connector = json.load(open("compose/connect/sqlserver-connector.json"))
c2d = yaml.safe_load(open("compose/cdc2delta.yaml"))
expect = {
    "database.encrypt": "false",
    "key.converter": "io.confluent.connect.avro.AvroConverter",
    "value.converter": "io.confluent.connect.avro.AvroConverter",
    # "Unit Price" is not an Avro name: without it the converter fails.
    "field.name.adjustment.mode": "avro",
}
for k, v in expect.items():
    if connector.get(k) != v:
        problem(f"sqlserver-connector.json: {k} is {connector.get(k)!r}, want {v!r}")
for k in ("key.converter.schema.registry.url", "value.converter.schema.registry.url",
          "schema.history.internal.kafka.topic", "schema.history.internal.kafka.bootstrap.servers"):
    if not connector.get(k):
        problem(f"sqlserver-connector.json: {k} is missing")
tables = [t.strip() for t in connector["table.include.list"].split(",")]
dbs = [d.strip() for d in connector["database.names"].split(",")]
topics = {f"{connector['topic.prefix']}.{db}.{t}" for db in dbs for t in tables}
if set(c2d["kafka"]["topics"]) != topics:
    problem(f"cdc2delta.yaml: kafka.topics {sorted(c2d['kafka']['topics'])} != the connector's topics {sorted(topics)}")
for mode in ("time_precision_mode", "decimal_handling_mode", "binary_handling_mode"):
    key = mode.replace("_mode", ".mode").replace("_", ".")
    if c2d["decoding"][mode] != connector.get(key):
        problem(f"decoding.{mode} {c2d['decoding'][mode]!r} != connector {key} {connector.get(key)!r}")

svc = services["cdc2delta"]
cmd = svc.get("command") or []
config_path = cmd[cmd.index("--config") + 1] if "--config" in cmd else None
targets = []
for v in svc.get("volumes", []):
    targets.append(v["target"] if isinstance(v, dict) else v.split(":")[1])
if config_path not in targets:
    problem(f"service cdc2delta: --config {config_path} is not a mounted file ({targets})")
docker_cmd = next((l for l in open("Dockerfile") if l.startswith("CMD")), "")
if config_path and config_path not in docker_cmd:
    problem(f"Dockerfile: CMD does not read {config_path} ({docker_cmd.strip()})")

# Inside the container localhost is cdc2delta itself: a ${VAR:-...localhost...}
# default is for running on the host, so the service must set VAR.
env = svc.get("environment") or {}
if isinstance(env, list):
    env = dict(e.split("=", 1) for e in env)
for var, default in re.findall(r"\$\{(\w+):-([^}]*)\}", open("compose/cdc2delta.yaml").read()):
    if "localhost" in default and var not in env:
        problem(f"service cdc2delta: cdc2delta.yaml's ${{{var}}} falls back to {default} (the container itself); set {var}")

sql = open("compose/sqlserver/init.sql").read()
for t in tables:
    schema, name = t.split(".")
    if not re.search(rf"CREATE TABLE {schema}\.{name}\b", sql):
        problem(f"init.sql: does not create {t}")
    if not re.search(rf"@source_schema = N'{schema}', @source_name = N'{name}'", sql):
        problem(f"init.sql: does not enable CDC on {t}")
if "sp_cdc_enable_db" not in sql:
    problem("init.sql: does not enable CDC on the database")

for p in problems:
    print("compose check:", p, file=sys.stderr)
sys.exit(1 if problems else 0)
PY

	build_line=$(grep -E '^RUN CGO_ENABLED=0 go build ' Dockerfile) ||
		die "Dockerfile: no 'RUN CGO_ENABLED=0 go build' line"
	build_line=${build_line#RUN }
	bin=$tmp/cdc2delta
	log "3. $build_line (output in $tmp)"
	# The same command as the image's build stage, only writing to tmp.
	bash -c "${build_line//\/out\/cdc2delta/$bin}"
	[[ -x $bin ]] || die "the Dockerfile's build line did not write $bin"

	log "4. cdc2delta validate with the cdc2delta service's environment"
	local -a envs
	mapfile -t envs < <("$py" - "$rendered" <<'PY'
import sys, yaml
env = yaml.safe_load(open(sys.argv[1]))["services"]["cdc2delta"].get("environment", {})
for k, v in (env.items() if isinstance(env, dict) else (e.split("=", 1) for e in env)):
    print(f"{k}={'' if v is None else v}")
PY
	)
	env -i "${envs[@]}" "$bin" validate --config compose/cdc2delta.yaml

	log "5. connect/register.sh"
	sh -n compose/connect/register.sh
	sh compose/connect/register.sh --print | "$py" -c 'import json, sys; json.load(sys.stdin)'
	log "compose stack checks passed"
}

case "${1:-check}" in
install) install ;;
check) check ;;
*) die "usage: $0 [install|check]" ;;
esac
