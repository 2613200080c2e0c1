// Package kops checks the migration plan's kops path with kops' own code.
//
// On a kops cluster `migrate-from-intree plan` writes cluster-spec edits
// (`kops edit cluster --set ...`) and kops commands instead of node phases
// (spec.kops of the plan). These tests build plans for kops 1.26- and
// 1.31-style clusters still on the in-tree provider, apply each step's
// edits exactly as its command says, in the plan's order, and run each
// result through kops-check (hack/tools/kops: kops v1.31.0's validation,
// spec population and CCM add-on, offline, built by hack/build-testbed.sh).
// They assert on the spec kops populates, because kops validates a
// kube-controller-manager left on `aws` next to the CCM add-on without a
// word: the cut-over must make every component external itself, and a
// plan whose cut-over omitted one such edit fails here.
//
// kops-check is a test-bed binary: without it these tests skip, or fail
// when $CI is set.
package kops
