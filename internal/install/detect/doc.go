// Package detect fills, for `awsccmctl install apply`, what the user left
// out of the install values from the cluster and AWS: the Node count the
// CCM is sized for from the number of Nodes (counted with one List of limit
// 1), the AWS region from the Nodes' topology.kubernetes.io/region label,
// and the cluster ID from the cluster tag of a sample of the Nodes'
// instances (read as the CCM reads its own instance's, with
// internal/clustertag). It warns when the API server's version is outside
// the CCM's skew, logs where each value came from, and never overrides a
// value that was given.
package detect
