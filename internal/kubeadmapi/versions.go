package kubeadmapi

// Group is the API group of kubeadm's own configuration kinds.
const Group = "kubeadm.k8s.io"

// API versions of the kubeadm configuration.
const (
	V1beta2 = Group + "/v1beta2"
	V1beta3 = Group + "/v1beta3"
	V1beta4 = Group + "/v1beta4"
)

// KindClusterConfiguration is the kind, and the key in ConfigMap
// kube-system/kubeadm-config, of the cluster-wide configuration.
const KindClusterConfiguration = "ClusterConfiguration"

// ArgsAreList reports whether apiVersion writes extraArgs (and
// kubeletExtraArgs) as a list of {name, value}: v1beta4 does, the earlier
// versions write a map.
func ArgsAreList(apiVersion string) bool { return apiVersion == V1beta4 }
