#!/usr/bin/env bash
# scripts/check-deploy.sh checks what deploy/ ships, with no server or cluster:
#   - the Helm chart: helm template (helm built by scripts/setup/helm.sh) with the
#     default and the full values, every manifest decoded strictly into its
#     Kubernetes API type, bad values refused by values.schema.json;
#   - the image builder (deploy/image) and its agreement with the Dockerfile;
#   - the alert rules: promtool test rules (promtool from scripts/setup/prometheus.sh).
# deploy/ is a Go module of its own: the product's `go test ./...` does not reach it.
set -euo pipefail
# shellcheck source=scripts/setup/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/setup/lib.sh"
CDC2DELTA_HELM="$(bash "$CDC2DELTA_ROOT/scripts/setup/helm.sh" fetch)"
export CDC2DELTA_HELM
bash "$CDC2DELTA_ROOT/scripts/setup/prometheus.sh" fetch >/dev/null
cd "$CDC2DELTA_ROOT/deploy"
go vet ./...
go test -count=1 "$@" ./...
promtool check rules prometheus/alerts.yml
promtool test rules prometheus/alerts_test.yml
