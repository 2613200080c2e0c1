#!/usr/bin/env bash
# Measures `awsccmctl migrate-from-intree` on a cluster of many Nodes
# (test/migrationbench): `plan`, then an `apply` through every
# kubelet-external step, the nodes played by report writes, against the
# v1.26.13 kube-apiserver of the test bed. The CLI runs as a subprocess
# behind a counting proxy; the figures (wall time, CPU, peak RSS, requests
# and bytes, per minute) are printed and written to
# $BENCH_OUT/migration-<nodes>.txt. docs/benchmarks.md has the published
# run.
#
# Environment:
#   BENCH_MIGRATION_NODES        Nodes, 3 of them control-plane (default 5000)
#   BENCH_MIGRATION_REPORT_RATE  node reports per second during the kubelet
#                                steps (default 30)
#   BENCH_OUT                    output folder (default _output/bench-migration):
#                                the CLI measured (bin/), migration-<nodes>.txt,
#                                bench.log
#   BENCH_TIMEOUT                go test -timeout (default 30m)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
start=$(date +%s)
export BENCH_OUT=${BENCH_OUT:-$ROOT/_output/bench-migration}
export BENCH_MIGRATION_NODES=${BENCH_MIGRATION_NODES:-5000}
# The CLI measured is built into the output folder, so that another build
# into _output/bin during the run cannot swap it.
OUT=$BENCH_OUT/bin hack/build.sh
hack/build-testbed.sh
export AWSCCMCTL_BINARY=$BENCH_OUT/bin/awsccmctl
export CI=${CI:-1} # a missing test bed fails the run instead of skipping it
mkdir -p "$BENCH_OUT"
set +e
go test -count=1 -v -run '^TestMigrationAtScale$' -timeout "${BENCH_TIMEOUT:-30m}" ./test/migrationbench/ 2>&1 | tee "$BENCH_OUT/bench.log"
rc=${PIPESTATUS[0]}
set -e
echo "bench-migration: $(( $(date +%s) - start )) s; figures in $BENCH_OUT/migration-$BENCH_MIGRATION_NODES.txt"
exit "$rc"
