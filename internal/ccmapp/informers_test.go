package ccmapp

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	cloudcontrollerconfig "k8s.io/cloud-provider/app/config"
	"k8s.io/controller-manager/pkg/clientbuilder"
)

// fullNode is a Node with every field a kubelet and the controllers set.
func fullNode() *corev1.Node {
	now := metav1.NewTime(time.Unix(1700000000, 0))
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: "ip-10-0-0-1.ec2.internal", ResourceVersion: "42", UID: "u-1",
			Labels:      map[string]string{"topology.kubernetes.io/zone": "us-east-1a", "node.kubernetes.io/instance-type": "m6i.large"},
			Annotations: map[string]string{"node.alpha.kubernetes.io/ttl": "0", "alpha.kubernetes.io/provided-node-ip": "10.0.0.1"},
			Finalizers:  []string{"example.com/keep"},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:status":{}}`)},
				{Manager: "aws-cloud-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{}}`)},
			},
		},
		Spec: corev1.NodeSpec{
			ProviderID: "aws:///us-east-1a/i-0123456789abcdef0",
			PodCIDR:    "10.128.0.0/24", PodCIDRs: []string{"10.128.0.0/24"},
			Taints:        []corev1.Taint{{Key: "node.kubernetes.io/not-ready", Effect: corev1.TaintEffectNoSchedule}},
			Unschedulable: true,
		},
		Status: corev1.NodeStatus{
			Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1900m")},
			Conditions: []corev1.NodeCondition{
				{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now},
				{Type: corev1.NodeNetworkUnavailable, Status: corev1.ConditionFalse, Reason: "RouteCreated", LastTransitionTime: now},
			},
			Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}, {Type: corev1.NodeHostName, Address: "ip-10-0-0-1.ec2.internal"}},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
			NodeInfo:        corev1.NodeSystemInfo{KubeletVersion: "v1.37.0", OSImage: "Amazon Linux 2023"},
			Images: []corev1.ContainerImage{
				{Names: []string{"registry.k8s.io/pause@sha256:abc", "registry.k8s.io/pause:3.10"}, SizeBytes: 320000},
				{Names: []string{"602401143452.dkr.ecr.us-east-1.amazonaws.com/amazon-k8s-cni:v1.19.0"}, SizeBytes: 50000000},
			},
			VolumesInUse:    []corev1.UniqueVolumeName{"kubernetes.io/csi/ebs.csi.aws.com^vol-1"},
			VolumesAttached: []corev1.AttachedVolume{{Name: "kubernetes.io/csi/ebs.csi.aws.com^vol-1", DevicePath: "/dev/xvdba"}},
		},
	}
}

// trimmedNode is what the cache must keep of fullNode.
func trimmedNode() *corev1.Node {
	n := fullNode()
	n.ManagedFields = nil
	n.Status.Images = nil
	n.Status.VolumesInUse = nil
	n.Status.VolumesAttached = nil
	return n
}

func TestTrimForCache(t *testing.T) {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Annotations: map[string]string{"service.beta.kubernetes.io/aws-load-balancer-type": "nlb"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}},
		Spec:   corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 80}}},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{Hostname: "web.elb.amazonaws.com"}}}},
	}
	wantSvc := svc.DeepCopy()
	wantSvc.ManagedFields = nil

	cases := []struct {
		name string
		in   any
		want any
	}{
		{"node: managedFields, images and volumes dropped, the rest kept", fullNode(), trimmedNode()},
		{"node already trimmed: unchanged (idempotent)", trimmedNode(), trimmedNode()},
		{"service: managedFields dropped, the rest kept", svc, wantSvc},
		{"tombstone: the object inside is trimmed",
			cache.DeletedFinalStateUnknown{Key: "ip-10-0-0-1.ec2.internal", Obj: fullNode()},
			cache.DeletedFinalStateUnknown{Key: "ip-10-0-0-1.ec2.internal", Obj: trimmedNode()}},
		{"not an object: passed through", "just a string", "just a string"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := trimForCache(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(tc.want, got) {
				t.Errorf("trimForCache (-want +got):\n%s", diff.Diff(tc.want, got))
			}
		})
	}
}

// TestConfigureControllersTrimsTheSharedCache: after configureControllers
// the controllers' Node lister serves trimmed Nodes, and their clients
// come from the bounded builder.
func TestConfigureControllersTrimsTheSharedCache(t *testing.T) {
	kube := fake.NewClientset(fullNode())
	c := &cloudcontrollerconfig.Config{VersionedClient: kube, ClientBuilder: clientbuilder.SimpleControllerClientBuilder{}}
	c.ComponentConfig.Generic.MinResyncPeriod = metav1.Duration{Duration: 12 * time.Hour}
	cc := c.Complete()
	configureControllers(cc)

	if b, ok := cc.ClientBuilder.(boundedClientBuilder); !ok || b.max != MaxInFlightPerController {
		t.Errorf("ClientBuilder = %#v, want the bounded builder at %d in flight", cc.ClientBuilder, MaxInFlightPerController)
	}
	nodes := cc.SharedInformers.Core().V1().Nodes()
	lister := nodes.Lister()
	ctx, cancel := context.WithCancel(context.Background())
	// Stop the informers and wait for their goroutines: a reflector that
	// outlives the test races with the next test's klog setup.
	defer cc.SharedInformers.Shutdown()
	defer cancel()
	cc.SharedInformers.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), nodes.Informer().HasSynced) {
		t.Fatal("the Node informer did not sync")
	}
	got, err := lister.Get("ip-10-0-0-1.ec2.internal")
	if err != nil {
		t.Fatal(err)
	}
	if want := trimmedNode(); !equality.Semantic.DeepEqual(want, got) {
		t.Errorf("cached Node (-want +got):\n%s", diff.Diff(want, got))
	}
}
