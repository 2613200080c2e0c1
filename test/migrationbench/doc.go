// Package migrationbench measures `awsccmctl migrate-from-intree` on a
// cluster of many Nodes (BENCH_MIGRATION_NODES, 5,000 for the published
// figures, a few hundred in make test): `plan`, and an `apply` through the
// kubelet-external steps with the nodes played by report writes. It runs
// the CLI as a subprocess against the v1.26.13 kube-apiserver of the test
// bed, through a counting proxy that sees only the CLI's requests, and
// reports its wall time, peak RSS and the requests and bytes it caused.
// docs/benchmarks.md has the figures and the command.
package migrationbench
