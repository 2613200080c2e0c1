package integration

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cloudproviderapi "k8s.io/cloud-provider/api"
)

// TestInitializationKeepsWhatTheCacheDrops: the controllers' Node cache
// holds Nodes without managedFields, images and volumes (ccmapp's
// trimForCache), and the cloud node controller writes Nodes from that
// cache (a PUT of the object, then a status patch). On the real apiserver
// the initialized Node still has the kubelet's images and volumes, its
// annotations, and every field manager it had.
func TestInitializationKeepsWhatTheCacheDrops(t *testing.T) {
	in := addInstance(t, instanceOpts{})
	name := in.PrivateDNSName
	images := []corev1.ContainerImage{
		{Names: []string{"registry.k8s.io/pause@sha256:7c38f2", "registry.k8s.io/pause:3.10"}, SizeBytes: 320368},
		{Names: []string{"602401143452.dkr.ecr.us-east-1.amazonaws.com/amazon-k8s-cni:v1.19.0"}, SizeBytes: 51234567},
	}
	volumes := []corev1.UniqueVolumeName{"kubernetes.io/csi/ebs.csi.aws.com^vol-0123456789abcdef0"}
	annotations := map[string]string{"node.alpha.kubernetes.io/ttl": "0", "example.com/owner": "team-a"}
	// Status on create, as a kubelet registers.
	created, err := env.kube.CoreV1().Nodes().Create(context.Background(), &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}, Annotations: annotations},
		Spec:       corev1.NodeSpec{Taints: []corev1.Taint{{Key: cloudproviderapi.TaintExternalCloudProvider, Value: "true", Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{
			Conditions:   []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
			Images:       images,
			VolumesInUse: volumes,
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.kube.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	if len(created.Status.Images) != len(images) || len(created.ManagedFields) == 0 {
		t.Fatalf("the apiserver did not store the status given on create (images %d, managedFields %d)", len(created.Status.Images), len(created.ManagedFields))
	}

	var node *corev1.Node
	waitFor(t, 30*time.Second, "node initialized with addresses", func(ctx context.Context) (bool, error) {
		n, err := getNode(ctx, name)
		if err != nil {
			return false, nil //nolint:nilerr // poll predicate: not ready yet, keep waiting
		}
		node = n
		return initialized(n) && len(n.Status.Addresses) > 0, nil
	})

	if !equality.Semantic.DeepEqual(node.Status.Images, images) {
		t.Errorf("images after initialization = %v, want %v", node.Status.Images, images)
	}
	if !equality.Semantic.DeepEqual(node.Status.VolumesInUse, volumes) {
		t.Errorf("volumesInUse after initialization = %v, want %v", node.Status.VolumesInUse, volumes)
	}
	for k, v := range annotations {
		if node.Annotations[k] != v {
			t.Errorf("annotation %s = %q, want %q", k, node.Annotations[k], v)
		}
	}
	managers := func(n *corev1.Node) []string {
		var out []string
		for _, e := range n.ManagedFields {
			out = append(out, e.Manager+"/"+string(e.Operation)+"/"+e.Subresource)
		}
		return out
	}
	got := managers(node)
	for _, m := range managers(created) {
		if !slices.Contains(got, m) {
			t.Errorf("field manager %s lost: managedFields after initialization name %v", m, got)
		}
	}
	if len(got) <= len(created.ManagedFields) {
		t.Errorf("managedFields after initialization name %v: the CCM's writes are not recorded", got)
	}
}
