#!/usr/bin/env bash
# Runs the scale benchmarks (test/bench): the aws-cloud-controller-manager
# binary against a real kube-apiserver and the in-process AWS emulator, which
# counts every EC2 call. Prints the figures next to upstream's and the
# targets (docs/benchmarks.md, /work/shared/targets.md). Fails if a scenario
# does not complete; a missed target is marked MISSES but does not fail.
#
# Environment: BENCH_NODES (default 1000) and BENCH_FAULT_SECONDS (60)
# shrink a run while developing; BENCH_OUT (default _output/bench) keeps
# the CCM logs and bench.log.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
start=$(date +%s)
hack/build.sh
hack/build-testbed.sh
export BENCH_OUT=${BENCH_OUT:-$ROOT/_output/bench}
export AWS_CCM_BINARY=$ROOT/_output/bin/aws-cloud-controller-manager
export CI=${CI:-1} # a missing test bed fails the run instead of skipping it
mkdir -p "$BENCH_OUT"
set +e
go test -run '^$' -bench . -benchtime 1x -timeout 30m ./test/bench/ 2>&1 | tee "$BENCH_OUT/bench.log"
rc=${PIPESTATUS[0]}
set -e
echo "make bench: $(( $(date +%s) - start )) s; output and CCM logs in $BENCH_OUT"
exit "$rc"
