// Package clustertag is the one home of the cluster-tag contract: the EC2
// and ELB tag kubernetes.io/cluster/<cluster ID> with the value owned or
// shared, and the legacy (pre-1.6) tag KubernetesCluster=<cluster ID>.
//
// It is a wire contract and MUST NOT change. The in-tree AWS provider and
// upstream kubernetes/cloud-provider-aws (pkg/providers/v1/tags.go) write and
// read exactly these tags, and every existing cluster's instances, subnets,
// security groups, route tables and load balancers carry them: this CCM adopts
// those resources only because it recognises the same keys and values and
// derives the cluster ID from an instance's tags the same way upstream does.
// Renaming a key, accepting fewer values, or reading the cluster ID any other
// way orphans or, worse, adopts another cluster's resources.
//
// Every package that names the tag, builds it, filters by it or reads the
// cluster ID from it uses this package; nothing else spells the strings.
package clustertag
