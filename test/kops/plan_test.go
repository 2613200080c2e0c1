package kops

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/awsccmctl/awsccmctl/internal/ccmapp"
	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/migrate"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

const (
	ccmImage = "ghcr.io/awsccmctl/aws-cloud-controller-manager:v0.1.0"
	// podCIDR is what kops derives from nonMasqueradeCIDR 100.64.0.0/10.
	podCIDR = "100.96.0.0/11"
)

// kopsCase is a kops cluster on the in-tree provider: its spec (testdata)
// and what its nodes show the planner.
type kopsCase struct {
	name, spec, cluster string
	// controlPlane is the control-plane instance group, workers the
	// worker instance groups (one node each).
	controlPlane string
	workers      []string
	// cloudRoutes: kube-controller-manager runs them (kubenet).
	cloudRoutes bool
}

var kopsCases = []kopsCase{
	{name: "kops 1.26 style, Calico", spec: "kops126-calico.yaml", cluster: "demo.k8s.example.com",
		controlPlane: "control-plane-us-east-1a", workers: []string{"nodes-us-east-1a"}},
	{name: "kops 1.26 style, kubenet with cloud routes", spec: "kops126-kubenet.yaml", cluster: "demo.k8s.example.com",
		controlPlane: "control-plane-us-east-1a", workers: []string{"nodes-us-east-1a"}, cloudRoutes: true},
	{name: "kops 1.31 style, Cilium", spec: "kops131-cilium.yaml", cluster: "prod.k8s.local",
		controlPlane: "control-plane-eu-west-1a", workers: []string{"nodes-eu-west-1a", "nodes-eu-west-1b"}},
}

// plan builds the migration plan for c with the product's planner, from
// the mirror Pods and Nodes such a kops cluster shows.
func (c kopsCase) plan(t *testing.T, mode migrate.Mode) *migrate.MigrationPlan {
	t.Helper()
	kcm := []string{"--cloud-provider=aws", "--cluster-name=" + c.cluster, "--leader-elect=true",
		"--allocate-node-cidrs=true", "--cluster-cidr=" + podCIDR, fmt.Sprintf("--configure-cloud-routes=%t", c.cloudRoutes)}
	objs := []runtime.Object{
		kopsMirrorPod("kube-controller-manager", "cp-1", kcm),
		kopsMirrorPod("kube-apiserver", "cp-1", []string{"--cloud-provider=aws"}),
		kopsNode("cp-1", c.controlPlane, true),
	}
	for i, ig := range c.workers {
		objs = append(objs, kopsNode(fmt.Sprintf("w-%d", i+1), ig, false))
	}
	cs := fake.NewClientset(objs...)
	cs.Discovery().(*fakediscovery.FakeDiscovery).FakedServerVersion = &version.Info{GitVersion: "v1.26.13", Major: "1", Minor: "26"}
	cluster, err := migrate.Discover(context.Background(), cs)
	if err != nil {
		t.Fatal(err)
	}
	p, err := migrate.BuildPlan(cluster, migrate.PlanOptions{Mode: mode, Install: install.Configuration{Image: ccmImage},
		Preflight: &preflight.Report{Success: true, Mode: preflight.ModePreMigrate}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec.Cluster.Distribution != migrate.DistributionKops || p.Spec.Kops == nil {
		t.Fatalf("the plan is not a kops plan: %+v", p.Spec.Cluster)
	}
	return p
}

// kopsMirrorPod is a control-plane mirror Pod as kops' nodeup writes it.
func kopsMirrorPod(component, node string, flags []string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: component + "-" + node, Namespace: "kube-system",
			Labels:      map[string]string{"k8s-app": component},
			Annotations: map[string]string{corev1.MirrorPodAnnotationKey: "hash"},
		},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{
			Name: component, Image: "registry.k8s.io/" + component + ":v1.26.13",
			Command: []string{"/go-runner"},
			Args:    append([]string{"--log-file=/var/log/" + component + ".log", "--also-stdout", "/usr/local/bin/" + component}, flags...),
		}}},
	}
}

