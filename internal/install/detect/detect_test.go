package detect

import (
	"bytes"
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/pkg/cloudconfig"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// Demo fixture instances (test/awsemu/testdata/demo.yaml), tagged
// kubernetes.io/cluster/demo.
const demoA, demoB = "i-0a1b2c3d4e5f60001", "i-0a1b2c3d4e5f60002"

func node(name, region, providerID string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}, Spec: corev1.NodeSpec{ProviderID: providerID}}
	if region != "" {
		n.Labels[corev1.LabelTopologyRegion] = region
	}
	return n
}

// detector is a Detector on a fake clientset at server version gitVersion
// with objs, and the real EC2 client against the AWS emulator.
func detector(t *testing.T, gitVersion string, objs ...runtime.Object) (Detector, *bytes.Buffer, *awsemu.Server) {
	t.Helper()
	e := awsemu.StartT(t, awsemu.DemoFixture())
	e.Env().Set(t)
	cs := fake.NewClientset(objs...)
	cs.Discovery().(*fakediscovery.FakeDiscovery).FakedServerVersion = &version.Info{GitVersion: gitVersion}
	var log bytes.Buffer
	return New(cs, nil, &log), &log, e.Server
}

func TestDetect(t *testing.T) {
	pid := func(zone, id string) string { return "aws:///" + zone + "/" + id }
	cases := []struct {
		name            string
		server          string
		cc              cloudconfig.Global
		nodes           []runtime.Object
		region, cluster string
		log             []string
		ec2Calls        int
	}{
		{name: "region from Node labels, cluster ID from instance tags", server: "v1.37.1",
			nodes:  []runtime.Object{node("a", "us-east-1", pid("us-east-1a", demoA)), node("b", "us-east-1", pid("us-east-1b", demoB)), node("c", "", "")},
			region: "us-east-1", cluster: "demo", ec2Calls: 1,
			log: []string{"Kubernetes v1.37.1 (API server): the CCM is built for it", "region us-east-1: from the topology.kubernetes.io/region label of 2 Nodes (--region overrides)",
				"cluster ID demo: from the kubernetes.io/cluster/demo tag of 2 of 2 Nodes' instances"}},
		{name: "the cloud config wins; nothing looked up", server: "v1.38.0", cc: cloudconfig.Global{Region: "eu-west-1", KubernetesClusterID: "prod"},
			nodes:  []runtime.Object{node("a", "us-east-1", pid("us-east-1a", demoA))},
			region: "eu-west-1", cluster: "prod", ec2Calls: 0,
			log: []string{"region eu-west-1, cluster ID prod: from the cloud config"}},
		{name: "an old control plane is warned about", server: "v1.35.4",
			nodes:  []runtime.Object{node("a", "us-east-1", "")},
			region: "us-east-1", ec2Calls: 0,
			log: []string{"WARNING: this CCM is built for Kubernetes 1.37", "cluster ID: no Node has an AWS providerID to look up; the CCM reads it from its own instance's tags"}},
		{name: "Nodes in several regions", server: "v1.37.1",
			nodes: []runtime.Object{node("a", "us-east-1", ""), node("b", "eu-west-1", "")},
			log:   []string{"region: the Nodes name several (eu-west-1, us-east-1); not set, pass --region", "cluster ID: not looked up (no AWS region)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, log, srv := detector(t, tc.server, tc.nodes...)
			cc := tc.cc
			v := install.Values{CloudConfig: &cloudconfig.Config{Global: cc}}
			v.Default()
			if err := d.Detect(context.Background(), &v); err != nil {
				t.Fatal(err)
			}
			if got := v.CloudConfig.Global.Region; got != tc.region {
				t.Errorf("region %q, want %q", got, tc.region)
			}
			if got := v.CloudConfig.ClusterID(); got != tc.cluster {
				t.Errorf("cluster ID %q, want %q", got, tc.cluster)
			}
			for _, want := range tc.log {
				if !strings.Contains(log.String(), want) {
					t.Errorf("log lacks %q:\n%s", want, log.String())
				}
			}
			if got := srv.CallCounts()["ec2:DescribeInstances"]; got != tc.ec2Calls {
				t.Errorf("DescribeInstances calls %d, want %d", got, tc.ec2Calls)
			}
		})
	}
}
