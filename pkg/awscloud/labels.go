package awscloud

// Names that are wire contracts shared with the in-tree provider and the
// upstream CCM. They MUST NOT change. (The cluster tag's home is package
// internal/clustertag.)
const (
	// ProviderName is the cloud provider name (--cloud-provider=aws).
	ProviderName = "aws"
	// ZoneIDLabel carries the AZ ID (use1-az1), stable across accounts.
	ZoneIDLabel = "topology.k8s.aws/zone-id"
	// NetworkNodeLabelPrefix + N (from 1, the layer nearest the spine)
	// carries the instance's network node of layer N.
	NetworkNodeLabelPrefix = "topology.k8s.aws/network-node-layer-"
)

// Event reasons on Nodes (stable: users alert on them).
const (
	ReasonNodeNotResolvable  = "AWSInstanceNotResolvable"
	ReasonInstanceNotFound   = "AWSInstanceNotFound"
	ReasonInstanceAbsent     = "AWSInstanceAbsent"
	ReasonInvalidProviderID  = "AWSInvalidProviderID"
	ReasonInstanceTerminated = "AWSInstanceTerminated"
	// ReasonNodeDeletionWithheld: the node deletion breaker keeps a Node
	// whose instance is missing because too many are missing at once.
	ReasonNodeDeletionWithheld = "AWSNodeDeletionWithheld"
	// ReasonTopologyMissing: a Node whose instance type must have an
	// instance topology (SupportedTopologyInstanceTypePattern) has none
	// yet; it stays uninitialized.
	ReasonTopologyMissing = "AWSInstanceTopologyMissing"
	// ReasonTopologyDenied: such a Node is initialized without its
	// network-node labels because the CCM may not call
	// ec2:DescribeInstanceTopology.
	ReasonTopologyDenied = "AWSInstanceTopologyDenied"
)