func kopsNode(name, ig string, controlPlane bool) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kops.k8s.io/instancegroup": ig}},
		Spec: corev1.NodeSpec{ProviderID: "aws:///us-east-1a/i-" + name}}
	if controlPlane {
		n.Labels["node-role.kubernetes.io/control-plane"] = ""
	}
	return n
}

// TestPlanEditsThroughKops applies each kops plan's edits step by step, as
// their commands say, and checks every intermediate spec with kops' code
// and the populated spec and add-on with this test's own assertions.
func TestPlanEditsThroughKops(t *testing.T) {
	bin := testbed.Tool(t, testbed.KopsCheckBinary)
	for _, c := range kopsCases {
		for _, mode := range []migrate.Mode{migrate.ModeLeaderMigration, migrate.ModeRestart} {
			t.Run(c.name+"/"+string(mode), func(t *testing.T) {
				p := c.plan(t, mode)
				base := kopsCheck(t, bin, c.spec, nil)
				if !base.Valid {
					t.Fatalf("kops refuses the unedited spec at %s: %s", base.Stage, base.stderr)
				}
				if got := base.Populated.KubeControllerManager.CloudProvider; got != "aws" {
					t.Fatalf("the unedited spec's kube-controller-manager runs %q, want aws: not an in-tree cluster", got)
				}
				var sets []string
				for _, e := range p.Spec.Kops.Edits {
					if len(e.Set) == 0 {
						continue
					}
					edit := e.Commands[0]
					if !strings.HasPrefix(edit, "kops edit cluster ") || flagValue(edit, "name") != c.cluster {
						t.Fatalf("%s: %q is not `kops edit cluster --name %s`", e.Step, edit, c.cluster)
					}
					// The edits pile up, each on the spec the earlier ones left.
					sets = append(sets, setValues(edit)...)
					res := kopsCheck(t, bin, c.spec, sets)
					if !res.Valid {
						t.Fatalf("after %s kops refuses the spec at %s:\n%s\nsets: %v", e.Step, res.Stage, res.stderr, sets)
					}
					if err := c.assertStep(e.Step, mode, p, res); err != nil {
						t.Errorf("after %s (%s): %v\nsets: %v\npopulated: %+v\nadd-on: %+v", e.Step, edit, err, sets, res.Populated, res.Addon)
					}
				}
			})
		}
	}
}

