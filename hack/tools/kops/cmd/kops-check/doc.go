// Command kops-check validates a kops Cluster (and its InstanceGroups) the
// way `kops edit cluster --set` of kops v1.31.0 does, offline, and prints
// what kops would make of it as JSON.
//
// It exists so awsccmctl's tests can check the cluster-spec edits the
// migration plan writes for kops clusters with kops' own code rather than
// with our reading of kops. It lives in its own module
// (hack/tools/kops) because kops 1.31 builds against k8s.io/* v0.31 and
// every cloud's SDK; inside the product module it would be compiled against
// the product's k8s.io/* and drag those SDKs in.
//
// Usage:
//
//	kops-check -f cluster.yaml [--set spec.path=value ...]
//
// cluster.yaml holds a kops.k8s.io/v1alpha2 Cluster and, separated by "---",
// its InstanceGroups ("-" reads stdin). Each --set is applied as
// `kops edit cluster --set` applies it (a "cluster." prefix is accepted).
//
// The stages, in kops' order: a strict decode (kops' own decoder drops
// unknown fields silently; kops edit finds them by a round trip, which
// hand-written YAML would fail on unrelated fields), the --set edits,
// PerformAssignments, PopulateClusterSpec (which validates the input and
// the completed spec), DeepValidate with the InstanceGroups, and the update
// checks kops' state store runs (ValidateClusterUpdate). Then kops'
// aws-cloud-controller add-on template is rendered from the populated spec
// with kops' template functions, for the image and args kops would run.
//
// Output (stdout, JSON): "valid", the failing "stage" and kops' "errors"
// (field paths as kops names them) when invalid; otherwise the populated
// spec's cloud-provider fields and cloudControllerManager block, and the
// rendered add-on's image and args. Exit status: 0 valid, 1 invalid input
// (kops' messages also on stderr), 2 usage or internal errors. kops' logs
// (klog) go to stderr.
//
// Offline: no registry lookups (the ImageDigest feature flag is off), an
// in-memory state store, a mock AWS cloud for the assignments and the
// options builders, and no cloud for DeepValidate (kops create cluster
// passes none either; with the mock it would call EC2).
package main
