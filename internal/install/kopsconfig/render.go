package kopsconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/awsccmctl/awsccmctl/internal/fielderr"
	"github.com/awsccmctl/awsccmctl/internal/install"
)

// Options say what to render.
type Options struct {
	// ClusterName is the kops cluster name (a DNS name), required.
	ClusterName string
	// Image is the CCM image kops should run, required.
	Image string
	// ConfigureCloudRoutes, AllocateNodeCIDRs and ClusterCIDR override
	// kops' choices (kops derives them from the networking: cloud routes
	// only for kubenet); nil/empty leaves kops' defaults.
	ConfigureCloudRoutes *bool
	AllocateNodeCIDRs    *bool
	ClusterCIDR          string
}

// The fields of Options as Validate's problems (*fielderr.Error) name them;
// the image's problems name install's field "image".
const (
	FieldClusterName          = "cluster name"
	FieldClusterCIDR          = "cluster CIDR"
	FieldConfigureCloudRoutes = "configure cloud routes"
)

// Validate returns every problem with o at once, each a *fielderr.Error.
func (o Options) Validate() error {
	var errs []error
	switch o.ClusterName {
	case "":
		errs = append(errs, fielderr.Errorf(FieldClusterName, ": required (the kops cluster name, as `kops get clusters` lists it)"))
	default:
		for _, m := range validation.IsDNS1123Subdomain(o.ClusterName) {
			errs = append(errs, fielderr.Errorf(FieldClusterName, " %q: %s", o.ClusterName, m))
		}
	}
	// The same rule as every install target's.
	if err := install.ValidateImage(o.Image); err != nil {
		errs = append(errs, err)
	}
	if o.ClusterCIDR != "" {
		if _, err := netip.ParsePrefix(o.ClusterCIDR); err != nil {
			errs = append(errs, fielderr.Errorf(FieldClusterCIDR, " %q: %w", o.ClusterCIDR, err))
		}
	}
	if o.ConfigureCloudRoutes != nil && *o.ConfigureCloudRoutes && o.ClusterCIDR == "" {
		errs = append(errs, fielderr.Errorf(FieldConfigureCloudRoutes, ": needs the cluster CIDR (the pod CIDR routes are made for)"))
	}
	return errors.Join(errs...)
}

// CloudControllerManager is the part of kops' CloudControllerManagerConfig
// (spec.cloudControllerManager) awsccmctl sets; the JSON names are kops'.
type CloudControllerManager struct {
	Image                string `json:"image"`
	AllocateNodeCIDRs    *bool  `json:"allocateNodeCIDRs,omitempty"`
	ConfigureCloudRoutes *bool  `json:"configureCloudRoutes,omitempty"`
	ClusterCIDR          string `json:"clusterCIDR,omitempty"`
}

// cloudProviderSetting is the cloudProvider field kops has on the kubelet
// and kube-controller-manager specs.
type cloudProviderSetting struct {
	CloudProvider string `json:"cloudProvider"`
}

// Snippet is the fragment of the kops Cluster (kops.k8s.io/v1alpha2) to
// merge: AWS as the cloud, the CCM, and the kubelet and
// kube-controller-manager handing the cloud loops to it. kops sets the last
// two itself on current versions; writing them keeps the intent explicit
// and survives a kops default changing.
type Snippet struct {
	Spec struct {
		CloudProvider          string                 `json:"cloudProvider"`
		CloudControllerManager CloudControllerManager `json:"cloudControllerManager"`
		Kubelet                cloudProviderSetting   `json:"kubelet"`
		KubeControllerManager  cloudProviderSetting   `json:"kubeControllerManager"`
	} `json:"spec"`
}

// CommandsMarker is the line of Output.Text that separates the
// cluster-spec snippet (above) from the kops commands (below, one shell
// command per line). It is a contract with scripts that split `awsccmctl
// install kops` output: never change it.
const CommandsMarker = "# --- commands ---"

// Output is what the kops target prints.
type Output struct {
	// Spec is the fragment of the Cluster, Snippet its YAML with a comment
	// saying where it goes.
	Spec Snippet `json:"cluster"`
	// Snippet is the YAML to merge into the Cluster (`kops edit cluster`).
	Snippet []byte `json:"-"`
	// Commands do the same without an editor, then apply it.
	Commands []string `json:"commands"`
}

// JSON is the output as `install kops -o json` prints it:
// {"cluster": <the Cluster fragment>, "commands": [...]}, indented,
// with a final newline.
func (o Output) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Text is the output as `install kops` prints it: the snippet,
// CommandsMarker, then one command per line.
func (o Output) Text() []byte {
	var b bytes.Buffer
	b.Write(o.Snippet)
	if len(o.Snippet) > 0 && o.Snippet[len(o.Snippet)-1] != '\n' {
		b.WriteByte('\n')
	}
	b.WriteString(CommandsMarker + "\n")
	for _, c := range o.Commands {
		b.WriteString(c + "\n")
	}
	return b.Bytes()
}

// Render returns the snippet and the commands.
func Render(o Options) (Output, error) {
	if err := o.Validate(); err != nil {
		return Output{}, err
	}
	var s Snippet
	s.Spec.CloudProvider = "aws"
	s.Spec.Kubelet.CloudProvider = "external"
	s.Spec.KubeControllerManager.CloudProvider = "external"
	s.Spec.CloudControllerManager = CloudControllerManager{Image: o.Image, AllocateNodeCIDRs: o.AllocateNodeCIDRs,
		ConfigureCloudRoutes: o.ConfigureCloudRoutes, ClusterCIDR: o.ClusterCIDR}
	body, err := yaml.Marshal(s)
	if err != nil {
		return Output{}, err
	}
	header := fmt.Sprintf("# Merge into the kops Cluster %s (kops edit cluster --name %s), then run kops update cluster.\n", o.ClusterName, o.ClusterName)
	sets := []string{"spec.cloudControllerManager.image=" + o.Image,
		"spec.kubelet.cloudProvider=external", "spec.kubeControllerManager.cloudProvider=external"}
	if o.AllocateNodeCIDRs != nil {
		sets = append(sets, "spec.cloudControllerManager.allocateNodeCIDRs="+strconv.FormatBool(*o.AllocateNodeCIDRs))
	}
	if o.ConfigureCloudRoutes != nil {
		sets = append(sets, "spec.cloudControllerManager.configureCloudRoutes="+strconv.FormatBool(*o.ConfigureCloudRoutes))
	}
	if o.ClusterCIDR != "" {
		sets = append(sets, "spec.cloudControllerManager.clusterCIDR="+o.ClusterCIDR)
	}
	edit := "kops edit cluster --name " + o.ClusterName
	for _, s := range sets {
		edit += " --set " + s
	}
	return Output{
		Spec:    s,
		Snippet: append([]byte(header), body...),
		Commands: []string{
			edit,
			"kops update cluster --name " + o.ClusterName + " --yes",
			// kops rolls the addon out itself; no instance needs replacing
			// for a change of the CCM's image or flags.
		},
	}, nil
}
