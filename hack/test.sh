#!/usr/bin/env bash
# Runs every test: unit tests and the integration tests against a real
# kube-apiserver + etcd (built by hack/build-testbed.sh, reused when cached)
# and the AWS emulator. With CI set, integration tests fail rather than skip
# when the test bed is missing.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
start=$(date +%s)
hack/build-testbed.sh
hack/lint.sh
hack/verify.sh
# -race everywhere: the instance view, the emulator and the CCM are
# concurrent, and the integration tests run the CCM in-process.
go test -race -count=1 -timeout 20m ${GOTEST_FLAGS:-} ./...
echo "make test: $(( $(date +%s) - start )) s"
