#!/usr/bin/env bash
# scripts/release.sh VERSION [OUTDIR] cross-builds the cdc2delta release: a static
# binary (CGO_ENABLED=0, -trimpath, the version stamped with -ldflags -X) per target,
# each in an archive with LICENSE, README.md and CHANGELOG.md, and SHA256SUMS over
# the archives, into OUTDIR (default dist/). It prints the archives' paths.
#
# VERSION is a semantic version tag: vMAJOR.MINOR.PATCH or vMAJOR.MINOR.PATCH-PRE.
# It checks what it built: each binary is for its target (go version -m, and
# file(1) when present), and the binary for this machine runs and reports VERSION.
#
# Knobs:
#   RELEASE_TARGETS="linux/amd64 ..."  the targets (default: linux/amd64
#                                      linux/arm64 darwin/arm64 windows/amd64)
#
# Windows archives are .zip when zip(1) is present, else .tar.gz like the others.
#
# scripts/release.sh image VERSION [OUTDIR] builds the container image instead,
# without a container engine (deploy/image): static linux/amd64 and linux/arm64
# binaries in an OCI image index, as the OCI layout OUTDIR/cdc2delta_VERSION_image
# and its tar (an oci-archive). It prints both paths and the index digest.
# IMAGE_ARCHS="amd64" builds fewer architectures (default: amd64 arm64).
set -euo pipefail
# shellcheck source=scripts/setup/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/setup/lib.sh"

usage() { die "usage: scripts/release.sh [image] VERSION [OUTDIR] (VERSION like v1.2.3 or v1.2.3-rc.1)"; }
image=""
if [[ ${1:-} == image ]]; then
	image=1
	shift
fi
[[ $# -ge 1 && $# -le 2 ]] || usage
version=$1
num='(0|[1-9][0-9]*)'
pre='[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*'
[[ $version =~ ^v$num\.$num\.$num(-$pre)?$ ]] ||
	die "version \"$version\" is not a semantic version vMAJOR.MINOR.PATCH[-PRE] (e.g. v0.2.0, v1.0.0-rc.1)"

out=${2:-dist}
mkdir -p "$out"
out="$(cd "$out" && pwd)"
cd "$CDC2DELTA_ROOT"
targets=${RELEASE_TARGETS:-linux/amd64 linux/arm64 darwin/arm64 windows/amd64}
host="$(go env GOHOSTOS)/$(go env GOHOSTARCH)"
# Archive entries carry the release commit's time, so the same commit archives alike.
mtime=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}

# file_arch is what file(1) says of a binary for a target: a word to look for.
file_arch() {
	case $1 in
	linux/amd64) echo 'ELF 64-bit LSB executable, x86-64' ;;
	linux/arm64) echo 'ELF 64-bit LSB executable, ARM aarch64' ;;
	darwin/arm64) echo 'Mach-O 64-bit arm64 executable' ;;
	windows/amd64) echo 'PE32+ executable' ;;
	*) echo '' ;;
	esac
}

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
ldflags="-s -w -X github.com/cdc2delta/cdc2delta/internal/buildinfo.stamped=$version"

if [[ -n $image ]]; then
	layout="$out/cdc2delta_${version}_image"
	rm -rf "$layout" "$layout.tar"
	bins=()
	for arch in ${IMAGE_ARCHS:-amd64 arm64}; do
		log "building linux/$arch for the image"
		CGO_ENABLED=0 GOOS=linux GOARCH=$arch go build -trimpath -ldflags "$ldflags" -o "$stage/$arch/cdc2delta" ./cmd/cdc2delta
		bins+=(-binary "linux/$arch=$stage/$arch/cdc2delta")
	done
	log "assembling the image"
	(cd deploy && SOURCE_DATE_EPOCH=$mtime go run ./image -version "$version" "${bins[@]}" -out "$layout" -archive "$layout.tar")
	exit 0
fi
archives=()
for target in $targets; do
	goos=${target%/*} goarch=${target#*/}
	[[ $target == */* && -n $goos && -n $goarch ]] || die "target \"$target\" is not GOOS/GOARCH"
	name="cdc2delta_${version}_${goos}_${goarch}"
	exe=cdc2delta
	[[ $goos == windows ]] && exe=cdc2delta.exe
	mkdir -p "$stage/$name"
	bin="$stage/$name/$exe"
	log "building $name"
	CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -trimpath -ldflags "$ldflags" -o "$bin" ./cmd/cdc2delta

	# The binary is for its target and static.
	meta="$(go version -m "$bin")"
	grep -qx $'\tbuild\tGOOS='"$goos" <<<"$meta" || die "$bin: not built for GOOS=$goos"
	grep -qx $'\tbuild\tGOARCH='"$goarch" <<<"$meta" || die "$bin: not built for GOARCH=$goarch"
	grep -qx $'\tbuild\tCGO_ENABLED=0' <<<"$meta" || die "$bin: not built with CGO_ENABLED=0"
	if command -v file >/dev/null 2>&1 && [[ -n $(file_arch "$target") ]]; then
		file -b "$bin" | grep -qF "$(file_arch "$target")" ||
			die "$bin: file(1) says \"$(file -b "$bin")\", not $(file_arch "$target")"
	fi
	if [[ $target == "$host" ]]; then
		got="$("$bin" version)"
		[[ $got == "cdc2delta $version" || $got == "cdc2delta $version ("* ]] ||
			die "$bin version printed \"$got\", not cdc2delta $version"
	fi

	cp LICENSE README.md CHANGELOG.md "$stage/$name/"
	if [[ $goos == windows ]] && command -v zip >/dev/null 2>&1; then
		archive="$name.zip"
		rm -f "$out/$archive"
		(cd "$stage" && zip -qrX "$out/$archive" "$name")
	else
		archive="$name.tar.gz"
		(cd "$stage" && tar --sort=name --owner=0 --group=0 --numeric-owner \
			--mtime="@$mtime" -czf "$out/$archive" "$name")
	fi
	archives+=("$archive")
done

(cd "$out" && sha256sum "${archives[@]}" >SHA256SUMS && sha256sum --quiet -c SHA256SUMS)
for a in "${archives[@]}" SHA256SUMS; do echo "$out/$a"; done
