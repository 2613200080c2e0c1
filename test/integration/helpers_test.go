package integration

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	cloudproviderapi "k8s.io/cloud-provider/api"

	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// instanceSeq makes instance IDs and IPs unique across the package's tests,
// which share one emulator and one cluster.
var instanceSeq atomic.Int64

var subnets = []string{"subnet-0itest00000000001", "subnet-0itest00000000002", "subnet-0itest00000000003"}

type instanceOpts struct {
	state    string
	public   bool
	untagged bool
	// typ is the instance type (default m6i.large).
	typ string
}

// addInstance adds an instance to the emulator: primary IP plus one
// secondary IP on the primary ENI (a VPC CNI pod IP), optionally public.
func addInstance(t testing.TB, o instanceOpts) awsemu.Instance {
	t.Helper()
	n := instanceSeq.Add(1)
	z := int(n % 3)
	host := int(n/3) + 10
	ip := fmt.Sprintf("10.0.%d.%d", z*64+host/250, host%250+1)
	podIP := fmt.Sprintf("10.0.%d.%d", z*64+32+host/250, host%250+1)
	state := o.state
	if state == "" {
		state = "running"
	}
	in := awsemu.Instance{
		ID:               fmt.Sprintf("i-%017x", 0xabc0000000+n),
		Type:             "m6i.large",
		State:            state,
		SubnetID:         subnets[z],
		PrivateIP:        ip,
		ENIs:             []awsemu.ENI{{DeviceIndex: 0, PrivateIPs: []string{ip, podIP}}},
		SecurityGroupIDs: []string{nodeGroupID},
		Tags:             map[string]string{"kubernetes.io/cluster/" + clusterID: "owned", "Name": fmt.Sprintf("node-%d", n)},
	}
	if o.typ != "" {
		in.Type = o.typ
	}
	if o.untagged {
		in.Tags = map[string]string{"Name": fmt.Sprintf("node-%d", n)}
	}
	if o.public {
		in.PublicIP = fmt.Sprintf("54.0.%d.%d", host/250, host%250+1)
	}
	if err := env.aws.AddInstance(in); err != nil {
		t.Fatalf("add instance: %v", err)
	}
	got, ok := env.aws.Instance(in.ID)
	if !ok {
		t.Fatalf("instance %s not stored", in.ID)
	}
	return got
}

type nodeOpts struct {
	name       string
	providerID string
	notReady   bool
}

// registerNode creates a Node the way a kubelet with
// --cloud-provider=external does: the uninitialized taint, no providerID
// unless --provider-id was given, and a Ready condition as the kubelet posts.
func registerNode(t testing.TB, o nodeOpts) {
	t.Helper()
	ready := corev1.ConditionTrue
	if o.notReady {
		ready = corev1.ConditionFalse
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: o.name, Labels: map[string]string{"kubernetes.io/hostname": o.name}},
		Spec: corev1.NodeSpec{
			ProviderID: o.providerID,
			Taints:     []corev1.Taint{{Key: cloudproviderapi.TaintExternalCloudProvider, Value: "true", Effect: corev1.TaintEffectNoSchedule}},
		},
	}
	created, err := env.kube.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create node %s: %v", o.name, err)
	}
	created.Status.Conditions = []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: ready, Reason: "KubeletReady",
		LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(),
	}}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		latest, err := getNode(context.Background(), o.name)
		if err != nil {
			return err
		}
		latest.Status.Conditions = created.Status.Conditions
		_, err = env.kube.CoreV1().Nodes().UpdateStatus(context.Background(), latest, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("set status of node %s: %v", o.name, err)
	}
	t.Cleanup(func() {
		_ = env.kube.CoreV1().Nodes().Delete(context.Background(), o.name, metav1.DeleteOptions{})
	})
}

// waitFor polls cond until it is true or timeout passes.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true, cond)
	if err != nil {
		t.Fatalf("waiting %s for %s: %v", timeout, what, err)
	}
}

func getNode(ctx context.Context, name string) (*corev1.Node, error) {
	return env.kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
}

func initialized(n *corev1.Node) bool {
	if n.Spec.ProviderID == "" {
		return false
	}
	for _, taint := range n.Spec.Taints {
		if taint.Key == cloudproviderapi.TaintExternalCloudProvider {
			return false
		}
	}
	return true
}

func hasTaint(n *corev1.Node, key string) bool {
	for _, taint := range n.Spec.Taints {
		if taint.Key == key {
			return true
		}
	}
	return false
}

func nodeGone(ctx context.Context, name string) (bool, error) {
	_, err := getNode(ctx, name)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return false, err
}

// waitLeader waits until the CCM holds its leader-election Lease.
func waitLeader(ctx context.Context, kube kubernetes.Interface) error {
	return wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		l, err := kube.CoordinationV1().Leases("kube-system").Get(ctx, "cloud-controller-manager", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		return holder(l) != "", nil
	})
}

func holder(l *coordinationv1.Lease) string {
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// ec2Calls returns the emulator's DescribeInstances count.
func describeInstancesCalls() int { return env.aws.Calls("ec2", "DescribeInstances") }

// events lists the events recorded about a Node.
func nodeEvents(ctx context.Context, name string) ([]corev1.Event, error) {
	list, err := env.kube.CoreV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Node,involvedObject.name=" + name})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

var updateOpts = metav1.UpdateOptions{}
