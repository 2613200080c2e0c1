package lb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/smithy-go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
	"github.com/awsccmctl/awsccmctl/internal/instances"
	"github.com/awsccmctl/awsccmctl/internal/lbnames"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// Shared helpers of the emulator tests (*_emu_test.go): the real
// Reconciler, with real aws-sdk-go-v2 clients (signing, retries, error
// decoding) and the real instance view, against an in-process
// test/awsemu seeded with its demo cluster. Every test starts its own
// emulator, so tests run in parallel and read AWS state back from it.

// The demo fixture (test/awsemu/testdata/demo.yaml).
const (
	emuCluster    = "demo"
	emuVPC        = "vpc-0demo000000000001"
	emuNodeSG     = "sg-0demo000000000001"
	emuA          = "i-0a1b2c3d4e5f60001" // running, us-east-1a
	emuB          = "i-0a1b2c3d4e5f60002" // running, us-east-1b
	emuC          = "i-0a1b2c3d4e5f60003" // running, us-east-1c
	emuStopped    = "i-0a1b2c3d4e5f60004"
	emuTerminated = "i-0a1b2c3d4e5f60005"
	emuSubnetA    = "subnet-0demo00000000000a" // demo-public-a, 10.0.1.0/24
	emuSubnetB    = "subnet-0demo00000000000b" // demo-public-b, 10.0.2.0/24
	emuSubnetC    = "subnet-0demo00000000000c" // demo-private-c, 10.0.3.0/24
	emuCert       = "arn:aws:acm:us-east-1:123456789012:certificate/0a1b2c3d-0000-4000-8000-00000000abcd"
	emuCert2      = "arn:aws:acm:us-east-1:123456789012:certificate/0a1b2c3d-0000-4000-8000-00000000ef01"
	annPrefix     = "service.beta.kubernetes.io/aws-load-balancer-"
	// Groups a Service brings; emuOptions.groups adds them to the VPC.
	emuBYO   = "sg-0b0b0000000000b01"
	emuExtra = "sg-0b0b0000000000b02"
)

// emuRunning are the demo's running instances.
var emuRunning = []string{emuA, emuB, emuC}

// emuOptions change the setup of one test.
type emuOptions struct {
	// fixture changes the demo fixture before the emulator starts.
	fixture func(*awsemu.Fixture)
	// options are the reconciler's cloud-config options.
	options Options
	// byoGroups adds emuBYO and emuExtra to the VPC (untagged, no rules).
	byoGroups bool
	// policy is the file of iam/ the reconciler's AWS calls are evaluated
	// against (default: the strictest, ccm-policy-least-privilege.json).
	policy string
	// withoutAction removes one action from the policy, to show that
	// enforcement is real.
	withoutAction string
}

// emu is one emulator and one reconciler on it.
type emu struct {
	t   *testing.T
	srv *awsemu.Emulator
	r   *Reconciler
	rec *record.FakeRecorder
	// viewClock is the instance view's clock: Step it past the view's
	// MaxAge to make it ask EC2 again.
	viewClock *clocktesting.FakeClock
	// nodeIngress and groups are the node group's rules and the number of
	// security groups before the test did anything.
	nodeIngress []string
	groups      int
	// seen are the events drained since the last reset.
	seen []string
}

// newEmu starts an emulator with the demo fixture and builds a reconciler
// for cluster demo on it.
func newEmu(t *testing.T, o emuOptions) *emu {
	t.Helper()
	f := awsemu.DemoFixture()
	if o.byoGroups {
		for _, id := range []string{emuBYO, emuExtra} {
			f.SecurityGroups = append(f.SecurityGroups, awsemu.SecurityGroup{ID: id, Name: "byo-" + id, Description: "brought by the Service", VPCID: emuVPC})
		}
	}
	if o.fixture != nil {
		o.fixture(f)
	}
	srv := awsemu.StartT(t, f)
	enforcePolicy(t, srv, o.policy, o.withoutAction)
	e := &emu{t: t, srv: srv}
	e.r, e.rec, e.viewClock = newEmuReconciler(t, srv, o.options)
	e.nodeIngress = emuRules(e.group(emuNodeSG).Ingress, true)
	e.groups = srv.Inventory().SecurityGroups
	return e
}

