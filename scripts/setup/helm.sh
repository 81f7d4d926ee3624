#!/usr/bin/env bash
# scripts/setup/helm.sh fetch builds helm (HELM_VERSION, from its Go module with the
# local toolchain: no download site but the Go module proxy) into
# $CDC2DELTA_CACHE/bin/helm-$HELM_VERSION once, and prints its path. The chart test
# (deploy/helm/chartcheck) runs it from CDC2DELTA_HELM.
set -euo pipefail
# shellcheck source=scripts/setup/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

HELM_VERSION=${HELM_VERSION:-v4.3.2}

cmd=${1:-}
[[ $cmd == fetch ]] || die "usage: scripts/setup/helm.sh fetch"
bin="$CDC2DELTA_CACHE/bin/helm-$HELM_VERSION"
if [[ ! -x $bin ]]; then
	mkdir -p "$CDC2DELTA_CACHE/bin"
	log "building helm $HELM_VERSION into $bin (go install; a few minutes the first time)"
	start=$SECONDS
	gobin="$(mktemp -d)"
	trap 'rm -rf "$gobin"' EXIT
	GOBIN=$gobin timeout 1200 go install "helm.sh/helm/v4/cmd/helm@$HELM_VERSION" ||
		die "building helm $HELM_VERSION failed (or took over 20 min)"
	mv "$gobin/helm" "$bin"
	log "built helm in $((SECONDS - start))s"
fi
"$bin" version --short >/dev/null || die "$bin does not run"
echo "$bin"
