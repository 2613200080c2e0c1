package migrate

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/leadermigration"
	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
)

// Cluster is what Discover read: everything plan decides from, besides the
// preflight report.
type Cluster struct {
	// Version is the apiserver's gitVersion; Minor its minor number.
	Version string
	Minor   int
	// KCM and APIServer are the control-plane mirror Pods' flags.
	KCM       []staticPodFlags
	APIServer []staticPodFlags
	// KCMVersion is the kube-controller-manager image's version tag.
	KCMVersion string
	// Kubeadm: the kube-system/kubeadm-config ConfigMap exists. Whether
	// the cluster is kubeadm's or kops' is decided from it and every
	// control-plane Pod's labels together (distribution).
	Kubeadm bool
	// Nodes are every Node.
	Nodes []corev1.Node
	// LoadBalancers maps "namespace/name" of each LoadBalancer Service to its
	// hostname ("" while pending).
	LoadBalancers map[string]string
}

// Discover reads the cluster.
func Discover(ctx context.Context, client kubernetes.Interface) (*Cluster, error) {
	c := &Cluster{LoadBalancers: map[string]string{}}
	v, err := client.Discovery().ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("read the apiserver version: %w", err)
	}
	c.Version = v.GitVersion
	if c.Minor, err = serverMinor(v); err != nil {
		return nil, err
	}
	if c.KCM, err = mirrorPodFlags(ctx, client, leadermigration.ComponentKCM); err != nil {
		return nil, err
	}
	if c.APIServer, err = mirrorPodFlags(ctx, client, "kube-apiserver"); err != nil {
		return nil, err
	}
	for _, k := range c.KCM {
		c.KCMVersion = nodefiles.ImageVersion(k.Image)
	}
	_, err = client.CoreV1().ConfigMaps(metav1.NamespaceSystem).Get(ctx, kubeadmConfigName, metav1.GetOptions{})
	switch {
	case err == nil:
		c.Kubeadm = true
	case !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("read kube-system/%s: %w", kubeadmConfigName, err)
	}
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list Nodes: %w", err)
	}
	c.Nodes = nodes.Items
	svcs, err := client.CoreV1().Services(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list Services: %w", err)
	}
	for i := range svcs.Items {
		s := &svcs.Items[i]
		if s.Spec.Type == corev1.ServiceTypeLoadBalancer {
			c.LoadBalancers[s.Namespace+"/"+s.Name] = lbHostname(s)
		}
	}
	return c, nil
}

// kcmFlag returns a kube-controller-manager flag's value, the same on every
// control-plane node, or an error naming the nodes that disagree.
func (c *Cluster) kcmFlag(name string) (string, bool, error) {
	var value string
	var set bool
	for i, k := range c.KCM {
		v, ok := k.Flags.Get(name)
		if i > 0 && (v != value || ok != set) {
			return "", false, fmt.Errorf("kube-controller-manager --%s differs between %s (%q) and %s (%q): make the control-plane nodes agree first", name, c.KCM[0].Node, value, k.Node, v)
		}
		value, set = v, ok
	}
	return value, set, nil
}

// kcmDuration reads a duration flag, or def.
func (c *Cluster) kcmDuration(name string, def time.Duration) (time.Duration, error) {
	v, ok, err := c.kcmFlag(name)
	if err != nil || !ok {
		return def, err
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("kube-controller-manager --%s=%q: %w", name, v, err)
	}
	return d, nil
}

// controlPlaneNodes returns the nodes running kube-controller-manager.
func (c *Cluster) controlPlaneNodes() []string {
	var out []string
	for _, k := range c.KCM {
		out = append(out, k.Node)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// defaultWorkerGroup holds the workers no kops instance group names.
const defaultWorkerGroup = "workers"

// nodeGroups groups the kubelets to switch: the control plane first, then
// workers by kops instance group, or all together.
func (c *Cluster) nodeGroups() []NodeGroup {
	cp := c.controlPlaneNodes()
	groups := map[string][]string{}
	for _, n := range c.Nodes {
		if slices.Contains(cp, n.Name) {
			continue
		}
		if _, ok := n.Labels[labelControlPlane]; ok {
			cp = append(cp, n.Name)
			continue
		}
		g := n.Labels[kopsInstanceGroupLabel]
		if g == "" {
			g = defaultWorkerGroup
		}
		groups[g] = append(groups[g], n.Name)
	}
	slices.Sort(cp)
	out := []NodeGroup{{Name: "control-plane", Nodes: slices.Compact(cp)}}
	for _, g := range slices.Sorted(maps.Keys(groups)) {
		nodes := groups[g]
		slices.Sort(nodes)
		out = append(out, NodeGroup{Name: g, Nodes: nodes})
	}
	return out
}
