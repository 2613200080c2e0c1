//go:build linux

package migrationbench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/awsccmctl/awsccmctl/internal/testbed/staticpod"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// The cluster a kubeadm 1.26 install on EC2 with the in-tree provider
// leaves: three control-plane nodes running kube-controller-manager
// --cloud-provider=aws from its static Pod, N workers, kubeadm-config,
// and Services of every kind, some with AWS load balancers.
const (
	clusterName = "demo"
	region      = "us-east-1"
	// workers is how many goroutines send the bench's own writes: kubelets
	// do not queue behind each other.
	workers = 32
)

var zones = []string{"us-east-1a", "us-east-1b", "us-east-1c"}

// node is one seeded Node: its name, instance and address.
type node struct {
	Name, ID, IP, Zone string
	ControlPlane       bool
}

// clusterNodes returns n Nodes named by private DNS name as the in-tree
// kubelet names them (hostname-override is the instance's private DNS
// name), the first three the control plane.
func clusterNodes(n int) []node {
	out := make([]node, n)
	for i := range out {
		z := i % 3
		ip := fmt.Sprintf("10.0.%d.%d", z*64+(i/3)/250, (i/3)%250+4)
		out[i] = node{
			Name: fmt.Sprintf("ip-%s.ec2.internal", dashed(ip)), ID: fmt.Sprintf("i-%017x", 0xbe0000000+i),
			IP: ip, Zone: zones[z], ControlPlane: i < 3,
		}
	}
	return out
}

func dashed(ip string) string {
	b := []byte(ip)
	for i, c := range b {
		if c == '.' {
			b[i] = '-'
		}
	}
	return string(b)
}

// nodeImages is what a v1.26 kubelet lists in status.images on a worker
// (it lists up to 50): the CNI, the proxy, the pause image and a few
// workloads, each by tag and digest. They make a Node the size it is in a
// real cluster, which is what a list of every Node costs.
var nodeImages = func() []corev1.ContainerImage {
	names := []string{
		"602401143452.dkr.ecr.us-east-1.amazonaws.com/amazon-k8s-cni:v1.15.4",
		"602401143452.dkr.ecr.us-east-1.amazonaws.com/amazon-k8s-cni-init:v1.15.4",
		"registry.k8s.io/kube-proxy:v1.26.13",
		"registry.k8s.io/pause:3.9",
		"registry.k8s.io/coredns/coredns:v1.9.3",
		"public.ecr.aws/ebs-csi-driver/aws-ebs-csi-driver:v1.25.0",
		"public.ecr.aws/eks-distro/kubernetes-csi/node-driver-registrar:v2.9.0-eks-1-28-6",
		"public.ecr.aws/eks-distro/kubernetes-csi/livenessprobe:v2.11.0-eks-1-28-6",
		"quay.io/prometheus/node-exporter:v1.7.0",
		"docker.io/fluent/fluent-bit:2.2.0",
		"registry.example.com/shop/frontend:2024.11.3",
		"registry.example.com/shop/checkout:2024.11.3",
		"registry.example.com/shop/catalog:2024.11.2",
		"docker.io/library/nginx:1.25.3",
		"docker.io/library/redis:7.2.3",
	}
	out := make([]corev1.ContainerImage, len(names))
	for i, n := range names {
		repo := n[:len(n)-len(tagOf(n))-1]
		out[i] = corev1.ContainerImage{
			Names:     []string{fmt.Sprintf("%s@sha256:%064x", repo, 0x5eed0000+i*7919), n},
			SizeBytes: int64(20_000_000 + i*3_700_000),
		}
	}
	return out
}()

func tagOf(image string) string {
	for i := len(image) - 1; i >= 0; i-- {
		if image[i] == ':' {
			return image[i+1:]
		}
	}
	return ""
}

