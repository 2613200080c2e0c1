package kubeadmconfig

import (
	"bytes"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/yaml"

	"github.com/awsccmctl/awsccmctl/pkg/providerid"
)

// API versions of the kubeadm configuration.
const (
	V1beta3 = "kubeadm.k8s.io/v1beta3"
	V1beta4 = "kubeadm.k8s.io/v1beta4"
)

// v1beta4Since is the first Kubernetes minor whose kubeadm writes v1beta4.
var v1beta4Since = version.MajorMinor(1, 31)

// Options say what to render.
type Options struct {
	// KubernetesVersion of the cluster, e.g. v1.37.1; it picks the API
	// version and is written as ClusterConfiguration.kubernetesVersion.
	KubernetesVersion string
	// APIVersion overrides the choice (V1beta3 or V1beta4).
	APIVersion string
	// NodeName is nodeRegistration.name for one node (kubeadm then passes
	// --hostname-override when it differs from the hostname); empty: not set.
	NodeName string
	// ProviderID is the kubelet's --provider-id for one node; empty: not
	// set (the CCM finds the instance by the Node's name).
	ProviderID string
}

// Validate returns every problem with o at once.
func (o Options) Validate() error {
	var errs []error
	if _, err := o.apiVersion(); err != nil {
		errs = append(errs, err)
	}
	if o.ProviderID != "" {
		id, err := providerid.Parse(o.ProviderID)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("provider ID: %w", err))
		case id.Zone == "" || id.String() != o.ProviderID:
			errs = append(errs, fmt.Errorf("provider ID %q: want aws:///<zone>/<instance-id>", o.ProviderID))
		}
	}
	return errors.Join(errs...)
}

func (o Options) apiVersion() (string, error) {
	switch o.APIVersion {
	case V1beta3, V1beta4:
		return o.APIVersion, nil
	case "":
	default:
		return "", fmt.Errorf("kubeadm API version %q: want %s or %s", o.APIVersion, V1beta3, V1beta4)
	}
	v, err := version.ParseGeneric(o.KubernetesVersion)
	if err != nil {
		return "", fmt.Errorf("kubernetes version %q: %w", o.KubernetesVersion, err)
	}
	if v.LessThan(v1beta4Since) {
		return V1beta3, nil
	}
	return V1beta4, nil
}

// args is an ordered flag list that marshals the way the API version
// wants: a map in v1beta3, a list of {name, value} in v1beta4.
type args struct {
	list  []arg
	asMap bool
}

type arg struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

func (a args) MarshalJSON() ([]byte, error) {
	if !a.asMap {
		return yamlJSON(a.list)
	}
	m := make(map[string]string, len(a.list))
	for _, x := range a.list {
		m[x.Name] = x.Value
	}
	return yamlJSON(m)
}

func yamlJSON(v any) ([]byte, error) {
	b, err := yaml.Marshal(v)
	if err != nil {
		return nil, err
	}
	return yaml.YAMLToJSON(b)
}

type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

type nodeRegistration struct {
	Name             string `json:"name,omitempty"`
	KubeletExtraArgs args   `json:"kubeletExtraArgs"`
}

type nodeConfiguration struct {
	typeMeta         `json:",inline"`
	NodeRegistration nodeRegistration `json:"nodeRegistration"`
}

type component struct {
	ExtraArgs args `json:"extraArgs"`
}

type clusterConfiguration struct {
	typeMeta          `json:",inline"`
	KubernetesVersion string    `json:"kubernetesVersion,omitempty"`
	ControllerManager component `json:"controllerManager"`
}

// Render returns the three documents — ClusterConfiguration,
// InitConfiguration, JoinConfiguration — to merge into the kubeadm
// configuration. They carry only what the external CCM needs; the rest of
// the configuration (discovery, certificates, networking) stays the user's.
func Render(o Options) ([]byte, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	apiVersion, _ := o.apiVersion()
	asMap := apiVersion == V1beta3
	kubelet := args{asMap: asMap, list: []arg{{"cloud-provider", "external"}}}
	if o.ProviderID != "" {
		kubelet.list = append(kubelet.list, arg{"provider-id", o.ProviderID})
	}
	reg := nodeRegistration{Name: o.NodeName, KubeletExtraArgs: kubelet}
	docs := []any{
		clusterConfiguration{
			typeMeta:          typeMeta{apiVersion, "ClusterConfiguration"},
			KubernetesVersion: o.KubernetesVersion,
			// The route, service and node-lifecycle loops move to the CCM.
			// kube-apiserver needs nothing: it has no --cloud-provider from
			// 1.33 on, and before that leaving it unset is right.
			ControllerManager: component{ExtraArgs: args{asMap: asMap, list: []arg{{"cloud-provider", "external"}}}},
		},
		nodeConfiguration{typeMeta: typeMeta{apiVersion, "InitConfiguration"}, NodeRegistration: reg},
		nodeConfiguration{typeMeta: typeMeta{apiVersion, "JoinConfiguration"}, NodeRegistration: reg},
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "# Written by awsccmctl for the external AWS cloud-controller-manager (apiVersion %s).\n", apiVersion)
	out.WriteString("# Merge each document into the configuration given to kubeadm init / kubeadm join --config:\n")
	out.WriteString("# ClusterConfiguration once per cluster, InitConfiguration on the first control-plane node,\n")
	out.WriteString("# JoinConfiguration on every other node. Keep it in kubeadm-config so that kubeadm upgrade keeps it.\n")
	for i, d := range docs {
		b, err := yaml.Marshal(d)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			out.WriteString("---\n")
		}
		out.Write(b)
	}
	return out.Bytes(), nil
}
