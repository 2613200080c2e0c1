#!/usr/bin/env bash
# Runs the AWS cloud-controller-manager binary against a local control plane
# (real kube-apiserver + etcd) and the AWS emulator, registers Nodes as
# kubelets would, and prints what the CCM did and how many AWS calls it
# made. The logic is in hack/demo (Go); this script only builds.
#
# Logs (CCM, emulator, apiserver, etcd) stay in _output/demo afterwards.
# Extra arguments go to the demo program (e.g. --timeout=90s).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
# Build output goes to stderr so stdout carries only the report.
hack/build.sh >&2
hack/build-testbed.sh >&2
mkdir -p _output/demo
go build -o _output/demo/demo ./hack/demo
# exec: the demo gets Ctrl-C directly and tears everything down itself.
exec _output/demo/demo --bin-dir _output/bin --fixture test/awsemu/testdata/demo.yaml --state-dir _output/demo "$@"