// inTreeNode is the Node a v1.26 kubelet with --cloud-provider=aws
// registers and keeps posting (legacy-cloud-providers aws, kubelet
// initialNode and setters): providerID aws:///<zone>/<id>; the zone,
// region and instance-type labels in both spellings; InternalIP,
// Hostname and InternalDNS from IMDS; capacity, conditions, node info and
// images as the kubelet posts them.
func inTreeNode(n node, podCIDR string) *corev1.Node {
	const typ = "m6i.large"
	now := metav1.Now()
	labels := map[string]string{
		"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
		corev1.LabelArchStable: "amd64", corev1.LabelOSStable: "linux", corev1.LabelHostname: n.Name,
		corev1.LabelTopologyZone: n.Zone, corev1.LabelTopologyRegion: region,
		corev1.LabelFailureDomainBetaZone: n.Zone, corev1.LabelFailureDomainBetaRegion: region,
		corev1.LabelInstanceTypeStable: typ, corev1.LabelInstanceType: typ,
	}
	if n.ControlPlane {
		labels["node-role.kubernetes.io/control-plane"] = ""
		labels["node.kubernetes.io/exclude-from-external-load-balancers"] = ""
	}
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Reason: reason, Message: msg, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	res := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("7934100Ki"),
		corev1.ResourceEphemeralStorage: resource.MustParse("83873772Ki"), corev1.ResourcePods: resource.MustParse("29"),
		"hugepages-1Gi": resource.MustParse("0"), "hugepages-2Mi": resource.MustParse("0"),
		"attachable-volumes-aws-ebs": resource.MustParse("25"),
	}
	alloc := res.DeepCopy()
	alloc[corev1.ResourceCPU] = resource.MustParse("1930m")
	alloc[corev1.ResourceMemory] = resource.MustParse("7244948Ki")
	alloc[corev1.ResourceEphemeralStorage] = resource.MustParse("76224326324")
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: labels, Annotations: map[string]string{
			"kubeadm.alpha.kubernetes.io/cri-socket":                 "unix:///var/run/containerd/containerd.sock",
			"node.alpha.kubernetes.io/ttl":                           "0",
			"volumes.kubernetes.io/controller-managed-attach-detach": "true",
		}},
		Spec: corev1.NodeSpec{ProviderID: "aws:///" + n.Zone + "/" + n.ID, PodCIDR: podCIDR, PodCIDRs: []string{podCIDR}},
		Status: corev1.NodeStatus{
			Capacity: res, Allocatable: alloc,
			Conditions: []corev1.NodeCondition{
				cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
				cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
				cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
				cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"),
			},
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: n.IP}, {Type: corev1.NodeHostName, Address: n.Name}, {Type: corev1.NodeInternalDNS, Address: n.Name},
			},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
			NodeInfo: corev1.NodeSystemInfo{
				MachineID: fmt.Sprintf("ec2%029x", 0xabc000+len(n.Name)*7+int(n.IP[len(n.IP)-1])), SystemUUID: fmt.Sprintf("ec2%05x-%04x-4e1f-8c2a-%012x", 0x3f1a, len(n.ID), 0xbe0000000),
				BootID: "7f7c1e52-1d5e-4b8a-9a1c-2b1f3c4d5e6f", KernelVersion: "5.15.0-1051-aws", OSImage: "Ubuntu 22.04.3 LTS",
				ContainerRuntimeVersion: "containerd://1.6.24", KubeletVersion: "v1.26.13",
				KubeProxyVersion: "v1.26.13", //nolint:staticcheck // SA1019: deprecated since 1.31; a v1.26 kubelet reports it
				OperatingSystem:  "linux", Architecture: "amd64",
			},
			Images: nodeImages,
		},
	}
	return node
}

// subnetOf is the fixture's subnet of each zone.
var subnetOf = map[string]string{"us-east-1a": "subnet-0demo00000000000a", "us-east-1b": "subnet-0demo00000000000b", "us-east-1c": "subnet-0demo00000000000c"}

// addInstances gives every Node its running instance in the emulator,
// which plan's preflight asks for by providerID.
func addInstances(nodes []node) error {
	for _, n := range nodes {
		in := awsemu.Instance{
			ID: n.ID, Type: "m6i.large", SubnetID: subnetOf[n.Zone], PrivateIP: n.IP,
			SecurityGroupIDs: []string{"sg-0demo000000000001"},
			Tags:             map[string]string{"kubernetes.io/cluster/" + clusterName: "owned", "Name": n.Name},
		}
		if err := env.aws.AddInstance(in); err != nil {
			return err
		}
		if got, ok := env.aws.Instance(n.ID); !ok || got.PrivateDNSName != n.Name {
			return fmt.Errorf("instance %s: private DNS name %q, want the Node's name %s", n.ID, got.PrivateDNSName, n.Name)
		}
	}
	return nil
}

// parallel runs fn(0..n-1) on workers goroutines and returns the first
// error.
func parallel(n int, fn func(i int) error) error {
	var next atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				if err := fn(i); err != nil {
					once.Do(func() { first = err })
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// seedNodes registers every Node with its status in one create, as the
// kubelet does.
func seedNodes(ctx context.Context, nodes []node) error {
	return parallel(len(nodes), func(i int) error {
		n := inTreeNode(nodes[i], fmt.Sprintf("10.%d.%d.0/24", 128+i/256, i%256))
		if _, err := env.kube.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create Node %s: %w", n.Name, err)
		}
		return nil
	})
}

// kubeadmConfig is kube-system/kubeadm-config as kubeadm 1.26 writes it
// for an in-tree AWS cluster.
const kubeadmConfig = `apiVersion: kubeadm.k8s.io/v1beta3
kind: ClusterConfiguration
kubernetesVersion: v1.26.13
clusterName: kubernetes
controlPlaneEndpoint: cp.demo.example.com:6443
apiServer:
  extraArgs:
    cloud-config: /etc/kubernetes/cloud.conf
    cloud-provider: aws
controllerManager:
  extraArgs:
    allocate-node-cidrs: "true"
    cloud-config: /etc/kubernetes/cloud.conf
    cloud-provider: aws
    cluster-name: demo
    configure-cloud-routes: "false"
networking:
  podSubnet: 10.128.0.0/9
  serviceSubnet: 10.96.0.0/12
`

// seedControlPlane writes kubeadm-config and, on each control-plane
// node, the mirror Pods of kube-apiserver and kube-controller-manager as
// the kubelet posts them from kubeadm's manifests. Plan and the gates
// read only the mirror Pods' flags; no kube-controller-manager runs (the
// kubelet steps measured here do not restart one).
func seedControlPlane(ctx context.Context, cps []node) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kubeadm-config", Namespace: "kube-system"},
		Data: map[string]string{"ClusterConfiguration": kubeadmConfig}}
	if _, err := env.kube.CoreV1().ConfigMaps("kube-system").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return err
	}
	for _, n := range cps {
		for _, p := range []*corev1.Pod{kcmPod(n), apiserverPod(n)} {
			if _, err := env.kube.CoreV1().Pods("kube-system").Create(ctx, p, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("create mirror Pod %s: %w", p.Name, err)
			}
		}
	}
	return nil
}

