package clusterchecks

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"
	ktesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/awsccmctl/awsccmctl/internal/preflight"
)

// TestReadsEachKindOnceWithPagination runs every check over a fake cluster
// of 1,234 Nodes and proves the reads: the Nodes come in pages of 500 (three
// list calls following the Continue token), and every other kind is read
// exactly once although several checks use it. Nothing is written.
func TestReadsEachKindOnceWithPagination(t *testing.T) {
	const nodeCount = 1234
	nodes := make([]corev1.Node, nodeCount)
	for i := range nodes {
		nodes[i] = corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("ip-10-0-%d-%d.ec2.internal", i/250, i%250),
				Labels: map[string]string{corev1.LabelHostname: fmt.Sprintf("ip-10-0-%d-%d.ec2.internal", i/250, i%250)}},
			Spec: corev1.NodeSpec{ProviderID: fmt.Sprintf("aws:///us-east-1a/i-%017x", i+1)},
			Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.37.1"},
				Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.0.%d.%d", i/250, i%250)}}},
		}
		addCloudLabels(&nodes[i])
	}
	cp := nodes[0].Name
	objs := []runtime.Object{
		mirrorPod("kube-apiserver-"+cp, cp, labelKubeadm, apiServer, "registry.k8s.io/kube-apiserver:v1.37.1",
			[]string{"kube-apiserver", "--enable-admission-plugins=NodeRestriction"}),
		mirrorPod("kube-controller-manager-"+cp, cp, labelKubeadm, kcm, "registry.k8s.io/kube-controller-manager:v1.37.1",
			[]string{"kube-controller-manager", "--cloud-provider=external"}),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: kubeSystem, Name: kubeadmConfigMap},
			Data: map[string]string{clusterConfigKey: "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\ncontrollerManager:\n  extraArgs:\n  - name: cloud-provider\n    value: external\n"}},
		&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: kubeSystem, Name: ccmLease},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("cp_1"), LeaseDurationSeconds: ptr.To[int32](15), RenewTime: ptr.To(metav1.NewMicroTime(time.Now()))}},
	}
	cs := fake.NewClientset(objs...)
	cs.Discovery().(*fakediscovery.FakeDiscovery).FakedServerVersion = &version.Info{GitVersion: "v1.37.1", Platform: "linux/amd64"}

	var mu sync.Mutex
	var pages []metav1.ListOptions
	cs.PrependReactor("list", "nodes", func(a ktesting.Action) (bool, runtime.Object, error) {
		opts := a.(ktesting.ListActionImpl).ListOptions
		mu.Lock()
		pages = append(pages, opts)
		mu.Unlock()
		start := 0
		if opts.Continue != "" {
			start, _ = strconv.Atoi(opts.Continue)
		}
		end := len(nodes)
		if opts.Limit > 0 {
			end = min(start+int(opts.Limit), len(nodes))
		}
		l := &corev1.NodeList{Items: nodes[start:end]}
		if end < len(nodes) {
			l.Continue = strconv.Itoa(end)
		}
		return true, l, nil
	})

	// The fake clientset cannot answer access reviews; this identity may
	// not use nodes/proxy, so nodes-kubelet-config skips.
	cs.PrependReactor("create", "selfsubjectaccessreviews", func(ktesting.Action) (bool, runtime.Object, error) {
		return true, &authorizationv1.SelfSubjectAccessReview{Status: authorizationv1.SubjectAccessReviewStatus{Allowed: false}}, nil
	})

	checks := Checks(Input{Client: cs, Mode: preflight.ModePostInstall})
	rep, err := preflight.Run(context.Background(), checks, preflight.Options{Mode: preflight.ModePostInstall})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.ID == IDNodesKubeletConfig && f.Status == preflight.StatusSkip {
			continue
		}
		if f.Status != preflight.StatusPass {
			t.Errorf("%s = %s: %s", f.ID, f.Status, f.Message)
		}
	}

	wantPages := []metav1.ListOptions{{Limit: 500}, {Limit: 500, Continue: "500"}, {Limit: 500, Continue: "1000"}}
	if fmt.Sprint(pages) != fmt.Sprint(wantPages) {
		t.Errorf("node list calls = %+v, want %+v", pages, wantPages)
	}
	calls := map[string]int{}
	for _, a := range cs.Actions() {
		key := a.GetVerb() + " " + a.GetResource().Resource
		calls[key]++
		// An access review is a question, not a change.
		if a.GetVerb() != "get" && a.GetVerb() != "list" && a.GetResource().Resource != "selfsubjectaccessreviews" {
			t.Errorf("a check wrote: %s %s", a.GetVerb(), a.GetResource().Resource)
		}
		if l, ok := a.(ktesting.ListActionImpl); ok && l.ListOptions.Limit != PageSize {
			t.Errorf("%s listed without Limit %d: %+v", key, PageSize, l.ListOptions)
		}
	}
	want := map[string]int{"get version": 1, "list nodes": 3, "list pods": 1, "list leases": 1, "get configmaps": 1, "list persistentvolumes": 1, "list storageclasses": 1, "create selfsubjectaccessreviews": 1}
	if fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("API calls = %v, want %v", calls, want)
	}
	if f := finding(rep, IDNodesProviderID); f.Message != "an aws:///<zone>/<instance-id> providerID on every Node (1234 Nodes)" {
		t.Errorf("%s message %q", IDNodesProviderID, f.Message)
	}
}

