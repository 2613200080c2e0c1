// Package iampolicy chooses and renders the IAM policy documents `awsccmctl
// install iam` prints, by the role that needs them: the CCM's
// (control-plane, optionally scoped to the cluster's tagged resources), the
// nodes' and preflight's. The documents themselves come from the registry
// of AWS actions in internal/awsapi, which also generates iam/.
package iampolicy
