#!/usr/bin/env bash
# scripts/check-goinstall.sh checks the install line the README gives,
# `go install github.com/cdc2delta/cdc2delta/cmd/cdc2delta@latest`, as a user
# runs it: the module at HEAD is served as a release by a file-system module
# proxy in front of the usual one, `go install ...@latest` fetches and builds
# it outside any checkout (so a replace directive, a dependency only this
# checkout holds or a file missing from git fails here), and the installed
# binary reports the version it was installed at.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

module=github.com/cdc2delta/cdc2delta
version=${1:-v0.0.0-check}
work="$(mktemp -d)"
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT

at="$work/proxy/$module/@v"
mkdir -p "$at" "$work/src/$module@$version" "$work/bin" "$work/home"
# What git holds at HEAD, without the deploy/ module (a nested module is not
# part of this one's zip).
git archive --format=tar HEAD | tar -x -C "$work/src/$module@$version"
rm -rf "$work/src/$module@$version/deploy"
# A module zip holds files only, each under module@version/.
python3 - "$work/src" "$at/$version.zip" <<'PY'
import os, sys, zipfile
root, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for d, _, files in os.walk(root):
        for f in files:
            path = os.path.join(d, f)
            z.write(path, os.path.relpath(path, root))
PY
cp go.mod "$at/$version.mod"
printf '{"Version":"%s","Time":"%s"}\n' "$version" "$(git log -1 --format=%cI HEAD)" >"$at/$version.info"
echo "$version" >"$at/list"

# A user's shell: no checkout around, a fresh GOPATH for the binary, the
# module cache shared (read-only use) to keep the dependencies' download cheap.
cd "$work/home"
GOPROXY="file://$work/proxy,$(go env GOPROXY)" GONOSUMDB="$module" GOFLAGS=-modcacherw \
	GOBIN="$work/bin" go install "$module/cmd/cdc2delta@latest"
got="$("$work/bin/cdc2delta" version)"
if [[ $got != "cdc2delta $version"* ]]; then
	echo "check-goinstall: the installed binary says \"$got\", want cdc2delta $version" >&2
	exit 1
fi
echo "check-goinstall: go install $module/cmd/cdc2delta@latest gave: $got"
