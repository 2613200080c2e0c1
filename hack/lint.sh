#!/usr/bin/env bash
# golangci-lint (gofmt, go vet and the linters in .golangci.yml) over the
# module. golangci-lint is pinned in its own tools module so its ~200
# dependencies stay out of the product's version selection; `go tool` builds
# it once into the Go build cache and reuses it.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
lint() { go tool -modfile="$ROOT/hack/tools/golangci-lint/go.mod" golangci-lint "$@"; }
lint run "$@" ./...
# hack/benchchart is a module of its own (its plotting dependencies stay out
# of the product's go.mod), so ./... above does not reach it: the same
# linters, the same configuration.
(cd hack/benchchart && lint run --config ../../.golangci.yml "$@" ./...)
# Functions no program of the module calls (unused exported names
# included, which the linters above cannot see): hack/deadcode.sh.
hack/deadcode.sh
