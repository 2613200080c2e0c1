package awschecks

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
	"github.com/awsccmctl/awsccmctl/internal/lbnames"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// lbSvc is LoadBalancer Service n (UID derived from n) in namespace
// default; mods change it.
func lbSvc(n int, name string, mods ...func(*corev1.Service)) corev1.Service {
	svc := corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(fmt.Sprintf("%08x-1111-4222-8333-444455556666", n))},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer},
	}
	for _, m := range mods {
		m(&svc)
	}
	return svc
}

func nlb(svc *corev1.Service) {
	svc.Annotations = map[string]string{lbnames.TypeAnnotation: lbnames.TypeNLB}
}

func hostname(h string) func(*corev1.Service) {
	return func(svc *corev1.Service) {
		svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{Hostname: h}}
	}
}

// lbFor is a load balancer named for svc, of type typ (classic, network,
// application), with tags given as key, value pairs.
func lbFor(svc corev1.Service, typ string, kv ...string) awsemu.LoadBalancer {
	tags := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		tags[kv[i]] = kv[i+1]
	}
	return awsemu.LoadBalancer{Name: lbnames.LoadBalancerName(&svc), Type: typ, Tags: tags,
		Subnets: []string{"subnet-0demo00000000000a", "subnet-0demo00000000000b"}}
}

const (
	clusterTag = "kubernetes.io/cluster/demo"
	snTag      = "kubernetes.io/service-name"
)

var (
	web     = lbSvc(1, "web")
	webNLB  = lbSvc(2, "web-nlb", nlb)
	fresh   = lbSvc(3, "fresh")
	webName = lbnames.LoadBalancerName(&web)
	nlbName = lbnames.LoadBalancerName(&webNLB)
)

