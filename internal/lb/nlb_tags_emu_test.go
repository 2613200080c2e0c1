package lb

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	corev1 "k8s.io/api/core/v1"

	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// TestEmuNLBListenerTags: listeners this CCM creates carry upstream's tags
// (the load balancer's: cluster, Service name, additional tags), whether
// with a new NLB or added to an existing one. Listeners found on an
// adopted NLB with fewer tags (the in-tree provider tagged none, earlier
// versions of this CCM only the cluster tag) are left as found, as
// upstream leaves them: adopting costs no write. A steady sync reads the
// tags of the load balancer only.
func TestEmuNLBListenerTags(t *testing.T) {
	t.Parallel()
	svc := emuService("nlb-tags", map[string]string{nlbType: "nlb", annPrefix + "additional-resource-tags": "team=web"},
		corev1.ServicePort{Name: "http", Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP},
		corev1.ServicePort{Name: "alt", Port: 8080, NodePort: 30081, Protocol: corev1.ProtocolTCP},
		corev1.ServicePort{Name: "extra", Port: 9090, NodePort: 30090, Protocol: corev1.ProtocolTCP})
	name := lbName(svc)
	want := map[string]string{"kubernetes.io/cluster/demo": "owned", "kubernetes.io/service-name": "default/nlb-tags", "team": "web"}
	tg := func(port, nodePort int32) string {
		return upstreamTargetGroupName("demo", "default", "nlb-tags", port, nodePort)
	}
	e := newEmu(t, emuOptions{fixture: func(f *awsemu.Fixture) {
		f.LoadBalancers = append(f.LoadBalancers, awsemu.LoadBalancer{
			Name: name, Type: awsemu.LBTypeNetwork, Subnets: []string{emuSubnetA, emuSubnetB},
			Tags: want,
			Listeners: []awsemu.LBListener{
				// As this CCM tagged listeners before: the cluster tag only.
				{Protocol: "TCP", Port: 80, TargetGroup: tg(80, 30080), Tags: map[string]string{"kubernetes.io/cluster/demo": "owned"}},
				// As the in-tree provider left them: no tags at all.
				{Protocol: "TCP", Port: 8080, TargetGroup: tg(8080, 30081)},
			},
			TargetGroups: []awsemu.TargetGroup{
				{Name: tg(80, 30080), Protocol: "TCP", Port: 30080, HealthCheckProtocol: "TCP", HealthCheckIntervalSeconds: 30, HealthyThreshold: 3, UnhealthyThreshold: 3, Tags: want},
				{Name: tg(8080, 30081), Protocol: "TCP", Port: 30081, HealthCheckProtocol: "TCP", HealthCheckIntervalSeconds: 30, HealthyThreshold: 3, UnhealthyThreshold: 3, Tags: want},
			},
		})
	}})
	nodes := e.nodes(emuA, emuB)
	before := map[int32]string{}
	for _, l := range e.nlb(name).Listeners {
		before[l.Port] = l.ARN
	}

	e.reset()
	e.ensure(svc, nodes)
	// The two adopted listeners keep their tags; the third port's
	// listener is created with its tags.
	muts := e.mutations()
	wantEq(t, "AddTags calls", muts[v2+"AddTags"], 0)
	wantEq(t, "CreateListener calls", muts[v2+"CreateListener"], 1)
	wantEq(t, "DeleteListener calls", muts[v2+"DeleteListener"], 0)
	lb := e.nlb(name)
	if len(lb.Listeners) != 3 {
		t.Fatalf("listeners %+v, want 3", lb.Listeners)
	}
	adopted := map[int32]map[string]string{80: {"kubernetes.io/cluster/demo": "owned"}, 8080: nil, 9090: want}
	for _, l := range lb.Listeners {
		if len(adopted[l.Port]) == 0 && len(l.Tags) == 0 {
			continue // untagged, as the in-tree provider left it
		}
		wantEq(t, "tags of the listener on "+itoa32(l.Port), l.Tags, adopted[l.Port])
		if arn, ok := before[l.Port]; ok && arn != l.ARN {
			t.Errorf("listener on %d was recreated (%s, was %s)", l.Port, l.ARN, arn)
		}
	}
	// Only the load balancer's tags are read.
	reads := e.lbCalls()
	wantEq(t, "DescribeTags calls", reads[v2+"DescribeTags"], 1)

	e.reset()
	e.ensure(svc, nodes)
	e.wantMutations("re-sync", map[string]int{})
	wantEq(t, "DescribeTags calls of the re-sync", e.lbCalls()[v2+"DescribeTags"], 1)

	// AWS agrees: DescribeTags of the created listener returns the tags.
	out, err := e.adminELBv2().DescribeListeners(e.ctx(), &elbv2.DescribeListenersInput{LoadBalancerArn: aws.String(lb.ARN)})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range out.Listeners {
		if aws.ToInt32(l.Port) != 9090 {
			continue
		}
		tags, err := e.adminELBv2().DescribeTags(e.ctx(), &elbv2.DescribeTagsInput{ResourceArns: []string{aws.ToString(l.ListenerArn)}})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, x := range tags.TagDescriptions[0].Tags {
			got[aws.ToString(x.Key)] = aws.ToString(x.Value)
		}
		wantEq(t, "DescribeTags of "+aws.ToString(l.ListenerArn), got, want)
	}

	e.delete(svc)
	e.wantNothingLeft()
}
