# cdc2delta container image: a static binary on distroless, running as non-root.
#
#   docker build -t cdc2delta .
#   docker run --rm -v $PWD/cdc2delta.yaml:/etc/cdc2delta/cdc2delta.yaml:ro cdc2delta
#
# scripts/release.sh image builds the same image without Docker (deploy/image;
# its test checks that the user, paths, command and port below agree).
#
# scripts/setup/compose.sh runs the `go build` line below with the local Go
# toolchain in CI (no Docker engine there), so keep it on one line that starts
# with "RUN CGO_ENABLED=0 go build" and writes to /out/.

FROM golang:1.26.8-bookworm AS build
WORKDIR /src
# Modules first: this layer stays cached while only the sources change.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/cdc2delta ./cmd/cdc2delta
RUN mkdir -p /out/data

# static-debian12 has CA certificates (TLS to brokers, registry and S3) and
# tzdata, and nothing else: no shell, no package manager.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/cdc2delta /usr/local/bin/cdc2delta
# The user's writable directory, for memory.key_index_dir.
COPY --from=build --chown=65532:65532 /out/data /var/lib/cdc2delta
# 65532 is distroless's "nonroot" user; numeric so that Kubernetes'
# runAsNonRoot can verify it without reading /etc/passwd.
USER 65532:65532
# Prometheus /metrics, /healthz and /readyz (metrics.listen).
EXPOSE 9464
ENTRYPOINT ["/usr/local/bin/cdc2delta"]
CMD ["run", "--config", "/etc/cdc2delta/cdc2delta.yaml"]
