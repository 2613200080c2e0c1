#!/usr/bin/env bash
# Builds aws-cloud-controller-manager and awsccmctl into _output/bin, with
# the version stamped from git.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT=${OUT:-$ROOT/_output/bin}
VERSION=$(git describe --tags --always --dirty 2>/dev/null || echo v0.0.0-dev)
COMMIT=$(git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS="-s -w -X github.com/awsccmctl/awsccmctl/internal/version.gitVersion=$VERSION -X github.com/awsccmctl/awsccmctl/internal/version.gitCommit=$COMMIT"
mkdir -p "$OUT"
for cmd in aws-cloud-controller-manager awsccmctl; do
	CGO_ENABLED=0 go build -trimpath -ldflags "$LDFLAGS" -o "$OUT/$cmd" "./cmd/$cmd"
done
CGO_ENABLED=0 go build -trimpath -o "$OUT/aws-emulator" ./test/awsemu/cmd/aws-emulator
echo "built into $OUT: aws-cloud-controller-manager awsccmctl aws-emulator"
