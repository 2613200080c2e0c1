// Command kubeadmfields writes the field tree of kubeadm.k8s.io/v1beta3's
// configuration kinds from kubeadm 1.35's Go types, the last kubeadm that
// reads them; see hack/tools/k8s/kubeadmfields, which writes v1beta4's.
package main

import (
	"fmt"
	"os"

	"k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm/v1beta3"

	"github.com/awsccmctl/awsccmctl/hack/tools/fieldschema"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: kubeadmfields OUTPUT.json")
		os.Exit(2)
	}
	kinds := map[string]map[string]any{
		"kubeadm.k8s.io/v1beta3": {
			"InitConfiguration":    v1beta3.InitConfiguration{},
			"ClusterConfiguration": v1beta3.ClusterConfiguration{},
			"JoinConfiguration":    v1beta3.JoinConfiguration{},
		},
	}
	if err := fieldschema.Write(os.Args[1], kinds); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
