#!/usr/bin/env bash
# venv.sh [NAME] creates a pinned Python venv of the full tier and prints its
# python on stdout: without NAME the Delta readers' venv $CDC2DELTA_CACHE/venv
# from scripts/py/requirements.txt, with NAME $CDC2DELTA_CACHE/venv-NAME from
# scripts/py/requirements-NAME.txt. It reuses a venv while its requirements
# file and the base interpreter are unchanged.
set -euo pipefail
# shellcheck source=scripts/setup/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_cmd python3 python3 "the Python venv of the Delta readers (delta-rs, DuckDB, PySpark, moto)"
if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
	apt_install "the Python venv of the Delta readers" python3-venv
fi

name="${1:-}"
req="$CDC2DELTA_ROOT/scripts/py/requirements${name:+-$name}.txt"
venv="$CDC2DELTA_CACHE/venv${name:+-$name}"
[[ -f $req ]] || die "no requirements file $req for venv '${name}'"
stamp="$venv/.cdc2delta-requirements.sha256"
want="$(sha256_of "$req" "$(python3 -c 'import sys; print(sys.version)')")"

if [[ -f $stamp && $(cat "$stamp") == "$want" && -x $venv/bin/python ]]; then
	log "venv up to date: $venv"
else
	# Build in place (venv scripts hard-code their path) and write the stamp
	# last, so an interrupted build is redone next time.
	log "building venv $venv (requirements hash ${want:0:12})"
	rm -rf "$venv"
	mkdir -p "$CDC2DELTA_CACHE"
	python3 -m venv "$venv"
	"$venv/bin/python" -m pip install -q --upgrade pip >&2
	"$venv/bin/python" -m pip install -q -r "$req" >&2
	printf '%s\n' "$want" >"$stamp"
fi
printf '%s\n' "$venv/bin/python"