// TestUnreachable skips everything behind cluster-reachable.
func TestUnreachable(t *testing.T) {
	cs := fake.NewClientset()
	cs.Discovery().(*fakediscovery.FakeDiscovery).PrependReactor("get", "version", func(ktesting.Action) (bool, runtime.Object, error) {
		return true, nil, fmt.Errorf("dial tcp 127.0.0.1:6443: connect: connection refused")
	})
	rep, err := preflight.Run(context.Background(), Checks(Input{Client: cs, Mode: preflight.ModePreInstall}), preflight.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		want := preflight.StatusSkip
		if f.ID == IDClusterReachable {
			want = preflight.StatusFail
		}
		if f.Status != want {
			t.Errorf("%s = %s (%s), want %s", f.ID, f.Status, f.Message, want)
		}
	}
	if a := cs.Actions(); len(a) != 1 || a[0].GetResource().Resource != "version" {
		t.Errorf("want only the /version call, got %v", a)
	}
}

// TestForbidden reports a read the identity may not do, with the grant.
func TestForbidden(t *testing.T) {
	cs := fake.NewClientset()
	cs.PrependReactor("list", "nodes", func(ktesting.Action) (bool, runtime.Object, error) {
		return true, nil, forbidden("nodes")
	})
	rep, err := preflight.Run(context.Background(), Checks(Input{Client: cs, Mode: preflight.ModePreInstall}), preflight.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := finding(rep, IDNodesProviderID)
	if f.Status != preflight.StatusWarn || !contains(f.Remediation, "get and list on nodes") {
		t.Errorf("%s = %s: %s | %s", f.ID, f.Status, f.Message, f.Remediation)
	}
}

func finding(r preflight.Report, id string) preflight.Finding {
	for _, f := range r.Findings {
		if f.ID == id {
			return f
		}
	}
	return preflight.Finding{}
}

// mirrorPod is a control-plane mirror Pod labelled key=comp.
func mirrorPod(name, node, key, comp, image string, command []string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: kubeSystem, Name: name, Labels: map[string]string{key: comp, "tier": "control-plane"},
			Annotations: map[string]string{"kubernetes.io/config.mirror": "0123456789abcdef", "kubernetes.io/config.source": "file"}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: comp, Image: image, Command: command}}},
	}
}

// TestGivenNodesAreNotListedAgain: the CLI lists the Nodes once for the AWS
// input and hands them over; the checks must use them, not list again.
func TestGivenNodesAreNotListedAgain(t *testing.T) {
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-0-1.ec2.internal"}, Spec: corev1.NodeSpec{ProviderID: "aws:///us-east-1a/i-00000000000000001"}}
	cs := fake.NewClientset()
	cs.Discovery().(*fakediscovery.FakeDiscovery).FakedServerVersion = &version.Info{GitVersion: "v1.37.1"}
	rep, err := preflight.Run(context.Background(), Checks(Input{Client: cs, Mode: preflight.ModePreInstall, Nodes: []corev1.Node{n}}), preflight.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range cs.Actions() {
		if a.GetVerb() == "list" && a.GetResource().Resource == "nodes" {
			t.Fatal("the checks listed Nodes although they were given")
		}
	}
	if f := finding(rep, IDNodesProviderID); f.Message != "an aws:///<zone>/<instance-id> providerID on every Node (1 Node)" {
		t.Errorf("the given Node was not used: %s", f.Message)
	}
}
