package kubeadmconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/awsccmctl/awsccmctl/internal/fielderr"
	"github.com/awsccmctl/awsccmctl/internal/kubeadmapi"
	"github.com/awsccmctl/awsccmctl/internal/yamldocs"
)

// Kinds Merge changes; every other document is kept byte for byte.
const (
	kindCluster = kubeadmapi.KindClusterConfiguration
	kindInit    = "InitConfiguration"
	kindJoin    = "JoinConfiguration"
	kindKubelet = "KubeletConfiguration"
)

// The flags and values Merge sets.
const (
	argCloudProvider = "cloud-provider"
	argProviderID    = "provider-id"
	external         = "external"
)

// ConflictError lists the settings of the user's file that contradict what
// the external CCM needs; Merge changes nothing when it returns one.
type ConflictError struct {
	Problems []string
}

func (e *ConflictError) Error() string {
	return "the kubeadm configuration contradicts the external CCM:\n  - " + strings.Join(e.Problems, "\n  - ")
}

// document is one YAML document of the user's file.
type document struct {
	raw        []byte
	node       *yaml.Node // nil for a document of only comments
	apiVersion string
	kind       string
	changed    bool
}

func (d *document) name(i int) string {
	if d.kind == "" {
		return fmt.Sprintf("document %d", i+1)
	}
	return fmt.Sprintf("document %d (%s)", i+1, d.kind)
}

