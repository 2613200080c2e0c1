#!/usr/bin/env bash
# golangci-lint (gofmt, go vet and the linters in .golangci.yml) over the
# module. golangci-lint is pinned in its own tools module so its ~200
# dependencies stay out of the product's version selection; `go tool` builds
# it once into the Go build cache and reuses it.
set -euo pipefail
cd "$(dirname "$0")/.."
exec go tool -modfile=hack/tools/golangci-lint/go.mod golangci-lint run "$@" ./...
