package integration

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/component-base/configz"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/component-base/metrics"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
	"github.com/awsccmctl/awsccmctl/internal/ccmapp"
	"github.com/awsccmctl/awsccmctl/internal/testbed"
	"github.com/awsccmctl/awsccmctl/pkg/awscloud"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// managedClusterName is the second CCM's --cluster-name, which upstream
// hashes into the managed group's name.
const managedClusterName = "itest-managed"

// TestNLBManagedSecurityGroup runs a second CCM, with NLBSecurityGroupMode
// = Managed in its cloud config and its own control plane (the suite's CCM
// keeps the default mode, which the other NLB tests assert), against the
// suite's emulator under the least-privilege policy. A Service of type
// LoadBalancer with the NLB annotation gets an NLB with upstream's managed
// group attached, the group lets the source range in on the listener
// port, the node group lets the group (not CIDRs) in on the node port, and
// listeners carry the load balancer's tags; deleting the Service leaves
// none of it.
func TestNLBManagedSecurityGroup(t *testing.T) {
	testbed.Get(t)
	ctx := t.Context()
	cp, err := testbed.Start(ctx, testbed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	kube, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	startManagedCCM(t, cp)

	in := addInstance(t, instanceOpts{})
	registerManagedNode(t, kube, "managed-"+in.ID, fmt.Sprintf("aws:///%s/%s", in.AvailabilityZone, in.ID))

	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "nlb-managed-sg", Namespace: lbNamespace, Annotations: map[string]string{annPrefix + "type": "nlb"}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": "web"},
			LoadBalancerSourceRanges: []string{"10.1.0.0/16"},
			Ports:                    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}},
	}
	svc, err = kube.CoreV1().Services(lbNamespace).Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "load balancer of "+svc.Name, func(ctx context.Context) (bool, error) {
		s, err := kube.CoreV1().Services(lbNamespace).Get(ctx, svc.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil //nolint:nilerr // poll predicate: not ready yet, keep waiting
		}
		svc = s
		return len(s.Status.LoadBalancer.Ingress) > 0 && s.Status.LoadBalancer.Ingress[0].Hostname != "", nil
	})
	name := lbName(svc)
	groupName := upstreamNLBGroupName(managedClusterName, svc)
	groups := env.aws.SecurityGroupsNamed(groupName)
	if len(groups) != 1 {
		t.Fatalf("security groups named %s (upstream's name for --cluster-name=%s): %+v, want 1", groupName, managedClusterName, groups)
	}
	g := groups[0]
	if g.Description != "[k8s] Managed SecurityGroup for LoadBalancer" || g.VPCID != vpcID || g.Tags["kubernetes.io/cluster/"+clusterID] != "owned" {
		t.Errorf("group %s: description %q, VPC %s, tags %v", g.ID, g.Description, g.VPCID, g.Tags)
	}
	var lb awsemu.NetworkLBState
	for _, x := range env.aws.NetworkLoadBalancers() {
		if x.Name == name {
			lb = x
		}
	}
	if !slices.Equal(lb.SecurityGroups, []string{g.ID}) {
		t.Errorf("NLB %s security groups %v, want [%s] attached", name, lb.SecurityGroups, g.ID)
	}
	// Listeners are tagged as upstream tags them: as the load balancer.
	wantTags := map[string]string{"kubernetes.io/cluster/" + clusterID: "owned", "kubernetes.io/service-name": lbNamespace + "/" + svc.Name}
	for _, l := range lb.Listeners {
		if !maps.Equal(l.Tags, wantTags) {
			t.Errorf("listener %d tags %v, want %v", l.Port, l.Tags, wantTags)
		}
	}
	if got, want := renderRules(g.Ingress, false), []string{"icmp 3-4 10.1.0.0/16", "tcp 80-80 10.1.0.0/16"}; !slices.Equal(got, want) {
		t.Errorf("group ingress %v, want %v", got, want)
	}
	np := svc.Spec.Ports[0].NodePort
	wantNode := "tcp " + itoa(np) + "-" + itoa(np) + " " + g.ID + " kubernetes.io/rule/nlb/client=" + name
	if got := lbNodeRules(t, name); !slices.Equal(got, []string{wantNode}) {
		t.Errorf("node group rules of %s: %v, want only %q (the group let in, no CIDR)", name, got, wantNode)
	}

	if err := kube.CoreV1().Services(lbNamespace).Delete(ctx, svc.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "service "+svc.Name+" gone", func(ctx context.Context) (bool, error) {
		_, err := kube.CoreV1().Services(lbNamespace).Get(ctx, svc.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if left := env.aws.SecurityGroupsNamed(groupName); len(left) != 0 {
		t.Errorf("managed group left: %+v", left)
	}
	for _, x := range env.aws.NetworkLoadBalancers() {
		if x.Name == name {
			t.Errorf("NLB %s left", name)
		}
	}
	for _, tg := range env.aws.TargetGroups() {
		if strings.HasPrefix(tg.Name, "k8s-default-nlbmanag-") {
			t.Errorf("target group %s left", tg.Name)
		}
	}
	if left := lbNodeRules(t, name); len(left) != 0 {
		t.Errorf("node group rules of %s left: %v", name, left)
	}
}

// upstreamNLBGroupName is upstream's GetSecurityGroupNameForNLB.
func upstreamNLBGroupName(clusterName string, svc *corev1.Service) string {
	sum := sha256.Sum256([]byte(clusterName + svc.Name + svc.Namespace + string(svc.UID)))
	clean := regexp.MustCompile(`[^A-Za-z0-9]`)
	return fmt.Sprintf("k8s-%.8s-%.8s-%.10s", clean.ReplaceAllString(svc.Namespace, ""), clean.ReplaceAllString(svc.Name, ""), hex.EncodeToString(sum[:]))
}

// lbNodeRules are the node group's rules whose description names the
// load balancer.
func lbNodeRules(t *testing.T, name string) []string {
	t.Helper()
	var out []string
	for _, r := range describedRules(securityGroup(t, nodeGroupID).Ingress) {
		if strings.HasSuffix(r, "="+name) {
			out = append(out, r)
		}
	}
	return out
}

// startManagedCCM runs a second CCM on cp with NLBSecurityGroupMode =
// Managed, the suite's AWS environment and --cluster-name
// managedClusterName, until the test ends.
func startManagedCCM(t *testing.T, cp *testbed.ControlPlane) {
	t.Helper()
	conf := filepath.Join(t.TempDir(), "cloud.conf")
	body := fmt.Sprintf("[Global]\nRegion = %s\nVPC = %s\nKubernetesClusterID = %s\nNLBSecurityGroupMode = Managed\n", region, vpcID, clusterID)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	// The suite's CCM applied the process's logging configuration; the
	// second one applies the same (-v=2), which component-base allows
	// only when told to.
	logsapi.ReapplyHandling = logsapi.ReapplyHandlingIgnoreUnchanged
	// Each CCM registers its configuration for /configz, once per process;
	// the suite's CCM serves no /configz (--secure-port=0).
	configz.Delete("cloudcontrollermanager.config.k8s.io")
	stop := make(chan struct{})
	ready := make(chan struct{})
	cmd, err := ccmapp.NewCommand(ccmapp.Options{
		Registerer:   metrics.NewKubeRegistry(),
		Stop:         stop,
		OnCloudError: func(err error) { t.Errorf("second CCM: cloud provider failed: %v", err) },
		Ready:        func(*awsapi.Metrics, *awscloud.Cloud) { close(ready) },
	})
	if err != nil {
		t.Fatal(err)
	}
	cmd.SetArgs([]string{
		"--kubeconfig=" + cp.KubeconfigPath,
		"--cloud-provider=aws",
		"--cloud-config=" + conf,
		"--cluster-name=" + managedClusterName,
		"--secure-port=0",
		"--leader-elect=false",
		"--configure-cloud-routes=false",
		"--aws-request-timeout=" + requestTimeout.String(),
		"-v=2",
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := cmd.Execute(); err != nil {
			t.Logf("second CCM exited: %v", err)
		}
	}()
	t.Cleanup(func() {
		close(stop)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Log("second CCM still running 30s after stop")
		}
	})
	select {
	case <-ready:
	case <-time.After(60 * time.Second):
		t.Fatal("the second CCM did not build its cloud provider within 60s")
	}
}

// registerManagedNode creates a Ready Node with providerID on the second
// control plane, as a kubelet with --cloud-provider=external and
// --provider-id does, and waits until the second CCM initialised it.
func registerManagedNode(t *testing.T, kube kubernetes.Interface, name, providerID string) {
	t.Helper()
	ctx := t.Context()
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
		Spec:       corev1.NodeSpec{ProviderID: providerID, Taints: []corev1.Taint{{Key: "node.cloudprovider.kubernetes.io/uninitialized", Value: "true", Effect: corev1.TaintEffectNoSchedule}}},
	}
	if _, err := kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
		_, err = kube.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "node "+name+" initialised", func(ctx context.Context) (bool, error) {
		n, err := kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		return err == nil && initialized(n), nil
	})
}