func mirrorPod(component string, n node, image string, command []string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: component + "-" + n.Name, Namespace: "kube-system",
			Labels:      map[string]string{"component": component, "tier": "control-plane"},
			Annotations: map[string]string{staticpod.AnnotationConfigMirror: fmt.Sprintf("%x", len(command)*7919+len(n.Name)), "kubernetes.io/config.source": "file"},
		},
		Spec: corev1.PodSpec{
			NodeName: n.Name, HostNetwork: true, PriorityClassName: "system-node-critical",
			Containers: []corev1.Container{{Name: component, Image: image, Command: command,
				VolumeMounts: []corev1.VolumeMount{{Name: "cloud-config", MountPath: "/etc/kubernetes/cloud.conf", ReadOnly: true}}}},
			Volumes: []corev1.Volume{{Name: "cloud-config", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/etc/kubernetes/cloud.conf"}}}},
		},
	}
}

func kcmPod(n node) *corev1.Pod {
	return mirrorPod("kube-controller-manager", n, "registry.k8s.io/kube-controller-manager:v1.26.13", []string{
		"kube-controller-manager", "--allocate-node-cidrs=true",
		"--authentication-kubeconfig=/etc/kubernetes/controller-manager.conf", "--authorization-kubeconfig=/etc/kubernetes/controller-manager.conf",
		"--bind-address=127.0.0.1", "--client-ca-file=/etc/kubernetes/pki/ca.crt",
		"--cloud-config=/etc/kubernetes/cloud.conf", "--cloud-provider=aws", "--cluster-cidr=10.128.0.0/9", "--cluster-name=" + clusterName,
		"--configure-cloud-routes=false", "--controllers=*,bootstrapsigner,tokencleaner",
		"--kubeconfig=/etc/kubernetes/controller-manager.conf", "--leader-elect=true",
		"--root-ca-file=/etc/kubernetes/pki/ca.crt", "--service-account-private-key-file=/etc/kubernetes/pki/sa.key",
		"--service-cluster-ip-range=10.96.0.0/12", "--use-service-account-credentials=true",
	})
}

func apiserverPod(n node) *corev1.Pod {
	return mirrorPod("kube-apiserver", n, "registry.k8s.io/kube-apiserver:v1.26.13", []string{
		"kube-apiserver", "--advertise-address=" + n.IP, "--allow-privileged=true", "--authorization-mode=Node,RBAC",
		"--client-ca-file=/etc/kubernetes/pki/ca.crt", "--cloud-config=/etc/kubernetes/cloud.conf", "--cloud-provider=aws",
		"--enable-admission-plugins=NodeRestriction", "--etcd-servers=https://127.0.0.1:2379",
		"--secure-port=6443", "--service-cluster-ip-range=10.96.0.0/12",
	})
}

// seedServices creates services Services in namespace default, one in ten
// of type LoadBalancer with the hostname the in-tree service controller
// wrote (a Classic ELB's DNS name); the rest ClusterIP.
func seedServices(ctx context.Context, services int) (loadBalancers int, err error) {
	var lbs atomic.Int64
	err = parallel(services, func(i int) error {
		name := fmt.Sprintf("svc-%04d", i)
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": name}},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": name},
				Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}},
		}
		lb := i%10 == 0
		if lb {
			svc.Spec.Type = corev1.ServiceTypeLoadBalancer
		}
		created, err := env.kube.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create Service %s: %w", name, err)
		}
		if !lb {
			return nil
		}
		lbs.Add(1)
		host := fmt.Sprintf("a%032x-%d.%s.elb.amazonaws.com", i+0xa0000, 1000000+i, region)
		created.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{Hostname: host}}
		if _, err := env.kube.CoreV1().Services("default").UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("set Service %s's load balancer: %w", name, err)
		}
		return nil
	})
	return int(lbs.Load()), err
}
