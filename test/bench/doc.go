// Package bench holds the scale benchmarks behind `make bench` and
// `make bench-compare`: the real aws-cloud-controller-manager binary, and
// upstream's when $AWS_CCM_UPSTREAM_BINARY names it, against a real
// kube-apiserver (internal/testbed) and the in-process AWS emulator
// (test/awsemu), which counts every AWS call. docs/benchmarks.md describes
// the scenarios and shows the figures.
//
// Run with hack/bench.sh (make bench) or hack/bench-compare.sh (make
// bench-compare); every scenario runs once per binary (-benchtime 1x). One
// control plane serves the whole run. plan_test.go lists the groups (a
// cluster size with a flag set: production defaults, or the sizing flags
// `awsccmctl install` renders) and their scenarios; each group starts from a
// new emulator and no Nodes, and within a group both binaries run each
// scenario on the same state, in alternating order. Each run starts its own
// CCM process, so its flags and memory are its own. The table (with
// upstream/this ratios) is printed at the end and written, with
// results.json, to $BENCH_OUT.
package bench
