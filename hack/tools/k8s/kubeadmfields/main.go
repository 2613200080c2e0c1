// Command kubeadmfields writes the field tree of the configuration kinds a
// kubeadm file holds, from kubeadm's own Go types (k8s.io/kubernetes, which
// the product cannot import): awsccmctl install kubeadm --merge decodes a
// user's file strictly against it, naming any field kubeadm would refuse.
// hack/gen-kubeadm-fields.sh runs it (this module: kubeadm.k8s.io/v1beta4
// and the component configurations of this Kubernetes version) and the one
// in hack/tools/kubeadm135 (kubeadm.k8s.io/v1beta3, removed in 1.36); both
// walk the types with hack/tools/fieldschema.
package main

import (
	"fmt"
	"os"

	kubeproxyv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm/v1beta4"

	"github.com/awsccmctl/awsccmctl/hack/tools/fieldschema"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: kubeadmfields OUTPUT.json")
		os.Exit(2)
	}
	kinds := map[string]map[string]any{
		"kubeadm.k8s.io/v1beta4": {
			"InitConfiguration":    v1beta4.InitConfiguration{},
			"ClusterConfiguration": v1beta4.ClusterConfiguration{},
			"JoinConfiguration":    v1beta4.JoinConfiguration{},
			"ResetConfiguration":   v1beta4.ResetConfiguration{},
			"UpgradeConfiguration": v1beta4.UpgradeConfiguration{},
		},
		"kubelet.config.k8s.io/v1beta1":    {"KubeletConfiguration": kubeletv1beta1.KubeletConfiguration{}},
		"kubeproxy.config.k8s.io/v1alpha1": {"KubeProxyConfiguration": kubeproxyv1alpha1.KubeProxyConfiguration{}},
	}
	if err := fieldschema.Write(os.Args[1], kinds); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