// Merge adds what the external CCM needs to a user's kubeadm configuration
// file (data, one or more YAML documents): kube-controller-manager's
// --cloud-provider=external in ClusterConfiguration (a ClusterConfiguration
// is appended when the file has an InitConfiguration but none), and the
// kubelet's --cloud-provider=external, and --provider-id and the node name
// when o sets them, in every InitConfiguration and JoinConfiguration.
//
// The file's API version is kept (o.APIVersion, when set, must match it;
// the kubeadm of o.KubernetesVersion or of the file's kubernetesVersion must
// read it). Every other document (KubeletConfiguration,
// KubeProxyConfiguration, ResetConfiguration, unknown kinds) and every
// other setting is kept; existing extraArgs and kubeletExtraArgs stay. The
// documents of kinds kubeadm reads are decoded strictly against kubeadm's
// types first (checkFields): a field kubeadm would refuse is an error. A
// setting of the user's that contradicts ours (cloud-provider=aws, another
// provider ID or node name, a kubernetesVersion other than o's) is a
// *ConflictError naming it. The result is read back and checked before it
// is returned.
func Merge(data []byte, o Options) ([]byte, error) {
	docs, err := splitDocuments(data)
	if err != nil {
		return nil, err
	}
	ro, err := mergeOptions(docs, o)
	if err != nil {
		return nil, err
	}
	r, errs := ro.resolve()
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	// kubeadm refuses fields its types do not have: say so now, rather
	// than print a file kubeadm then rejects.
	for i, d := range docs {
		errs = append(errs, checkFields(d, i)...)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	m := merger{o: ro, r: r, asMap: !kubeadmapi.ArgsAreList(r.apiVersion)}
	hasInit, hasCluster := false, false
	for i, d := range docs {
		if d.node == nil {
			continue
		}
		switch {
		case d.apiVersion == r.apiVersion && d.kind == kindCluster:
			hasCluster = true
			m.cluster(d, i)
		case d.apiVersion == r.apiVersion && (d.kind == kindInit || d.kind == kindJoin):
			hasInit = hasInit || d.kind == kindInit
			m.node(d, i)
		case d.kind == kindKubelet:
			m.kubelet(d, i)
		}
	}
	if len(m.problems) > 0 {
		return nil, &ConflictError{Problems: m.problems}
	}
	var out bytes.Buffer
	for i, d := range docs {
		if i > 0 {
			out.WriteString("---\n")
		}
		if !d.changed {
			out.Write(d.raw)
		} else if err := encode(&out, d.node); err != nil {
			return nil, fmt.Errorf("%s: %w", d.name(i), err)
		}
		if out.Len() > 0 && out.Bytes()[out.Len()-1] != '\n' {
			out.WriteByte('\n')
		}
	}
	if hasInit && !hasCluster {
		// kubeadm init without a ClusterConfiguration would run
		// kube-controller-manager with the cloud loops the CCM runs.
		cc, err := marshalCluster(r)
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n# Added by awsccmctl for the external AWS cloud-controller-manager.\n")
		out.Write(cc)
	}
	if err := Check(out.Bytes(), ro); err != nil {
		return nil, fmt.Errorf("the merged configuration does not hold (a bug; please report it): %w", err)
	}
	return out.Bytes(), nil
}

// splitDocuments splits data as kubeadm does (apimachinery's YAML reader)
// and decodes each document, keeping its text.
func splitDocuments(data []byte) ([]*document, error) {
	raws, err := yamldocs.Split(data)
	if err != nil {
		return nil, err
	}
	var docs []*document
	for _, raw := range raws {
		d := &document{raw: raw}
		var n yaml.Node
		if err := yaml.Unmarshal(raw, &n); err != nil {
			return nil, fmt.Errorf("%s: not YAML: %w", d.name(len(docs)), err)
		}
		if len(n.Content) > 0 {
			root := n.Content[0]
			if root.Kind != yaml.MappingNode {
				return nil, fmt.Errorf("%s: not a YAML object", d.name(len(docs)))
			}
			d.node = &n
			d.apiVersion = kubeadmapi.Scalar(kubeadmapi.MapValue(root, "apiVersion"))
			d.kind = kubeadmapi.Scalar(kubeadmapi.MapValue(root, "kind"))
		}
		docs = append(docs, d)
	}
	return docs, nil
}

// mergeOptions checks the file's kubeadm API version against o and returns
// o with the file's API version and, when o has none, its kubernetesVersion.
func mergeOptions(docs []*document, o Options) (Options, error) {
	var api, fileVersion string
	var errs []error
	for i, d := range docs {
		group, _, _ := strings.Cut(d.apiVersion, "/")
		if group != kubeadmapi.Group || (d.kind != kindCluster && d.kind != kindInit && d.kind != kindJoin) {
			continue
		}
		switch {
		case d.apiVersion != V1beta3 && d.apiVersion != V1beta4:
			errs = append(errs, fmt.Errorf("%s: apiVersion %s: want %s or %s (kubeadm config migrate converts older files)", d.name(i), d.apiVersion, V1beta3, V1beta4))
		case api == "":
			api = d.apiVersion
		case api != d.apiVersion:
			errs = append(errs, fmt.Errorf("%s: apiVersion %s, but an earlier document is %s; use one version", d.name(i), d.apiVersion, api))
		}
		if d.kind == kindCluster && d.node != nil {
			fileVersion = kubeadmapi.Scalar(kubeadmapi.MapValue(d.node.Content[0], "kubernetesVersion"))
		}
	}
	if len(errs) > 0 {
		return o, errors.Join(errs...)
	}
	if api == "" {
		return o, fmt.Errorf("no %s, %s or %s of %s in the file: nothing to merge into", kindInit, kindJoin, kindCluster, kubeadmapi.Group)
	}
	if o.APIVersion != "" && o.APIVersion != api {
		return o, fielderr.Errorf(FieldAPIVersion, " %s: the file is %s; leave the API version out, or convert the file with kubeadm config migrate", o.APIVersion, api)
	}
	o.APIVersion = api
	if fileVersion != "" {
		fv, err := NormalizeVersion(fileVersion)
		if err != nil {
			return o, fmt.Errorf("ClusterConfiguration kubernetesVersion: %w", err)
		}
		if o.KubernetesVersion == "" {
			o.KubernetesVersion = fv
		} else if ov, err := NormalizeVersion(o.KubernetesVersion); err == nil && ov != fv {
			return o, &ConflictError{Problems: []string{fmt.Sprintf("ClusterConfiguration kubernetesVersion is %q, but the Kubernetes version asked for is %s; make them agree", fileVersion, ov)}}
		}
	}
	return o, nil
}

// merger changes the documents, collecting every conflict.
type merger struct {
	o        Options
	r        resolved
	asMap    bool
	problems []string
}

func (m *merger) conflict(format string, args ...any) {
	m.problems = append(m.problems, fmt.Sprintf(format, args...))
}

func (m *merger) cluster(d *document, i int) {
	root := d.node.Content[0]
	if m.r.kubernetesVersion != "" && kubeadmapi.MapValue(root, "kubernetesVersion") == nil {
		kubeadmapi.SetKey(root, "kubernetesVersion", str(m.r.kubernetesVersion))
	}
	cm := child(root, "controllerManager")
	m.setArgs(d, i, cm, "controllerManager.extraArgs", "extraArgs", []arg{{argCloudProvider, external}})
	d.changed = true
}

func (m *merger) node(d *document, i int) {
	reg := child(d.node.Content[0], "nodeRegistration")
	if m.o.NodeName != "" {
		if n := kubeadmapi.MapValue(reg, "name"); n != nil && kubeadmapi.Scalar(n) != "" && kubeadmapi.Scalar(n) != m.o.NodeName {
			m.conflict("%s: nodeRegistration.name is %q, but the node name asked for is %q", d.name(i), kubeadmapi.Scalar(n), m.o.NodeName)
		} else {
			kubeadmapi.SetKey(reg, "name", str(m.o.NodeName))
		}
	}
	m.setArgs(d, i, reg, "nodeRegistration.kubeletExtraArgs", "kubeletExtraArgs", m.o.kubeletArgs())
	d.changed = true
}

// kubelet checks a KubeletConfiguration's providerID against ours; the
// document itself is never changed.
func (m *merger) kubelet(d *document, i int) {
	if p := kubeadmapi.Scalar(kubeadmapi.MapValue(d.node.Content[0], "providerID")); p != "" && m.o.ProviderID != "" && p != m.o.ProviderID {
		m.conflict("%s: providerID is %q, but the provider ID asked for is %q", d.name(i), p, m.o.ProviderID)
	}
}

// setArgs adds want to the extraArgs-style field key of parent, in the
// shape of the API version: a map in v1beta3, a list of {name, value} in
// v1beta4. A flag already there with another value is a conflict.
func (m *merger) setArgs(d *document, i int, parent *yaml.Node, path, key string, want []arg) {
	args := kubeadmapi.EditArgs(parent, key, !m.asMap)
	if args.Check() != nil {
		form := "a list of {name, value}"
		if m.asMap {
			form = "a map of flag: value"
		}
		m.conflict("%s: %s must be %s in %s", d.name(i), path, form, m.r.apiVersion)
		return
	}
	for _, a := range want {
		have := args.Values(a.Name)
		for _, v := range have {
			if v != a.Value {
				m.conflict("%s: %s %s is %q, but the external CCM needs %q%s", d.name(i), path, a.Name, v, a.Value, hint(a.Name))
			}
		}
		if len(have) == 0 {
			_, _ = args.Set(a.Name, a.Value) // the shape was checked above
		}
	}
}

func hint(flag string) string {
	if flag == argCloudProvider {
		return " (remove it; a cluster on the in-tree provider moves with awsccmctl migrate-from-intree)"
	}
	return ""
}

// child returns the mapping at key of m, adding an empty one if absent.
func child(m *yaml.Node, key string) *yaml.Node {
	if c := kubeadmapi.MapValue(m, key); c != nil && c.Kind == yaml.MappingNode {
		return c
	}
	c := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	kubeadmapi.SetKey(m, key, c)
	return c
}

func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

func encode(w io.Writer, n *yaml.Node) error {
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return err
	}
	return enc.Close()
}
