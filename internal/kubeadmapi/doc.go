// Package kubeadmapi is the one home of what awsccmctl knows about kubeadm's
// configuration API: its group and versions, and extraArgs, which v1beta2
// and v1beta3 write as a map of flag: value and v1beta4 as a list of
// {name, value} that may name a flag more than once.
//
// It is a leaf (yaml and encoding/json only) so that every user can import
// it without a cycle: install/kubeadmconfig renders and merges the user's
// kubeadm files, the migration's node phase (internal/migrate/nodephase)
// edits the ClusterConfiguration in kube-system/kubeadm-config, and
// preflight's drift check (internal/preflight/clusterchecks) reads it.
package kubeadmapi
