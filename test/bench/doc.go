// Package bench holds the scale benchmarks behind `make bench`: the real
// aws-cloud-controller-manager binary against a real kube-apiserver
// (internal/testbed) and the in-process AWS emulator (test/awsemu), which
// counts every EC2 call. The figures are those of /docs/benchmarks.md and
// are printed next to upstream's and the project's targets.
//
// Run with hack/bench.sh (make bench); the benchmarks run once each
// (-benchtime 1x) and share one control plane, one emulator and the 1,000
// Nodes registered by the first scenario. Each scenario starts its own CCM
// process, so its flags and peak RSS are its own.
package bench
