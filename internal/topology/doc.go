// Package topology reads the EC2 instance topology of joining Nodes
// (DescribeInstanceTopology: the network nodes between an instance and the
// spine, which the CCM sets as topology.k8s.aws/network-node-layer-N
// labels).
//
// It is not part of the instance view: topology is asked once per Node, at
// initialization, for a few instance families only, and a type without
// topology is remembered for 24 hours (as upstream does) while instances
// are re-observed every few seconds. What it shares with the view is how it
// talks to EC2: concurrent Nodes are coalesced into one call per 100
// instance IDs (package coalesce), paged by EC2's default of 20. Of a type
// that is not required and not yet listed by EC2, one instance is asked
// about first and answers for the others, so a fleet of a type without
// topology costs one call however many Nodes join at once.
//
// The cloud config's SupportedTopologyInstanceTypePattern decides what a
// missing answer means. For a matching type an answer is required: no
// answer, or a failed call, is an error, and the node controller retries
// the Node, which stays uninitialized. Any other type is asked too, because
// EC2 adds topology support to new types; a type EC2 lists nothing for is
// remembered as unsupported for 24 hours, and a failed call only costs the
// Node its labels, never its initialization: the operator did not ask for
// them and EC2 almost never has them.
//
// A denied call (UnauthorizedOperation: the role lacks
// ec2:DescribeInstanceTopology) blocks no Node, of any type: the permission
// is optional, and an operator who left it out expects Nodes to join
// without the labels rather than stay uninitialized. The denial is
// remembered for DeniedFor (5 minutes; upstream remembers it for 24 hours),
// a required type's lookup answers *DeniedError so the caller can tell the
// Node why it has no labels, and Metrics count every Node left without them.
package topology
