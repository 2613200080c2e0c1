package migrate

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
)

// kcmPod is a kubeadm kube-controller-manager mirror Pod on node.
func kcmPod(node string, flags ...string) *corev1.Pod {
	return mirrorPod("kube-controller-manager", node, "registry.k8s.io/kube-controller-manager:v1.26.13", flags)
}

func mirrorPod(component, node, image string, flags []string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: component + "-" + node, Namespace: "kube-system",
			Labels:      map[string]string{"component": component, "tier": "control-plane"},
			Annotations: map[string]string{corev1.MirrorPodAnnotationKey: "hash"},
		},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{
			Name: component, Image: image, Command: append([]string{component}, flags...),
		}}},
	}
}

func node(name string, cp bool) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}},
		Spec: corev1.NodeSpec{ProviderID: "aws:///us-east-1a/i-" + name}}
	if cp {
		n.Labels[labelControlPlane] = ""
	}
	return n
}

func kubeadmConfig() *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kubeadm-config", Namespace: "kube-system"},
		Data: map[string]string{"ClusterConfiguration": "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\n"}}
}

func lbService(name, host string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:   corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{Hostname: host}}}}}
}

func discover(t *testing.T, gitVersion string, objs ...runtime.Object) *Cluster {
	t.Helper()
	cs := fake.NewClientset(objs...)
	minor := strings.Split(strings.TrimPrefix(gitVersion, "v"), ".")[1]
	cs.Discovery().(*fakediscovery.FakeDiscovery).FakedServerVersion = &version.Info{GitVersion: gitVersion, Major: "1", Minor: minor}
	c, err := Discover(context.Background(), cs)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var passingPreflight = &preflight.Report{Success: true, Mode: preflight.ModePreMigrate}

var inTree = []string{"--cloud-provider=aws", "--cloud-config=/etc/kubernetes/cloud.conf", "--cluster-name=prod", "--leader-elect=true"}

func TestBuildPlanLeaderMigration(t *testing.T) {
	c := discover(t, "v1.26.13",
		kcmPod("cp-1", append(inTree, "--leader-elect-lease-duration=20s")...), kcmPod("cp-2", append(inTree, "--leader-elect-lease-duration=20s")...),
		mirrorPod("kube-apiserver", "cp-1", "registry.k8s.io/kube-apiserver:v1.26.13", []string{"--cloud-provider=aws"}),
		kubeadmConfig(), node("cp-1", true), node("cp-2", true), node("w-1", false), node("w-2", false),
		lbService("web", "a1b2-123.us-east-1.elb.amazonaws.com"))
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	p, err := BuildPlan(c, PlanOptions{Install: install.Configuration{Image: "example.com/ccm:v1"}, Preflight: passingPreflight, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"verify-cluster", "migration-rbac", "kcm-leader-migration", "install-ccm", "cut-over", "kubeadm-config",
		"kubelet-external/control-plane", "kubelet-external/workers", "finalize"}
	if got := p.StepNames(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("steps = %v, want %v", got, want)
	}
	if p.Spec.Install.Namespace != "kube-system" || p.Spec.Install.ClusterName != "prod" || *p.Spec.Install.ConfigureCloudRoutes {
		t.Errorf("install pins: %+v", p.Spec.Install)
	}
	if p.Spec.Handover.LeaseDuration.Duration != 20*time.Second || p.Spec.Handover.ExpectedGap.Duration != 22*time.Second {
		t.Errorf("handover from the KCM's flags: %+v", p.Spec.Handover)
	}
	if p.Spec.Cluster.Distribution != DistributionKubeadm || strings.Join(p.Spec.Cluster.ControlPlaneNodes, ",") != "cp-1,cp-2" {
		t.Errorf("cluster: %+v", p.Spec.Cluster)
	}
	if len(p.Spec.LoadBalancers) != 1 || p.Spec.LoadBalancers[0].Hostname != "a1b2-123.us-east-1.elb.amazonaws.com" {
		t.Errorf("load balancers: %+v", p.Spec.LoadBalancers)
	}
	for _, s := range p.Spec.Steps {
		if s.Precondition == "" || s.Action == "" || s.Gate == "" || s.Undo == "" || s.Timeout.Duration <= 0 {
			t.Errorf("step %s lacks a part: %+v", s.Name, s)
		}
	}
	_, cut, _ := p.Step(StepCutOver)
	if !strings.Contains(cut.Action, "WITHOUT leader migration") || strings.Join(cut.Nodes, ",") != "cp-1,cp-2" {
		t.Errorf("cut-over: %+v", cut)
	}
	// The file round-trips through the strict decoder.
	data, err := EncodePlan(p)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodePlan(data)
	if err != nil {
		t.Fatalf("decode the written plan: %v\n%s", err, data)
	}
	if PlanDigest(back) != PlanDigest(p) {
		t.Error("the plan changed in a round trip")
	}
}

func TestBuildPlanRefuses(t *testing.T) {
	failedEBS := &preflight.Report{Findings: []preflight.Finding{{ID: "storage-ebs-csi-driver", Status: preflight.StatusFail, Message: "2 in-tree EBS volumes, no EBS CSI driver"}}}
	base := func(flags ...string) []runtime.Object {
		return []runtime.Object{kcmPod("cp-1", append(append([]string{}, inTree...), flags...)...), kubeadmConfig(), node("cp-1", true)}
	}
	for _, tc := range []struct {
		name    string
		version string
		objs    []runtime.Object
		opts    PlanOptions
		want    []string
	}{
		{"1.27 has no in-tree provider", "v1.27.3", base(), PlanOptions{}, []string{"Kubernetes 1.27 and later have no in-tree AWS provider", "awsccmctl install"}},
		{"managed control plane", "v1.26.13", []runtime.Object{node("n", false)}, PlanOptions{}, []string{"managed (EKS)"}},
		{"already external", "v1.26.13", base("--cloud-provider=external"), PlanOptions{}, []string{"already runs with --cloud-provider=external"}},
		{"cloud routes", "v1.26.13", base("--allocate-node-cidrs=true", "--cluster-cidr=10.244.0.0/16"), PlanOptions{}, nil},
		{"cloud routes off", "v1.26.13", base("--allocate-node-cidrs=true", "--configure-cloud-routes=false"), PlanOptions{}, nil},
		{"cloud routes without --cluster-cidr", "v1.26.13", base("--allocate-node-cidrs=true"), PlanOptions{},
			[]string{"runs cloud routes (--allocate-node-cidrs with --configure-cloud-routes) without --cluster-cidr", "give kube-controller-manager its --cluster-cidr"}},
		{"cloud routes turned off for the CCM", "v1.26.13", base("--allocate-node-cidrs=true", "--cluster-cidr=10.244.0.0/16"),
			PlanOptions{Install: install.Configuration{ConfigureCloudRoutes: new(false)}},
			[]string{"--configure-cloud-routes=false, but kube-controller-manager runs cloud routes", "leave --configure-cloud-routes unset"}},
		{"another cluster CIDR for the CCM", "v1.26.13", base("--allocate-node-cidrs=true", "--cluster-cidr=10.244.0.0/16"),
			PlanOptions{Install: install.Configuration{ClusterCIDR: "10.96.0.0/12"}},
			[]string{"--cluster-cidr 10.96.0.0/12, but kube-controller-manager routes --cluster-cidr=10.244.0.0/16", "set it to 10.244.0.0/16"}},
		{"control-plane nodes disagree on --cluster-cidr", "v1.26.13",
			append(base("--allocate-node-cidrs=true", "--cluster-cidr=10.244.0.0/16"), kcmPod("cp-2", append(append([]string{}, inTree...), "--allocate-node-cidrs=true", "--cluster-cidr=10.245.0.0/16")...)),
			PlanOptions{}, []string{"--cluster-cidr differs between cp-1", "make every control-plane node's kube-controller-manager flags the same"}},
		{"preflight failed", "v1.26.13", base(), PlanOptions{Preflight: failedEBS}, []string{"preflight storage-ebs-csi-driver failed", "install the EBS CSI driver"}},
		{"preflight not run", "v1.26.13", base(), PlanOptions{Preflight: nil}, []string{"pre-migrate preflight did not run"}},
		{"private ECR without a credential provider", "v1.26.13", base(), PlanOptions{Preflight: &preflight.Report{Findings: []preflight.Finding{{
			ID: "images-ecr-credential-provider", Status: preflight.StatusWarn, Message: "2 Pods pull from 123456789012.dkr.ecr.us-east-1.amazonaws.com", Remediation: "install ecr-credential-provider"}}}},
			[]string{"removes the in-tree ECR credentials", "install ecr-credential-provider"}},
		{"namespace", "v1.26.13", base(), PlanOptions{Install: install.Configuration{Namespace: "cloud"}}, []string{"--namespace cloud"}},
		{"cluster name", "v1.26.13", base(), PlanOptions{Install: install.Configuration{ClusterName: "other"}}, []string{"--cluster-name other", "set it to prod"}},
		{"restart on two control-plane nodes", "v1.26.13", append(base(), kcmPod("cp-2", inTree...)), PlanOptions{Mode: ModeRestart}, []string{"--mode=restart on 2 control-plane nodes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := discover(t, tc.version, tc.objs...)
			if tc.opts.Preflight == nil && tc.name != "preflight not run" {
				tc.opts.Preflight = passingPreflight
			}
			_, err := BuildPlan(c, tc.opts)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("plan accepted the cluster")
			}
			if refused := (*RefusedError)(nil); !errors.As(err, &refused) {
				t.Fatalf("error %T, want *RefusedError: %v", err, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestBuildPlanCarriesCloudRoutes: a kube-controller-manager that runs
// cloud routes hands them to the CCM's route controller: the plan's install
// values turn it on over the same pod CIDRs, the rendered CCM runs it with
// those flags, its leader-migration file hands node-route-controller over
// with the KCM's route, and the gates wait for it.
func TestBuildPlanCarriesCloudRoutes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags []string
		on    bool
		cidr  string
	}{
		{"allocate and routes (default on)", []string{"--allocate-node-cidrs=true", "--cluster-cidr=10.244.0.0/16"}, true, "10.244.0.0/16"},
		{"dual-stack, routes explicit", []string{"--allocate-node-cidrs=true", "--configure-cloud-routes=true", "--cluster-cidr=10.244.0.0/16,fd00:10:244::/56"}, true, "10.244.0.0/16,fd00:10:244::/56"},
		{"routes off", []string{"--allocate-node-cidrs=true", "--configure-cloud-routes=false", "--cluster-cidr=10.244.0.0/16"}, false, ""},
		{"no allocation", []string{"--cluster-cidr=10.244.0.0/16"}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := discover(t, "v1.26.13", kcmPod("cp-1", append(append([]string{}, inTree...), tc.flags...)...), kubeadmConfig(), node("cp-1", true))
			p, err := BuildPlan(c, PlanOptions{Install: install.Configuration{Image: "example.com/ccm:v1"}, Preflight: passingPreflight})
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Spec.Install; *got.ConfigureCloudRoutes != tc.on || got.ClusterCIDR != tc.cidr {
				t.Errorf("install: configureCloudRoutes %v clusterCIDR %q, want %v %q", *got.ConfigureCloudRoutes, got.ClusterCIDR, tc.on, tc.cidr)
			}
			objs, err := ccmObjects(p, true)
			if err != nil {
				t.Fatal(err)
			}
			var args []string
			var lm string
			for _, o := range objs {
				switch o.GetKind() {
				case "DaemonSet":
					cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
					a, _, _ := unstructured.NestedStringSlice(cs[0].(map[string]any), "args")
					args = a
				case "ConfigMap":
					data, _, _ := unstructured.NestedStringMap(o.Object, "data")
					for _, v := range data {
						if strings.Contains(v, "LeaderMigrationConfiguration") {
							lm = v
						}
					}
				}
			}
			wantArgs := []string{"--configure-cloud-routes=" + strconv.FormatBool(tc.on)}
			if tc.on {
				wantArgs = append(wantArgs, "--cluster-cidr="+tc.cidr)
			}
			for _, w := range wantArgs {
				if !slices.Contains(args, w) {
					t.Errorf("the CCM's args lack %s: %v", w, args)
				}
			}
			if !strings.Contains(lm, "name: node-route-controller") || !strings.Contains(lm, "name: route\n") {
				t.Errorf("the CCM's leader-migration file does not hand over the route controller:\n%s", lm)
			}
			e := &env{plan: p}
			if got := slices.Contains(e.migratedCCMControllers(), "node-route-controller"); got != tc.on {
				t.Errorf("the gates wait for node-route-controller: %v, want %v", got, tc.on)
			}
		})
	}
}

func TestDecodePlanRejects(t *testing.T) {
	c := discover(t, "v1.26.13", kcmPod("cp-1", inTree...), kubeadmConfig(), node("cp-1", true))
	p, err := BuildPlan(c, PlanOptions{Preflight: passingPreflight, Install: install.Configuration{Image: "example.com/ccm:v1"}})
	if err != nil {
		t.Fatal(err)
	}
	good, err := EncodePlan(p)
	if err != nil {
		t.Fatal(err)
	}
	swapped := *p
	swapped.Spec.Steps = append([]Step{}, p.Spec.Steps...)
	swapped.Spec.Steps[3], swapped.Spec.Steps[4] = swapped.Spec.Steps[4], swapped.Spec.Steps[3]
	reordered, _ := EncodePlan(&swapped)
	for _, tc := range []struct{ name, data, want string }{
		{"unknown field", strings.Replace(string(good), "spec:\n", "spec:\n  surprise: true\n", 1), "unknown field"},
		{"wrong kind", strings.Replace(string(good), "kind: MigrationPlan", "kind: Plan", 1), "want awsccmctl.io/v1alpha1 MigrationPlan"},
		{"steps reordered", string(reordered), "does not run leader-migration in this order"},
		{"bad mode", strings.Replace(string(good), "mode: leader-migration", "mode: yolo", 1), `spec.mode "yolo"`},
		{"not YAML", "\t{", "not a YAML object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodePlan([]byte(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("DecodePlan = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// The gates read mirror Pods with preflight's node-file parser: kubeadm's
// command, kops' /go-runner args and a kops sh -c script.
func TestMirrorPodFlags(t *testing.T) {
	kops := kcmPod("cp-1")
	kops.Labels = map[string]string{"k8s-app": "kube-controller-manager"}
	kops.Spec.Containers[0].Command = []string{"/go-runner"}
	kops.Spec.Containers[0].Args = []string{"--log-file=/var/log/kube-controller-manager.log", "--also-stdout", "/usr/local/bin/kube-controller-manager", "--cloud-provider=aws", "--enable-leader-migration"}
	shell := kcmPod("cp-2")
	shell.Spec.Containers[0].Command = []string{"/bin/sh", "-c", "mkfifo /tmp/pipe; /usr/local/bin/kube-controller-manager --cloud-provider=external --v=2 1>>/var/log/kcm.log 2>&1"}
	kubeadm := kcmPod("cp-3", "--cloud-provider=external", "--enable-leader-migration=false")
	cs := fake.NewClientset(kops, shell, kubeadm)
	got, err := mirrorPodFlags(context.Background(), cs, "kube-controller-manager")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"cp-1": "in-tree with leader migration", "cp-2": "external", "cp-3": "external"}
	if len(got) != 3 {
		t.Fatalf("%d mirror Pods read, want 3: %+v", len(got), got)
	}
	for _, p := range got {
		if m := kcmMode(p.Flags); m != want[p.Node] {
			t.Errorf("%s: %s, want %s (%v)", p.Node, m, want[p.Node], p.Flags)
		}
		if p.Kops != (p.Node == "cp-1") || p.Image == "" {
			t.Errorf("%s: kops %v image %q", p.Node, p.Kops, p.Image)
		}
	}
	if got[0].Flags.Has("also-stdout") {
		t.Error("go-runner's own flags were read as the component's")
	}
}

func TestMigrationHolder(t *testing.T) {
	l := leases{
		KCM:       lease{Exists: true, Holder: "cp-1_aaa"},
		CCM:       lease{Exists: true, Holder: "cp-1_bbb"},
		Migration: lease{Exists: true, Holder: "cp-1_bbb"},
	}
	if got := l.migrationHolder(); got != "cloud-controller-manager" {
		t.Errorf("holder = %s", got)
	}
	l.Migration.Holder = "cp-1_aaa"
	if got := l.migrationHolder(); got != "kube-controller-manager" {
		t.Errorf("holder = %s", got)
	}
	l.Migration.Holder = "cp-2_ccc"
	if got := l.migrationHolder(); !strings.Contains(got, "unknown identity") {
		t.Errorf("holder = %s", got)
	}
}

func TestBuildPlanRestartMode(t *testing.T) {
	c := discover(t, "v1.26.13", kcmPod("cp-1", inTree...), kubeadmConfig(), node("cp-1", true), node("w-1", false))
	p, err := BuildPlan(c, PlanOptions{Mode: ModeRestart, Preflight: passingPreflight, Install: install.Configuration{Image: "example.com/ccm:v1"}})
	if err != nil {
		t.Fatal(err)
	}
	want := "verify-cluster,migration-rbac,kcm-external,install-ccm,kubeadm-config,kubelet-external/control-plane,kubelet-external/workers,finalize"
	if got := strings.Join(p.StepNames(), ","); got != want {
		t.Errorf("restart steps = %s, want %s", got, want)
	}
	_, s, _ := p.Step(StepKCMExternal)
	if s.Phase != PhaseControlPlaneExternal || !strings.Contains(s.Description, "no manager runs them until the CCM starts") {
		t.Errorf("kcm-external states the gap: %+v", s)
	}
	// The undo of each node step restores only its own files.
	for _, tc := range []struct{ step, phase, scope string }{
		{StepKCMExternal, PhaseRestore, ScopeControlPlane},
		{"kubelet-external/workers", PhaseRestore, ScopeKubelet},
	} {
		phase, scope, _, ok := p.NodePhase(tc.step, true)
		if !ok || phase != tc.phase || scope != tc.scope {
			t.Errorf("undo of %s: %s %s %v", tc.step, phase, scope, ok)
		}
	}
	if _, _, _, ok := p.NodePhase(StepInstallCCM, false); ok {
		t.Error("install-ccm is not a node step")
	}
}
