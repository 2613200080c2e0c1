#!/usr/bin/env bash
# make bench-compare: every scenario of make bench on this CCM and on
# upstream's aws-cloud-controller-manager v1.37.0 (hack/build-upstream.sh
# builds it once into _output/upstream), in one run: the same control plane,
# emulator state and flags, alternating which binary goes first. Sizes
# 100, 1,000 and 5,000 Nodes; the production defaults and the flags
# `awsccmctl install` renders. test/bench/plan_test.go bounds the run (about
# 40 minutes on 2 cores): the defaults run at 1,000 Nodes only; throttling,
# load balancers and routes at 1,000 only; 5,000 runs join, idle, lifecycle
# and preflight. The table (with ratios) is printed and written, with
# results.json, to $BENCH_OUT (default _output/bench-compare), and the chart
# of its join scenario to docs/benchmarks-chart.svg (BENCH_CHART), which
# docs/benchmarks.md shows with the table.
#
# Environment: as hack/bench.sh; BENCH_SIZES and BENCH_FLAG_SETS default to
# 100,1000,5000 and defaults,rendered here.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
AWS_CCM_UPSTREAM_BINARY=$(hack/build-upstream.sh | tail -n 1)
export AWS_CCM_UPSTREAM_BINARY
export BENCH_SIZES=${BENCH_SIZES:-100,1000,5000}
export BENCH_FLAG_SETS=${BENCH_FLAG_SETS:-defaults,rendered}
export BENCH_OUT=${BENCH_OUT:-$ROOT/_output/bench-compare}
export BENCH_TIMEOUT=${BENCH_TIMEOUT:-60m}
export BENCH_CHART=${BENCH_CHART:-$ROOT/docs/benchmarks-chart.svg}
exec hack/bench.sh