// policyLeastPrivilege is the generated policy the emulator tests run
// under unless they choose another: a call it does not grant, or grants
// only on other resources, fails the test as it would fail in AWS.
const policyLeastPrivilege = "ccm-policy-least-privilege.json"

// policyBroad is the default policy (every action on "*"). Adopting an
// untagged load balancer needs it: the least-privilege policy lets the CCM
// change only resources that carry the cluster tag, and adoption changes
// untagged target groups and security groups before (or without) tagging
// them.
const policyBroad = "ccm-policy.json"

// enforcePolicy makes srv evaluate every request signed with the
// reconciler's key against iam/<file> (default policyLeastPrivilege) for
// cluster emuCluster, as IAM does, without the action without (if set).
// Requests signed with emuAdminKey (the admin clients) may do anything.
func enforcePolicy(t *testing.T, srv *awsemu.Emulator, file, without string) {
	t.Helper()
	if file == "" {
		file = policyLeastPrivilege
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "iam", file))
	if err != nil {
		t.Fatal(err)
	}
	var doc awsapi.PolicyDocument
	if err := json.Unmarshal([]byte(strings.ReplaceAll(string(raw), awsapi.ClusterIDPlaceholder, emuCluster)), &doc); err != nil {
		t.Fatalf("iam/%s: %v", file, err)
	}
	removed := false
	for i := range doc.Statement {
		st := &doc.Statement[i]
		n := len(st.Action)
		st.Action = slices.DeleteFunc(st.Action, func(a string) bool { return a == without })
		removed = removed || len(st.Action) < n
	}
	doc.Statement = slices.DeleteFunc(doc.Statement, func(st awsapi.Statement) bool { return len(st.Action) == 0 })
	if without != "" && !removed {
		t.Fatalf("iam/%s does not grant %s", file, without)
	}
	policy, err := doc.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.AddPrincipal(awsemu.Principal{AccessKeyID: awsemu.DefaultAccessKeyID, Policies: []string{string(policy)}}); err != nil {
		t.Fatalf("iam/%s: %v", file, err)
	}
	all := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`
	if err := srv.AddPrincipal(awsemu.Principal{AccessKeyID: emuAdminKey, Arn: "arn:aws:iam::123456789012:role/test-setup", Policies: []string{all}}); err != nil {
		t.Fatal(err)
	}
}

// emuAdminKey signs the admin clients: tests set up AWS state with them
// that the CCM's policy would not let it create (other clusters' or
// untagged resources).
const emuAdminKey = "AKIDEMUTESTSETUP"

// adminELBv2 is an ELBv2 client outside the CCM's policy.
func (e *emu) adminELBv2() *elbv2.Client {
	cfg := aws.Config{Region: e.srv.Region(), Credentials: credentials.NewStaticCredentialsProvider(emuAdminKey, "awsemu-secret", "")}
	return elbv2.NewFromConfig(cfg, func(o *elbv2.Options) { o.BaseEndpoint, o.HTTPClient = aws.String(e.srv.URL), awsemu.HTTPClient() })
}

// newEmuReconciler is the one place that builds a Config: real SDK clients
// pointed at srv, the real instance view over its EC2, and a FakeRecorder.
func newEmuReconciler(t *testing.T, srv *awsemu.Emulator, opts Options) (*Reconciler, *record.FakeRecorder, *clocktesting.FakeClock) {
	t.Helper()
	cfg := aws.Config{
		Region:      srv.Region(),
		Credentials: credentials.NewStaticCredentialsProvider(awsemu.DefaultAccessKeyID, "awsemu-secret", ""),
		// The SDK's standard retryer, as in production (3 attempts), with
		// short backoffs so fault tests take milliseconds, and no client-side
		// retry quota (tests inject many faults in a row).
		Retryer: func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxBackoff = 2 * time.Millisecond
				o.RateLimiter = ratelimit.None
			})
		},
	}
	url := aws.String(srv.URL)
	ec2c := ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.BaseEndpoint, o.HTTPClient = url, awsemu.HTTPClient() })
	elbc := elb.NewFromConfig(cfg, func(o *elb.Options) { o.BaseEndpoint, o.HTTPClient = url, awsemu.HTTPClient() })
	elbv2c := elbv2.NewFromConfig(cfg, func(o *elbv2.Options) { o.BaseEndpoint, o.HTTPClient = url, awsemu.HTTPClient() })

	viewClock := clocktesting.NewFakeClock(time.Now())
	view := instances.New(instances.NewEC2(ec2c), instances.Options{VPCID: emuVPC, BatchWindow: time.Millisecond, Clock: viewClock})
	rec := record.NewFakeRecorder(100)
	r := New(Config{
		EC2: NewEC2(ec2c), ELB: NewELB(elbc), ELBv2: NewELBv2(elbv2c),
		Env:       Env{Region: srv.Region(), VPCID: emuVPC, ClusterID: emuCluster},
		Options:   opts,
		Instances: view,
		Events:    rec,
	})
	return r, rec, viewClock
}

// emuService is a LoadBalancer Service in namespace default with a UID
// derived from its name; without ports it has http 80 -> node port 30080.
func emuService(name string, ann map[string]string, ports ...corev1.ServicePort) *corev1.Service {
	if len(ports) == 0 {
		ports = []corev1.ServicePort{{Name: "http", Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP}}
	}
	h := fnv.New64a()
	h.Write([]byte(name))
	uid := fmt.Sprintf("5e4c1d2e-8a7b-4c3d-9e0f-%012x", h.Sum64()&0xffffffffffff)
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(uid), Annotations: maps.Clone(ann)},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeLoadBalancer, Ports: ports,
			ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyCluster,
		},
	}
}

// withAnn returns a copy of svc with annotations set (an empty value deletes
// the annotation) and mod applied.
func withAnn(svc *corev1.Service, ann map[string]string, mod ...func(*corev1.Service)) *corev1.Service {
	out := svc.DeepCopy()
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	for k, v := range ann {
		if v == "" {
			delete(out.Annotations, k)
		} else {
			out.Annotations[k] = v
		}
	}
	for _, m := range mod {
		m(out)
	}
	return out
}

// nodes returns Nodes for the instances, with AWS providerIDs.
func (e *emu) nodes(ids ...string) []*corev1.Node {
	e.t.Helper()
	var out []*corev1.Node
	for _, id := range ids {
		in, ok := e.srv.Instance(id)
		if !ok {
			e.t.Fatalf("no instance %s in the emulator", id)
		}
		out = append(out, &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "node-" + strings.TrimPrefix(id, "i-"), Labels: map[string]string{}},
			Spec:       corev1.NodeSpec{ProviderID: "aws:///" + in.AvailabilityZone + "/" + id},
		})
	}
	return out
}

// labelNode sets a label on the node of instance id among nodes.
func labelNode(nodes []*corev1.Node, id, k, v string) {
	for _, n := range nodes {
		if strings.HasSuffix(n.Spec.ProviderID, "/"+id) {
			n.Labels[k] = v
		}
	}
}

func (e *emu) ctx() context.Context { return e.t.Context() }

// ensure runs Ensure and fails the test on an error.
func (e *emu) ensure(svc *corev1.Service, nodes []*corev1.Node) *corev1.LoadBalancerStatus {
	e.t.Helper()
	st, err := e.r.Ensure(e.ctx(), svc, nodes)
	if err != nil {
		e.t.Fatalf("Ensure(%s): %v", svc.Name, err)
	}
	if len(st.Ingress) != 1 || st.Ingress[0].Hostname == "" {
		e.t.Fatalf("Ensure(%s) status %+v, want one hostname", svc.Name, st)
	}
	return st
}

// update runs Update and fails the test on an error.
func (e *emu) update(svc *corev1.Service, nodes []*corev1.Node) {
	e.t.Helper()
	if err := e.r.Update(e.ctx(), svc, nodes); err != nil {
		e.t.Fatalf("Update(%s): %v", svc.Name, err)
	}
}

// delete runs Delete and fails the test on an error.
func (e *emu) delete(svc *corev1.Service) {
	e.t.Helper()
	if err := e.r.Delete(e.ctx(), svc); err != nil {
		e.t.Fatalf("Delete(%s): %v", svc.Name, err)
	}
}

// exists runs Get and returns whether it reports a load balancer.
func (e *emu) exists(svc *corev1.Service) bool {
	e.t.Helper()
	_, ok, err := e.r.Get(e.ctx(), svc)
	if err != nil {
		e.t.Fatalf("Get(%s): %v", svc.Name, err)
	}
	return ok
}

// wantDeleteRetried runs Delete twice while fault id is injected: each
// must fail with want in its error, after, if set, checks what is left,
// and Get must keep reporting the load balancer. Then it clears the fault
// and wants one Delete to leave nothing and Get to report nothing.
func (e *emu) wantDeleteRetried(svc *corev1.Service, id int, want string, after func(i int)) {
	e.t.Helper()
	for i := 1; i <= 2; i++ {
		if err := e.r.Delete(e.ctx(), svc); err == nil || !strings.Contains(err.Error(), want) {
			e.t.Fatalf("Delete %d = %v, want an error with %s", i, err, want)
		}
		if after != nil {
			after(i)
		}
		if !e.exists(svc) {
			e.t.Fatalf("Delete %d: Get reports nothing, with %+v left", i, e.srv.Inventory())
		}
	}
	e.srv.ClearFault(id)
	e.delete(svc)
	e.wantNothingLeft()
	if e.exists(svc) {
		e.t.Error("Get reports the load balancer after Delete")
	}
}

// reset forgets the calls and events so far.
func (e *emu) reset() {
	e.srv.ResetCalls()
	events(e.rec)
	e.seen = nil
}

// mutations counts the state-changing calls since the last reset, keyed
// "service:Action".
func (e *emu) mutations() map[string]int {
	out := map[string]int{}
	for _, c := range e.srv.CallLog() {
		if c.Mutating() {
			out[c.Service+":"+c.Action]++
		}
	}
	return out
}

// lbCalls counts every call since the last reset but the instance view's.
func (e *emu) lbCalls() map[string]int {
	out := map[string]int{}
	for k, v := range e.srv.CallCounts() {
		if k != "ec2:DescribeInstances" {
			out[k] = v
		}
	}
	return out
}

// wantMutations fails unless the mutating calls since the last reset are
// exactly want.
func (e *emu) wantMutations(step string, want map[string]int) {
	e.t.Helper()
	if got := e.mutations(); !maps.Equal(got, want) {
		e.t.Errorf("%s: mutating calls\n got %s\nwant %s", step, formatCalls(got), formatCalls(want))
	}
}

func formatCalls(calls map[string]int) string {
	if len(calls) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(calls)) {
		parts = append(parts, k+"="+strconv.Itoa(calls[k]))
	}
	return strings.Join(parts, " ")
}

func sumCalls(calls map[string]int) int {
	n := 0
	for _, v := range calls {
		n += v
	}
	return n
}

// classic returns the Classic load balancer called name.
func (e *emu) classic(name string) awsemu.ClassicLBState {
	e.t.Helper()
	for _, lb := range e.srv.ClassicLoadBalancers() {
		if lb.Name == name {
			return lb
		}
	}
	e.t.Fatalf("no Classic load balancer %s in AWS", name)
	return awsemu.ClassicLBState{}
}

// nlb returns the network load balancer called name.
func (e *emu) nlb(name string) awsemu.NetworkLBState {
	e.t.Helper()
	for _, lb := range e.srv.NetworkLoadBalancers() {
		if lb.Name == name {
			return lb
		}
	}
	e.t.Fatalf("no network load balancer %s in AWS", name)
	return awsemu.NetworkLBState{}
}

// listenerGroups returns the NLB's target groups by listener port.
func (e *emu) listenerGroups(name string) map[int32]awsemu.TargetGroupState {
	e.t.Helper()
	byARN := map[string]awsemu.TargetGroupState{}
	for _, tg := range e.srv.TargetGroups() {
		byARN[tg.ARN] = tg
	}
	out := map[int32]awsemu.TargetGroupState{}
	for _, l := range e.nlb(name).Listeners {
		tg, ok := byARN[l.TargetGroupARN]
		if !ok {
			e.t.Fatalf("listener %d forwards to unknown target group %s", l.Port, l.TargetGroupARN)
		}
		out[l.Port] = tg
	}
	return out
}

// group returns the security group id.
func (e *emu) group(id string) awsemu.SecurityGroup {
	e.t.Helper()
	for _, g := range e.srv.SecurityGroups() {
		if g.ID == id {
			return g
		}
	}
	e.t.Fatalf("no security group %s in AWS", id)
	return awsemu.SecurityGroup{}
}

// managedGroup returns the k8s-elb-<name> group, which must exist.
func (e *emu) managedGroup(name string) awsemu.SecurityGroup {
	e.t.Helper()
	gs := e.srv.SecurityGroupsNamed("k8s-elb-" + name)
	if len(gs) != 1 {
		e.t.Fatalf("security groups named k8s-elb-%s: %d, want 1", name, len(gs))
	}
	return gs[0]
}

// nodeRules returns the node group's rules that are not the fixture's.
func (e *emu) nodeRules() []string {
	e.t.Helper()
	var out []string
	for _, r := range emuRules(e.group(emuNodeSG).Ingress, true) {
		if !slices.Contains(e.nodeIngress, r) {
			out = append(out, r)
		}
	}
	return out
}

// wantNothingLeft fails unless AWS holds no load balancer, listener,
// target group or security group the test's reconciler made, and the node
// group has exactly its fixture rules.
func (e *emu) wantNothingLeft() {
	e.t.Helper()
	inv := e.srv.Inventory()
	if inv.ClassicLBs+inv.NetworkLBs+inv.Listeners+inv.TargetGroups != 0 {
		e.t.Errorf("AWS still holds load-balancer resources: %+v", inv)
	}
	if inv.SecurityGroups != e.groups {
		e.t.Errorf("%d security groups, want the fixture's %d", inv.SecurityGroups, e.groups)
	}
	if left := e.srv.SecurityGroupsNamed("k8s-elb-"); len(left) != 0 {
		e.t.Errorf("managed security groups left: %+v", left)
	}
	if left := e.nodeRules(); len(left) != 0 {
		e.t.Errorf("node group rules left: %q", left)
	}
}

// emuRules renders rules as "proto from-to source[ description]", one
// source a line, sorted.
func emuRules(perms []awsemu.Permission, withDesc bool) []string {
	var out []string
	for _, p := range perms {
		from, to := int32(0), int32(0)
		if p.FromPort != nil {
			from = *p.FromPort
		}
		if p.ToPort != nil {
			to = *p.ToPort
		}
		for _, src := range slices.Concat(p.CIDRs, p.IPv6CIDRs, p.GroupIDs) {
			line := fmt.Sprintf("%s %d-%d %s", p.Protocol, from, to, src)
			if withDesc && p.Descriptions[src] != "" {
				line += " " + p.Descriptions[src]
			}
			out = append(out, line)
		}
	}
	slices.Sort(out)
	return out
}

// lbName is the Service's load balancer name.
func lbName(svc *corev1.Service) string { return lbnames.LoadBalancerName(svc) }

// wantEvent fails unless one of the events recorded since the last reset
// starts with prefix ("Warning Reason") and contains every part.
func (e *emu) wantEvent(prefix string, parts ...string) {
	e.t.Helper()
	e.seen = append(e.seen, events(e.rec)...)
	for _, ev := range e.seen {
		if !strings.HasPrefix(ev, prefix+" ") {
			continue
		}
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(ev, p)
		}
		if ok {
			return
		}
	}
	e.t.Errorf("no event %q mentioning %q among %q", prefix, parts, e.seen)
}

// wantEq fails unless got deeply equals want.
func wantEq[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %+v, want %+v", what, got, want)
	}
}

func itoa32(n int32) string { return strconv.Itoa(int(n)) }

func sortedIDs(s []string) []string { out := slices.Clone(s); slices.Sort(out); return out }

func targetIDs(tg awsemu.TargetGroupState) []string {
	var out []string
	for _, x := range tg.Targets {
		out = append(out, x.ID)
	}
	return sortedIDs(out)
}

// TestEmuUnderTheDefaultPolicy: the default policy (iam/ccm-policy.json)
// lets the CCM build, change and delete both kinds of load balancer; the
// other emulator tests run under the least-privilege policy.
func TestEmuUnderTheDefaultPolicy(t *testing.T) {
	t.Parallel()
	e := newEmu(t, emuOptions{policy: policyBroad})
	nodes := e.nodes(emuA, emuB)
	for _, svc := range []*corev1.Service{emuService("broad-clb", nil), emuService("broad-nlb", map[string]string{nlbType: "nlb"})} {
		e.ensure(svc, nodes)
		e.ensure(withAnn(svc, map[string]string{annPrefix + "additional-resource-tags": "team=a"}), nodes)
		e.delete(svc)
	}
	e.wantNothingLeft()
}

// TestEmuEnforcementIsReal: without one action of the least-privilege
// policy the operation that needs it fails with AWS's denial.
func TestEmuEnforcementIsReal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		without, code string
		svc           *corev1.Service
	}{
		{"ec2:CreateSecurityGroup", "UnauthorizedOperation", emuService("deny-clb", nil)},
		{"elasticloadbalancing:CreateLoadBalancer", "AccessDenied", emuService("deny-clb2", nil)},
		{"elasticloadbalancing:RegisterTargets", "AccessDenied", emuService("deny-nlb", map[string]string{nlbType: "nlb"})},
	}
	for _, tc := range tests {
		t.Run(tc.without, func(t *testing.T) {
			t.Parallel()
			e := newEmu(t, emuOptions{withoutAction: tc.without})
			_, err := e.r.Ensure(e.ctx(), tc.svc, e.nodes(emuA))
			var ae smithy.APIError
			if !errors.As(err, &ae) || ae.ErrorCode() != tc.code {
				t.Fatalf("Ensure = %v, want %s", err, tc.code)
			}
			if tc.code == "AccessDenied" && !strings.Contains(ae.ErrorMessage(), "is not authorized to perform: "+tc.without+" on resource: arn:aws:elasticloadbalancing:") {
				t.Errorf("message %q does not name %s and the resource", ae.ErrorMessage(), tc.without)
			}
			if tc.code == "UnauthorizedOperation" {
				doc, err := awsemu.DecodeAuthorizationMessage(ae.ErrorMessage())
				if err != nil || !strings.Contains(doc, `"action":"`+tc.without+`"`) {
					t.Errorf("decoded message %s (%v) does not name %s", doc, err, tc.without)
				}
			}
		})
	}
}
