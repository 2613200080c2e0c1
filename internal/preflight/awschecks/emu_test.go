package awschecks

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// Demo fixture names (test/awsemu/testdata/demo.yaml).
const (
	demoA          = "i-0a1b2c3d4e5f60001" // us-east-1a, instance profile demo-node (role control-plane)
	demoB          = "i-0a1b2c3d4e5f60002" // us-east-1b
	demoC          = "i-0a1b2c3d4e5f60003" // us-east-1c, IMDS hop limit 1, no instance profile
	demoStopped    = "i-0a1b2c3d4e5f60004"
	demoTerminated = "i-0a1b2c3d4e5f60005"
	demoVPC        = "vpc-0demo000000000001"
	demoSG         = "sg-0demo000000000001"
	subnetC        = "subnet-0demo00000000000c"
	role           = "control-plane"
)

const (
	pass = preflight.StatusPass
	warn = preflight.StatusWarn
	fail = preflight.StatusFail
	skip = preflight.StatusSkip
)

// ids lists the check IDs in Checks order; table builds expected statuses.
var ids = []string{IDIdentity, IDClusterID, IDInstancesExist, IDNodeNames, IDSubnetsTagged, IDSecurityGroups, IDRouteTables, IDIMDS, IDIAMPermissions,
	IDLoadBalancers}

// table maps statuses to ids in order; checks past the last status given
// are expected to skip (the scenarios have no LoadBalancer Services, see
// loadbalancers_test.go).
func table(s ...preflight.Status) map[string]preflight.Status {
	out := map[string]preflight.Status{}
	for i, id := range ids {
		out[id] = skip
		if i < len(s) {
			out[id] = s[i]
		}
	}
	return out
}

// env is one emulator with the real SDK clients pointed at it through the
// environment, as an operator would.
type env struct {
	srv     *awsemu.Server
	clients *awsapi.Clients
	iam     *iam.Client
}

// start loads the demo fixture, lets fix change it, serves it and builds
// the clients. creds=false leaves the SDK without credentials.
func start(t *testing.T, fix func(*awsemu.Fixture), creds bool) env {
	t.Helper()
	f := awsemu.DemoFixture()
	if fix != nil {
		fix(f)
	}
	e := awsemu.StartT(t, f)
	e.Env().Set(t)
	if !creds {
		t.Setenv("AWS_ACCESS_KEY_ID", "")
		t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	}
	ctx := context.Background()
	o := awsapi.Options{Region: "us-east-1"}
	clients, err := awsapi.NewClients(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	iamClient, err := awsapi.NewIAM(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	return env{srv: e.Server, clients: clients, iam: iamClient}
}

// baseInput is the demo cluster's live nodes, the CCM on demoA with
// hostNetwork.
func (e env) baseInput() Input {
	return Input{AWS: NewAPI(e.clients, e.iam), InstanceIDs: []string{demoA, demoB, demoC, demoStopped},
		ControlPlaneInstanceIDs: []string{demoA}, HostNetwork: true, Mode: preflight.ModePreInstall}
}

// run runs the checks and returns the findings by ID.
func run(t *testing.T, in Input) map[string]preflight.Finding {
	t.Helper()
	rep, err := preflight.Run(context.Background(), Checks(in), preflight.Options{Mode: in.Mode})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]preflight.Finding{}
	for _, f := range rep.Findings {
		out[f.ID] = f
	}
	return out
}

// withCCMActions makes the simulation cover extra actions (tests only),
// as a registry with mutating CCM actions would.
func withCCMActions(t *testing.T, extra ...awsapi.Action) {
	orig := ccmActions
	ccmActions = func() []awsapi.Action { return append(orig(), extra...) }
	t.Cleanup(func() { ccmActions = orig })
}

// instanceID is the i-... ID of the n-th extra instance.
func instanceID(n int) string { return fmt.Sprintf("i-%017x", 0xa0000+n) }

// denyPolicy is an inline policy denying one action.
func denyPolicy(action string) string {
	return fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Action":"%s","Resource":"*"}]}`, action)
}

// ccmPolicy is the demo's managed policy with other statements.
func ccmPolicy(f *awsemu.Fixture, statements string) {
	f.IAM.Policies[0].Document = awsemu.PolicyDocument(`{"Version":"2012-10-17","Statement":[` + statements + `]}`)
}

// TestNewAPI: NewAPI takes every call from the clients it is given and
// leaves those of a missing client nil, so the checks skip what they cannot
// ask; an IAM client alone does not make the identity check pass.
func TestNewAPI(t *testing.T) {
	if a := NewAPI(nil, nil); a.EC2.DescribeInstances != nil || a.STS.GetCallerIdentity != nil || a.IAM.SimulatePrincipalPolicy != nil ||
		a.ELB.DescribeLoadBalancers != nil || a.ELBv2.DescribeLoadBalancers != nil {
		t.Errorf("NewAPI(nil, nil) has calls")
	}
	e := start(t, nil, true)
	a := NewAPI(e.clients, e.iam)
	for name, missing := range map[string]bool{
		"EC2.DescribeInstances": a.EC2.DescribeInstances == nil, "EC2.DescribeSubnets": a.EC2.DescribeSubnets == nil,
		"EC2.DescribeSecurityGroups": a.EC2.DescribeSecurityGroups == nil, "EC2.DescribeRouteTables": a.EC2.DescribeRouteTables == nil,
		"STS.GetCallerIdentity": a.STS.GetCallerIdentity == nil, "IAM.GetInstanceProfile": a.IAM.GetInstanceProfile == nil,
		"IAM.GetRole": a.IAM.GetRole == nil, "IAM.SimulatePrincipalPolicy": a.IAM.SimulatePrincipalPolicy == nil,
		"ELB.DescribeLoadBalancers": a.ELB.DescribeLoadBalancers == nil, "ELB.DescribeTags": a.ELB.DescribeTags == nil,
		"ELBv2.DescribeLoadBalancers": a.ELBv2.DescribeLoadBalancers == nil, "ELBv2.DescribeTags": a.ELBv2.DescribeTags == nil,
	} {
		if missing {
			t.Errorf("%s is nil", name)
		}
	}
	in := e.baseInput()
	in.AWS = NewAPI(nil, e.iam)
	f := run(t, in)
	if f[IDIdentity].Status != fail || f[IDIAMPermissions].Status != skip {
		t.Errorf("IAM client only: identity %s, IAM permissions %s", f[IDIdentity].Status, f[IDIAMPermissions].Status)
	}
	in.AWS = NewAPI(e.clients, nil)
	f = run(t, in)
	if f[IDIdentity].Status != pass || f[IDIAMPermissions].Status != skip || f[IDIAMPermissions].Message != "no IAM client" {
		t.Errorf("no IAM client: identity %s, IAM permissions %s: %s", f[IDIdentity].Status, f[IDIAMPermissions].Status, f[IDIAMPermissions].Message)
	}
}
