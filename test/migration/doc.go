// Package migration is the end-to-end test of `awsccmctl migrate-from-intree`
// on the real in-tree path: kube-apiserver and kube-controller-manager
// v1.26.13 (the last with --cloud-provider=aws), the in-tree provider's
// aws-sdk-go v1 clients pointed at the AWS emulator, kube-controller-manager
// run from its static Pod manifest on a fake node root by the test bed's
// static-Pod runner (so the node step edits real manifests and the
// cluster-side gates read real mirror Pods), and this project's CCM run from
// the rendered DaemonSet's command line with its ServiceAccount's token.
package migration
