#!/usr/bin/env bash
# Runs the scale benchmarks (test/bench): the aws-cloud-controller-manager
# binary against a real kube-apiserver and the in-process AWS emulator, which
# counts every EC2 call. With AWS_CCM_UPSTREAM_BINARY set (make bench-compare
# sets it), every scenario runs on upstream's binary too, in the same run,
# and the table shows both and their ratio. Fails if a scenario does not
# complete; a missed target is marked MISSES but does not fail.
#
# Environment:
#   BENCH_SIZES           cluster sizes, e.g. 100,1000,5000 (default: BENCH_NODES, 1000)
#   BENCH_FLAG_SETS       rendered (default) and/or defaults: install's sizing
#                         flags, the binaries' production defaults
#   BENCH_FAULT_SECONDS   throttling window (60), BENCH_LB_SERVICES (10 + 10)
#   BENCH_OUT             output folder (default _output/bench): the binaries
#                         measured (bin/), CCM logs, bench.log, table.md,
#                         results.json
#   BENCH_TIMEOUT         go test -timeout (default 30m)
#   BENCH_CHART           the chart of the join scenario (calls, seconds and
#                         memory against Nodes, every binary and flag set),
#                         drawn from results.json by hack/benchchart (default
#                         $BENCH_OUT/benchmarks-chart.svg; make bench-compare:
#                         docs/benchmarks-chart.svg, the chart
#                         docs/benchmarks.md shows next to that run's table)
#   AWS_CCM_UPSTREAM_BINARY  upstream's binary (hack/build-upstream.sh)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
start=$(date +%s)
export BENCH_OUT=${BENCH_OUT:-$ROOT/_output/bench}
# The binaries measured are built into the output folder, so that a build
# into _output/bin during the run (make build, another bench) cannot swap
# them under it.
OUT=$BENCH_OUT/bin hack/build.sh
hack/build-testbed.sh
export AWS_CCM_BINARY=$BENCH_OUT/bin/aws-cloud-controller-manager
export AWSCCMCTL_BINARY=$BENCH_OUT/bin/awsccmctl
export CI=${CI:-1} # a missing test bed fails the run instead of skipping it
mkdir -p "$BENCH_OUT"
set +e
go test -run '^$' -bench . -benchtime 1x -timeout "${BENCH_TIMEOUT:-30m}" ./test/bench/ 2>&1 | tee "$BENCH_OUT/bench.log"
rc=${PIPESTATUS[0]}
set -e
if [ -s "$BENCH_OUT/results.json" ]; then
	label=upstream
	if [ -n "${AWS_CCM_UPSTREAM_BINARY:-}" ] && [ -s "$AWS_CCM_UPSTREAM_BINARY.version" ]; then
		label="upstream $(cat "$AWS_CCM_UPSTREAM_BINARY.version")"
	fi
	# hack/benchchart is its own module (gonum/plot stays out of the
	# product's go.mod): built there, run from here so relative paths hold.
	go -C hack/benchchart build -o "$BENCH_OUT/bin/benchchart" . &&
		"$BENCH_OUT/bin/benchchart" -in "$BENCH_OUT/results.json" -out "${BENCH_CHART:-$BENCH_OUT/benchmarks-chart.svg}" \
			-scenario join -upstream-label "$label" || rc=1
fi
echo "bench: $(( $(date +%s) - start )) s; output, CCM logs, table.md and results.json in $BENCH_OUT"
exit "$rc"