// assertStep checks what kops populated after step.
func (c kopsCase) assertStep(step string, mode migrate.Mode, p *migrate.MigrationPlan, res checkResult) error {
	pop := res.Populated
	var errs []string
	want := func(what, got, want string) {
		if got != want {
			errs = append(errs, fmt.Sprintf("%s is %q, want %q", what, got, want))
		}
	}
	switch step {
	case migrate.StepKCMLeaderMigration:
		want("kubeControllerManager.cloudProvider", pop.KubeControllerManager.CloudProvider, "aws")
		want("kubeControllerManager.enableLeaderMigration", boolOf(pop.KubeControllerManager.EnableLeaderMigration), "true")
	case migrate.StepInstallCCM:
		if mode == migrate.ModeLeaderMigration {
			want("kubeControllerManager.cloudProvider (the KCM keeps the loops until the cut-over)", pop.KubeControllerManager.CloudProvider, "aws")
		}
		errs = append(errs, c.ccmErrors(p, res, mode == migrate.ModeLeaderMigration)...)
	case migrate.StepCutOver, migrate.StepKCMExternal:
		if err := assertExternal(res); err != nil {
			errs = append(errs, err.Error())
		}
		if mode == migrate.ModeLeaderMigration {
			// Trap C: an external KCM with leader migration can win the lease
			// and run nothing.
			want("kubeControllerManager.enableLeaderMigration", boolOf(pop.KubeControllerManager.EnableLeaderMigration), "false")
			errs = append(errs, c.ccmErrors(p, res, true)...)
		}
	case migrate.StepFinalize:
		if err := assertExternal(res); err != nil {
			errs = append(errs, err.Error())
		}
		errs = append(errs, c.ccmErrors(p, res, false)...)
	default:
		errs = append(errs, "a cluster-spec edit for a step this test does not know")
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// assertExternal: every component kops configures hands the cloud to the
// CCM. kops itself accepts `aws` for each of these next to its CCM add-on.
func assertExternal(res checkResult) error {
	pop := res.Populated
	var errs []string
	for what, got := range map[string]string{
		"kubeControllerManager.cloudProvider": pop.KubeControllerManager.CloudProvider,
		"kubeAPIServer.cloudProvider":         pop.KubeAPIServer.CloudProvider,
		"kubelet.cloudProvider":               pop.Kubelet.CloudProvider,
		"controlPlaneKubelet.cloudProvider":   pop.ControlPlaneKubelet.CloudProvider,
	} {
		if got != "external" {
			errs = append(errs, fmt.Sprintf("%s is %q in the populated spec, want external", what, got))
		}
	}
	if pop.CloudControllerManager == nil {
		errs = append(errs, "no cloudControllerManager in the populated spec")
	}
	if len(errs) > 0 {
		slices.Sort(errs)
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// ccmErrors checks the populated CCM and kops' rendered add-on: the plan's
// image, leader migration as the step wants it, the cloud routes the
// kube-controller-manager ran, and args the product CCM accepts.
func (c kopsCase) ccmErrors(p *migrate.MigrationPlan, res checkResult, leaderMigration bool) []string {
	var errs []string
	ccm := res.Populated.CloudControllerManager
	if ccm == nil {
		return []string{"no cloudControllerManager in the populated spec"}
	}
	if ccm.Image != p.Spec.Install.Image || res.Addon.Image != p.Spec.Install.Image {
		errs = append(errs, fmt.Sprintf("CCM image %q, add-on image %q, want the plan's %q", ccm.Image, res.Addon.Image, p.Spec.Install.Image))
	}
	if got := boolOf(ccm.EnableLeaderMigration); got != fmt.Sprint(leaderMigration) && (leaderMigration || got != "") {
		errs = append(errs, fmt.Sprintf("cloudControllerManager.enableLeaderMigration %s, want %t", got, leaderMigration))
	}
	args := res.Addon.Args
	wantArgs := []string{"--cloud-provider=aws", "--cluster-name=" + c.cluster, "--leader-elect=true",
		fmt.Sprintf("--configure-cloud-routes=%t", c.cloudRoutes)}
	if leaderMigration {
		wantArgs = append(wantArgs, "--enable-leader-migration=true")
	}
	if c.cloudRoutes {
		wantArgs = append(wantArgs, "--cluster-cidr="+podCIDR)
	}
	for _, a := range wantArgs {
		if !slices.Contains(args, a) {
			errs = append(errs, fmt.Sprintf("the add-on's args lack %s: %v", a, args))
		}
	}
	if !leaderMigration && slices.Contains(args, "--enable-leader-migration=true") {
		errs = append(errs, fmt.Sprintf("the add-on still runs leader migration: %v", args))
	}
	// kops runs the product's binary with these args: each must be one of
	// its flags, or the CCM crash-loops.
	cmd, err := ccmapp.NewCommand(ccmapp.Options{})
	if err != nil {
		return append(errs, err.Error())
	}
	if err := cmd.Flags().Parse(args); err != nil {
		errs = append(errs, fmt.Sprintf("the product CCM refuses kops' add-on args: %v (%v)", err, args))
	}
	return errs
}

func boolOf(b *bool) string {
	if b == nil {
		return ""
	}
	return fmt.Sprint(*b)
}
