package kubeadmconfig

import (
	"bytes"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/yaml"

	"github.com/awsccmctl/awsccmctl/internal/fielderr"
	"github.com/awsccmctl/awsccmctl/internal/kubeadmapi"
	"github.com/awsccmctl/awsccmctl/pkg/providerid"
)

// API versions of the kubeadm configuration this package writes (owned by
// kubeadmapi).
const (
	V1beta3 = kubeadmapi.V1beta3
	V1beta4 = kubeadmapi.V1beta4
)

// Options say what to render.
type Options struct {
	// KubernetesVersion of the cluster, e.g. v1.37.1 or 1.37 (normalised by
	// NormalizeVersion); it picks the API version and is written as
	// ClusterConfiguration.kubernetesVersion. Empty only with APIVersion
	// set: kubeadm then uses its own version.
	KubernetesVersion string
	// APIVersion overrides the choice (V1beta3 or V1beta4); it must be one
	// the kubeadm of KubernetesVersion reads.
	APIVersion string
	// NodeName is nodeRegistration.name for one node (kubeadm then passes
	// --hostname-override when it differs from the hostname); empty: not set.
	NodeName string
	// ProviderID is the kubelet's --provider-id for one node, in the
	// canonical form aws:///<zone>/<instance-id>; empty: not set (the CCM
	// finds the instance by the Node's name).
	ProviderID string
	// CredentialProvider, when set, gives the kubelet private ECR
	// credentials through ecr-credential-provider (credentialprovider.go).
	CredentialProvider *CredentialProvider
}

// Validate returns every problem with o at once.
func (o Options) Validate() error {
	_, errs := o.resolve()
	return errors.Join(errs...)
}

// resolved is Options after normalisation: what Render writes.
type resolved struct {
	apiVersion, kubernetesVersion string
}

// resolve normalises the Kubernetes version, picks or checks the API
// version, and checks the provider ID; it returns every problem.
func (o Options) resolve() (resolved, []error) {
	var r resolved
	var errs []error
	var kv *version.Version
	if o.KubernetesVersion != "" {
		n, err := NormalizeVersion(o.KubernetesVersion)
		if err != nil {
			errs = append(errs, err)
		} else {
			r.kubernetesVersion = n
			kv = version.MustParseSemantic(n)
		}
	}
	switch o.APIVersion {
	case V1beta3, V1beta4:
		r.apiVersion = o.APIVersion
		if kv != nil && !reads(kv, o.APIVersion) {
			errs = append(errs, fielderr.Errorf(FieldAPIVersion, " %s: kubeadm %d.%d does not read it (%s); leave --api-version out to pick the right one",
				o.APIVersion, kv.Major(), kv.Minor(), readers(o.APIVersion)))
		}
	case "":
		switch {
		case kv == nil && o.KubernetesVersion == "":
			errs = append(errs, fielderr.Errorf(FieldKubernetesVersion, ": required to pick the kubeadm API version (or set the API version)"))
		case kv == nil:
		case reads(kv, V1beta4):
			r.apiVersion = V1beta4
		case reads(kv, V1beta3):
			r.apiVersion = V1beta3
		default:
			errs = append(errs, fielderr.Errorf(FieldKubernetesVersion, " %s: kubeadm %d.%d reads neither %s (%s) nor %s (%s)",
				r.kubernetesVersion, kv.Major(), kv.Minor(), V1beta3, readers(V1beta3), V1beta4, readers(V1beta4)))
		}
	default:
		errs = append(errs, fielderr.Errorf(FieldAPIVersion, " %q: want %s or %s", o.APIVersion, V1beta3, V1beta4))
	}
	if err := ValidateProviderID(o.ProviderID); err != nil {
		errs = append(errs, err)
	}
	if o.CredentialProvider != nil {
		errs = append(errs, o.CredentialProvider.validate()...)
	}
	return r, errs
}

// ValidateProviderID checks a node's provider ID with the one rule every
// path uses (providerid.ParseCanonical): aws:///<zone>/<instance-id>. Empty
// is valid (not set). The error is a *fielderr.Error of FieldProviderID.
func ValidateProviderID(id string) error {
	if id == "" {
		return nil
	}
	if _, err := providerid.ParseCanonical(id); err != nil {
		return fielderr.Errorf(FieldProviderID, ": %w", err)
	}
	return nil
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

// clusterDocument is the ClusterConfiguration awsccmctl writes.
func clusterDocument(r resolved) clusterConfiguration {
	return clusterConfiguration{
		typeMeta:          typeMeta{r.apiVersion, "ClusterConfiguration"},
		KubernetesVersion: r.kubernetesVersion,
		// The route, service and node-lifecycle loops move to the CCM.
		// kube-apiserver needs nothing: it has no --cloud-provider from
		// 1.33 on, and before that leaving it unset is right.
		ControllerManager: component{ExtraArgs: args{asMap: !kubeadmapi.ArgsAreList(r.apiVersion), list: []arg{{"cloud-provider", "external"}}}},
	}
}

// marshalCluster is clusterDocument as YAML.
func marshalCluster(r resolved) ([]byte, error) { return yaml.Marshal(clusterDocument(r)) }

// Render returns the three documents — ClusterConfiguration,
// InitConfiguration, JoinConfiguration — to merge into the kubeadm
// configuration. They carry only what the external CCM needs; the rest of
// the configuration (discovery, certificates, networking) stays the user's.
func Render(o Options) ([]byte, error) {
	r, errs := o.resolve()
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	apiVersion := r.apiVersion
	asMap := !kubeadmapi.ArgsAreList(apiVersion)
	kubelet := args{asMap: asMap, list: o.kubeletArgs()}
	reg := nodeRegistration{Name: o.NodeName, KubeletExtraArgs: kubelet}
	docs := []any{
		clusterDocument(r),
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