func TestLoadBalancers(t *testing.T) {
	cases := []struct {
		name     string
		lbs      []awsemu.LoadBalancer
		services []corev1.Service
		server   func(*awsemu.Server)
		want     preflight.Status // of aws-load-balancers
		text     []string
		calls    map[string]int // ELB calls (nil: not checked)
	}{{
		name:  "no LoadBalancer Services",
		want:  skip,
		text:  []string{"no Services of type LoadBalancer"},
		calls: map[string]int{},
	}, {
		name: "only other controllers' Services",
		services: []corev1.Service{
			lbSvc(4, "ip", func(s *corev1.Service) { s.Spec.LoadBalancerClass = ptr.To("service.k8s.aws/nlb") }),
			lbSvc(5, "ext", func(s *corev1.Service) { s.Annotations = map[string]string{lbnames.TypeAnnotation: "external"} }),
		},
		want: pass,
		text: []string{"none of the 2 LoadBalancer Services is this CCM's; 2 left to another controller: default/ip (loadBalancerClass service.k8s.aws/nlb), " +
			"default/ext (service.beta.kubernetes.io/aws-load-balancer-type: external)"},
		calls: map[string]int{},
	}, {
		name: "adopted and created",
		lbs: []awsemu.LoadBalancer{lbFor(web, "classic", clusterTag, "owned", snTag, "default/web"),
			lbFor(webNLB, "network", clusterTag, "shared", snTag, "default/web-nlb")},
		services: []corev1.Service{web, webNLB, fresh, lbSvc(6, "ip", func(s *corev1.Service) { s.Annotations = map[string]string{lbnames.TypeAnnotation: "nlb-ip"} })},
		want:     pass,
		text: []string{"3 LoadBalancer Services of this CCM: 2 will be adopted: default/web (" + webName + "), default/web-nlb (" + nlbName + "); " +
			"1 will be created: default/fresh (" + lbnames.LoadBalancerName(&fresh) + "); 1 left to another controller: default/ip (service.beta.kubernetes.io/aws-load-balancer-type: nlb-ip)"},
		calls: map[string]int{"elasticloadbalancing:DescribeLoadBalancers": 1, "elasticloadbalancing:DescribeTags": 1,
			"elasticloadbalancingv2:DescribeLoadBalancers": 1, "elasticloadbalancingv2:DescribeTags": 1},
	}, {
		name:     "the legacy cluster tag counts",
		lbs:      []awsemu.LoadBalancer{lbFor(web, "classic", "KubernetesCluster", "demo", snTag, "default/web")},
		services: []corev1.Service{web},
		want:     pass,
		text:     []string{"1 will be adopted"},
	}, {
		name:     "tagged for another cluster",
		lbs:      []awsemu.LoadBalancer{lbFor(web, "classic", "kubernetes.io/cluster/other", "owned", snTag, "default/web")},
		services: []corev1.Service{web},
		want:     warn,
		text: []string{"1 of 1 LoadBalancer Services", "load balancer tagged for another cluster (1): default/web (" + webName + ": kubernetes.io/cluster/other=owned)",
			"a<Service UID without dashes>", "if cluster demo now owns " + webName + ": aws elb add-tags --load-balancer-names " + webName +
				" --tags Key=kubernetes.io/cluster/demo,Value=owned && aws elb remove-tags --load-balancer-names " + webName + " --tags Key=kubernetes.io/cluster/other",
			"otherwise delete and recreate Service default/web so it gets a new UID"},
	}, {
		name:     "tagged for another Service",
		lbs:      []awsemu.LoadBalancer{lbFor(webNLB, "network", clusterTag, "owned", snTag, "shop/web")},
		services: []corev1.Service{webNLB},
		want:     warn,
		text: []string{"load balancer tagged for another Service (1): default/web-nlb (" + nlbName + ": kubernetes.io/service-name=shop/web)",
			"aws elbv2 add-tags --resource-arns arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/net/" + nlbName + "/",
			"--tags Key=kubernetes.io/service-name,Value=default/web-nlb"},
	}, {
		name:     "without this cluster's tags",
		lbs:      []awsemu.LoadBalancer{lbFor(web, "classic")},
		services: []corev1.Service{web},
		want:     warn,
		text: []string{"load balancer without this cluster's tags (1): default/web (" + webName + " lacks kubernetes.io/cluster/demo and kubernetes.io/service-name)",
			"aws elb add-tags --load-balancer-names " + webName + " --tags Key=kubernetes.io/cluster/demo,Value=owned Key=kubernetes.io/service-name,Value=default/web"},
	}, {
		name:     "Service asks for an NLB, a Classic ELB has the name",
		lbs:      []awsemu.LoadBalancer{lbFor(webNLB, "classic", clusterTag, "owned", snTag, "default/web-nlb")},
		services: []corev1.Service{webNLB},
		want:     warn,
		text: []string{"only the other type of load balancer has the name, so the CCM would create a second one and leak the first (1)", "default/web-nlb (wants an NLB, but " + nlbName + " is a Classic ELB)",
			"kubectl annotate service -n default web-nlb service.beta.kubernetes.io/aws-load-balancer-type-",
			"aws elb delete-load-balancer --load-balancer-name " + nlbName},
		calls: map[string]int{"elasticloadbalancing:DescribeLoadBalancers": 1, "elasticloadbalancingv2:DescribeLoadBalancers": 1},
	}, {
		name:     "Service asks for a Classic ELB, an NLB has the name",
		lbs:      []awsemu.LoadBalancer{lbFor(web, "network", clusterTag, "owned", snTag, "default/web")},
		services: []corev1.Service{web},
		want:     warn,
		text: []string{"default/web (wants a Classic ELB, but " + webName + " is an ELBv2 network load balancer)",
			"kubectl annotate service -n default web service.beta.kubernetes.io/aws-load-balancer-type=nlb",
			"aws elbv2 delete-load-balancer --load-balancer-arn arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/net/" + webName + "/"},
	}, {
		name:     "an ALB holds the NLB's name",
		lbs:      []awsemu.LoadBalancer{lbFor(webNLB, "application")},
		services: []corev1.Service{webNLB},
		want:     warn,
		text:     []string{"is an ELBv2 application load balancer", "ELBv2 names are shared by all types"},
	}, {
		name:     "an ALB with a Classic Service's name is unrelated",
		lbs:      []awsemu.LoadBalancer{lbFor(web, "application")},
		services: []corev1.Service{web},
		want:     pass,
		text:     []string{"1 will be created"},
	}, {
		name: "status hostname of a load balancer with another name",
		lbs: []awsemu.LoadBalancer{{Name: "old-web", DNSName: "old-web-1234567890.us-east-1.elb.amazonaws.com",
			Tags: map[string]string{clusterTag: "owned", snTag: "default/web"}}},
		services: []corev1.Service{lbSvc(1, "web", hostname("OLD-web-1234567890.us-east-1.elb.amazonaws.com"))},
		want:     warn,
		text: []string{"status hostname but no load balancer by the name, so the CCM would create one with a new DNS name (1): default/web",
			"default/web (OLD-web-1234567890.us-east-1.elb.amazonaws.com; the CCM looks for " + webName + ", it is a Classic ELB, named old-web)",
			"point clients and DNS records at Service default/web's new status hostname, then delete the old one: aws elb delete-load-balancer --load-balancer-name old-web"},
		calls: map[string]int{"elasticloadbalancing:DescribeLoadBalancers": 1, "elasticloadbalancingv2:DescribeLoadBalancers": 1},
	}, {
		name:     "status hostname of no load balancer",
		services: []corev1.Service{lbSvc(2, "web-nlb", nlb, hostname("gone-0123456789abcdef.elb.us-east-1.amazonaws.com"))},
		want:     warn,
		text:     []string{"the CCM looks for " + nlbName + ", no load balancer of this region has that DNS name"},
	}, {
		name:     "an existing load balancer wins over the status hostname",
		lbs:      []awsemu.LoadBalancer{lbFor(web, "classic", clusterTag, "owned", snTag, "default/web")},
		services: []corev1.Service{lbSvc(1, "web", hostname("whatever.example.com"))},
		want:     pass,
		text:     []string{"1 will be adopted"},
	}, {
		name:     "ELBv2 access denied",
		services: []corev1.Service{web},
		server: func(s *awsemu.Server) {
			s.InjectFault(awsemu.Fault{Service: "elasticloadbalancingv2", Action: "DescribeLoadBalancers", Code: "AccessDenied", HTTPStatus: 403})
		},
		want: warn,
		text: []string{"list ELBv2 load balancers", "AccessDenied",
			"grant the caller elasticloadbalancing:DescribeLoadBalancers and elasticloadbalancing:DescribeTags (attach iam/preflight-policy.json)"},
	}, {
		name: "many problems are cut short",
		lbs: func() []awsemu.LoadBalancer {
			var out []awsemu.LoadBalancer
			for n := range 12 {
				out = append(out, lbFor(lbSvc(100+n, fmt.Sprintf("s%d", n)), "classic"))
			}
			return out
		}(),
		services: func() []corev1.Service {
			var out []corev1.Service
			for n := range 12 {
				out = append(out, lbSvc(100+n, fmt.Sprintf("s%d", n)))
			}
			return out
		}(),
		want: warn,
		text: []string{"12 of 12", "load balancer without this cluster's tags (12)", "default/s9 (", " and 2 more", "and likewise for the other 2 Services"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := start(t, func(f *awsemu.Fixture) { f.LoadBalancers = tc.lbs }, true)
			if tc.server != nil {
				tc.server(e.srv)
			}
			in := e.baseInput()
			in.LoadBalancerServices = tc.services
			got := run(t, in)[IDLoadBalancers]
			if got.Status != tc.want {
				t.Errorf("status %s, want %s\n  message: %s\n  fix: %s", got.Status, tc.want, got.Message, got.Remediation)
			}
			for _, s := range tc.text {
				if !strings.Contains(got.Message+"\n"+got.Remediation, s) {
					t.Errorf("%q not in\n  message: %s\n  fix: %s", s, got.Message, got.Remediation)
				}
			}
			if tc.calls != nil {
				if lb := lbCalls(e.srv); !maps.Equal(lb, tc.calls) {
					t.Errorf("ELB calls %v, want %v", lb, tc.calls)
				}
			}
			for k := range lbCalls(e.srv) {
				// Every call must be granted by iam/preflight-policy.json.
				op := k[strings.IndexByte(k, ':')+1:]
				service := map[bool]string{true: awsapi.ServiceELBv2, false: awsapi.ServiceELB}[strings.HasPrefix(k, "elasticloadbalancingv2:")]
				if !registeredFor(service, op, awsapi.ComponentPreflight) {
					t.Errorf("%s is not registered for %s", k, awsapi.ComponentPreflight)
				}
			}
		})
	}
}

