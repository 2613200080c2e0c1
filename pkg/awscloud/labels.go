package awscloud

// Names that are wire contracts shared with the in-tree provider and the
// upstream CCM. They MUST NOT change.
const (
	// ProviderName is the cloud provider name (--cloud-provider=aws).
	ProviderName = "aws"
	// ZoneIDLabel carries the AZ ID (use1-az1), stable across accounts.
	ZoneIDLabel = "topology.k8s.aws/zone-id"
	// ClusterTagPrefix + cluster ID is the tag key marking cluster resources.
	ClusterTagPrefix = "kubernetes.io/cluster/"
	// LegacyClusterTag is the pre-1.6 cluster tag key; its value is the ID.
	LegacyClusterTag = "KubernetesCluster"
)

// Event reasons on Nodes (stable: users alert on them).
const (
	ReasonNodeNotResolvable  = "AWSInstanceNotResolvable"
	ReasonInstanceNotFound   = "AWSInstanceNotFound"
	ReasonInstanceAbsent     = "AWSInstanceAbsent"
	ReasonInvalidProviderID  = "AWSInvalidProviderID"
	ReasonInstanceTerminated = "AWSInstanceTerminated"
)
