// Package kubeadmconfig renders the kubeadm configuration that runs a
// cluster with the external AWS cloud-controller-manager: the kubelet's
// --cloud-provider=external (and, per node, its name and providerID) in
// InitConfiguration and JoinConfiguration, and kube-controller-manager's
// --cloud-provider=external in ClusterConfiguration, so that `kubeadm
// upgrade` keeps them.
//
// The API version follows kubeadm's support matrix: kubeadm.k8s.io/v1beta3
// (map-style extraArgs) up to Kubernetes 1.30, v1beta4 (list-style) from
// 1.31, when kubeadm began writing it; kubeadm 1.37 reads nothing older.
//
// LocalKubeadmVersion and ReadNodeIdentity look up the inputs a command
// leaves out: the version of the kubeadm on PATH, and the node's instance,
// zone and host name from the instance metadata service.
package kubeadmconfig
