// Package clusterchecks holds the cluster-mode checks of `awsccmctl
// preflight`: what the Kubernetes API says about a cluster's readiness for
// the external AWS cloud-controller-manager. It reads the server version, the
// control plane's mirror Pods (kubeadm's `component=` and kops's `k8s-app=`
// labels) and ConfigMap kube-system/kubeadm-config, every Node, every Pod,
// the Leases in kube-system, PersistentVolumes and StorageClasses (and
// CSIDrivers and CSINodes when EBS is in use), and each kubelet's live
// configuration (/configz through nodes/proxy, when RBAC allows it).
//
// Checks builds the list for one mode. The control-plane rules are node
// mode's (package nodechecks), applied to the flags of the mirror Pods
// instead of the manifest files; cluster mode never runs with node mode, so
// they keep node mode's check IDs.
//
// The checks only read (get and list; one SelfSubjectAccessReview asks
// whether nodes/proxy may be read). Each kind of object is read once per
// Checks call, lazily, by whichever check needs it first, and shared by the
// others: a cluster with 1,000 Nodes costs two pages of one Node list
// (pages of 500), not one list per check.
package clusterchecks