// TestLoadBalancerCallsArePerPage: 50 Services whose load balancers all
// exist, among 450 other Classic load balancers, cost one listing per 400
// load balancers and API, and one DescribeTags per 20 matches: 7 calls,
// not one or more per Service.
func TestLoadBalancerCallsArePerPage(t *testing.T) {
	var services []corev1.Service
	var lbs []awsemu.LoadBalancer
	for n := range 450 {
		lbs = append(lbs, awsemu.LoadBalancer{Name: fmt.Sprintf("unrelated-%d", n)})
	}
	for n := range 50 {
		typ, mods := "classic", []func(*corev1.Service){}
		if n%2 == 1 {
			typ, mods = "network", append(mods, nlb)
		}
		svc := lbSvc(1000+n, fmt.Sprintf("svc-%d", n), mods...)
		services = append(services, svc)
		lbs = append(lbs, lbFor(svc, typ, clusterTag, "owned", snTag, "default/"+svc.Name))
	}
	e := start(t, func(f *awsemu.Fixture) { f.LoadBalancers = lbs }, true)
	in := e.baseInput()
	in.LoadBalancerServices = services
	got := run(t, in)[IDLoadBalancers]
	if got.Status != pass || !strings.Contains(got.Message, "50 LoadBalancer Services of this CCM: 50 will be adopted") {
		t.Fatalf("%s: %s", got.Status, got.Message)
	}
	want := map[string]int{
		"elasticloadbalancing:DescribeLoadBalancers":   2, // 475 Classic load balancers, 400 a page
		"elasticloadbalancing:DescribeTags":            2, // 25 matches, 20 a call
		"elasticloadbalancingv2:DescribeLoadBalancers": 1,
		"elasticloadbalancingv2:DescribeTags":          2,
	}
	if calls := lbCalls(e.srv); !maps.Equal(calls, want) {
		t.Fatalf("ELB calls %v, want %v", calls, want)
	}
}

// lbCalls returns the emulator's load-balancing call counts.
func lbCalls(s *awsemu.Server) map[string]int {
	out := map[string]int{}
	for k, v := range s.CallCounts() {
		if strings.HasPrefix(k, "elasticloadbalancing") {
			out[k] = v
		}
	}
	return out
}

func registeredFor(service, op, component string) bool {
	for _, a := range awsapi.Actions(component) {
		if a.Service == service && a.Operation == op {
			return true
		}
	}
	return false
}
