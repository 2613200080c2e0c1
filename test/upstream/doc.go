// Package upstream runs this CCM and upstream's aws-cloud-controller-manager
// (kubernetes/cloud-provider-aws v1.37.0, built by hack/build-upstream.sh)
// in turn against one AWS emulator and one real kube-apiserver, and
// compares what each writes where the two must agree to the byte: the
// Node addresses, which a cluster moving between the two would otherwise
// have rewritten on every Node.
//
// The binaries: this CCM is built from the tree at the start; upstream's is
// $AWS_CCM_UPSTREAM_BINARY or <repo>/_output/upstream/aws-cloud-controller-manager.
// Without it the tests skip, and fail when $CI is set (hack/test.sh builds
// it, cached). The test bed's rules are internal/testbed's.
package upstream
