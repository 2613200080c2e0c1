// Command kubeadmfields writes the field tree of kubeadm.k8s.io/v1beta3's
// configuration kinds from kubeadm 1.35's Go types, the last kubeadm that
// reads them; see hack/tools/k8s/kubeadmfields, which writes v1beta4's.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm/v1beta3"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: kubeadmfields OUTPUT.json")
		os.Exit(2)
	}
	s := schema(map[string]map[string]any{
		"kubeadm.k8s.io/v1beta3": {
			"InitConfiguration":    v1beta3.InitConfiguration{},
			"ClusterConfiguration": v1beta3.ClusterConfiguration{},
			"JoinConfiguration":    v1beta3.JoinConfiguration{},
		},
	})
	data, err := json.MarshalIndent(s, "", " ")
	if err == nil {
		err = os.WriteFile(os.Args[1], append(data, '\n'), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
