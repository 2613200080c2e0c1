package kubeadmconfig

import (
	"errors"
	"fmt"
	"slices"

	yaml "go.yaml.in/yaml/v3"

	"github.com/awsccmctl/awsccmctl/internal/kubeadmapi"
)

// Check reads a kubeadm configuration (what Merge returns, or a file a user
// merged by hand) and reports every way it fails to run the external CCM as
// o asks: each ClusterConfiguration must give kube-controller-manager
// --cloud-provider=external, each InitConfiguration and JoinConfiguration
// the kubelet --cloud-provider=external (and o's provider ID and node name),
// with extraArgs in the shape of the file's API version.
func Check(data []byte, o Options) error {
	docs, err := splitDocuments(data)
	if err != nil {
		return err
	}
	var errs []error
	found := false
	for i, d := range docs {
		if d.node == nil || (d.apiVersion != V1beta3 && d.apiVersion != V1beta4) {
			continue
		}
		asMap := d.apiVersion == V1beta3
		root := d.node.Content[0]
		switch d.kind {
		case kindCluster:
			found = true
			errs = append(errs, checkArgs(d.name(i), "controllerManager.extraArgs", kubeadmapi.MapValue(kubeadmapi.MapValue(root, "controllerManager"), "extraArgs"), asMap, argCloudProvider, external)...)
		case kindInit, kindJoin:
			found = true
			reg := kubeadmapi.MapValue(root, "nodeRegistration")
			kargs := kubeadmapi.MapValue(reg, "kubeletExtraArgs")
			errs = append(errs, checkArgs(d.name(i), "nodeRegistration.kubeletExtraArgs", kargs, asMap, argCloudProvider, external)...)
			if o.ProviderID != "" {
				errs = append(errs, checkArgs(d.name(i), "nodeRegistration.kubeletExtraArgs", kargs, asMap, argProviderID, o.ProviderID)...)
			}
			if o.NodeName != "" && kubeadmapi.Scalar(kubeadmapi.MapValue(reg, "name")) != o.NodeName {
				errs = append(errs, fmt.Errorf("%s: nodeRegistration.name is %q, want %q", d.name(i), kubeadmapi.Scalar(kubeadmapi.MapValue(reg, "name")), o.NodeName))
			}
		}
	}
	if !found {
		errs = append(errs, errors.New("no kubeadm Init, Join or ClusterConfiguration in the file"))
	}
	return errors.Join(errs...)
}

// checkArgs: n (an extraArgs field) gives flag exactly value, in the shape
// of the API version.
func checkArgs(doc, path string, n *yaml.Node, asMap bool, flag, value string) []error {
	switch {
	case n == nil:
		return []error{fmt.Errorf("%s: %s has no %s", doc, path, flag)}
	case asMap && n.Kind != yaml.MappingNode, !asMap && n.Kind != yaml.SequenceNode:
		return []error{fmt.Errorf("%s: %s has the wrong shape for its API version", doc, path)}
	}
	vals := kubeadmapi.NodeValues(n, flag)
	if len(vals) == 0 || slices.ContainsFunc(vals, func(v string) bool { return v != value }) {
		return []error{fmt.Errorf("%s: %s %s is %q, want %q", doc, path, flag, vals, value)}
	}
	return nil
}
