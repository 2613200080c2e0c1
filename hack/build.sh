#!/usr/bin/env bash
# Builds aws-cloud-controller-manager, awsccmctl and ecr-credential-provider
# (static: it runs on the nodes' hosts) into _output/bin, with the version
# stamped from git.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT=${OUT:-$ROOT/_output/bin}
# VERSION, COMMIT, LDFLAGS
. "$ROOT/hack/lib/version.sh"
mkdir -p "$OUT"
for cmd in aws-cloud-controller-manager awsccmctl ecr-credential-provider; do
	CGO_ENABLED=0 go build -trimpath -ldflags "$LDFLAGS" -o "$OUT/$cmd" "./cmd/$cmd"
done
CGO_ENABLED=0 go build -trimpath -o "$OUT/aws-emulator" ./test/awsemu/cmd/aws-emulator
echo "built into $OUT: aws-cloud-controller-manager awsccmctl ecr-credential-provider aws-emulator"
