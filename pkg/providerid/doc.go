// Package providerid formats and parses the AWS node providerID.
//
// The format `aws:///<availability-zone>/<instance-id>` is a wire contract: it
// is stored in every Node's spec.providerID by the in-tree provider, the
// upstream cloud-provider-aws CCM and this one. It MUST NOT change, or existing
// Nodes would no longer match their instances.
package providerid
