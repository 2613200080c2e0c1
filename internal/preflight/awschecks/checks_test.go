package awschecks

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/pkg/cloudconfig"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// createTags is a mutating CCM action, for the tag-condition cases.
var createTags = awsapi.Action{Service: awsapi.ServiceEC2, Operation: "CreateTags", Mutating: true,
	Components: []string{awsapi.ComponentCCM}, Why: "test"}

type scenario struct {
	name    string
	fixture func(*awsemu.Fixture)
	server  func(*testing.T, *awsemu.Server)
	input   func(*Input)
	extra   []awsapi.Action // added to the simulated CCM actions
	noCreds bool
	want    map[string]preflight.Status
	// text: substrings of message or remediation, by check ID.
	text map[string][]string
	// calls: exact emulator call counts (nil: not checked).
	calls map[string]int
}

// changeOwned lets the CCM change what is tagged for the cluster demo, as
// the demo fixture's policy does.
const changeOwned = `{"Effect":"Allow","Action":["ec2:CreateTags","ec2:DeleteTags","ec2:*SecurityGroup*","ec2:*Route","ec2:ModifyInstanceAttribute","ec2:ModifyNetworkInterfaceAttribute","elasticloadbalancing:*"],"Resource":"*",
	"Condition":{"StringEquals":{"aws:ResourceTag/kubernetes.io/cluster/demo":"owned"}}}`

// ccmCount is how many distinct IAM actions the simulation covers: the
// registry's CCM actions and extra.
func ccmCount(extra ...awsapi.Action) string {
	seen := map[string]bool{}
	for _, a := range append(awsapi.Actions(awsapi.ComponentCCM), extra...) {
		seen[a.IAMAction()] = true
	}
	return strconv.Itoa(len(seen))
}

var allGoodCalls = map[string]int{"sts:GetCallerIdentity": 1, "ec2:DescribeInstances": 1, "ec2:DescribeSubnets": 1, "ec2:DescribeRouteTables": 1,
	"ec2:DescribeSecurityGroups": 1, "iam:GetInstanceProfile": 1, "iam:SimulatePrincipalPolicy": 1}

var scenarios = []scenario{{
	name: "all good",
	want: table(pass, pass, pass, pass, pass, pass, pass, pass, pass),
	text: map[string][]string{
		IDIdentity:       {"account 123456789012, arn:aws:iam::123456789012:role/control-plane"},
		IDClusterID:      {"cluster ID demo (from instance tags); all 4 instances carry its tag"},
		IDInstancesExist: {"all 4 instances exist (1 stopped)"},
		IDSubnetsTagged:  {"us-east-1a: subnet-0demo00000000000a, us-east-1b: subnet-0demo00000000000b, us-east-1c: subnet-0demo00000000000c"},
		IDIMDS:           {demoA + ": HttpTokens=required, hop limit 2; the CCM runs in hostNetwork"},
		IDIAMPermissions: {"arn:aws:iam::123456789012:role/control-plane (instance profile demo-node of " + demoA + ") is allowed all " + ccmCount() + " of the CCM's actions"},
	},
	calls: allGoodCalls,
}, {
	name: "explicit deny of one CCM action",
	server: func(t *testing.T, s *awsemu.Server) {
		must(t, s.PutRolePolicy(role, "deny-zones", denyPolicy("ec2:DescribeAvailabilityZones")))
	},
	want: table(pass, pass, pass, pass, pass, pass, pass, pass, fail),
	text: map[string][]string{IDIAMPermissions: {"denied 1 of the CCM's " + ccmCount() + " actions", "ec2:DescribeAvailabilityZones: explicitDeny by deny-zones",
		"remove or narrow the Deny statements of deny-zones on role control-plane"}},
	calls: allGoodCalls,
}, {
	name: "CCM action missing from the role's policies",
	fixture: func(f *awsemu.Fixture) {
		ccmPolicy(f, `{"Effect":"Allow","Action":["ec2:DescribeInstances","ec2:DescribeInstanceTopology","ec2:DescribeSubnets","ec2:DescribeRouteTables","ec2:DescribeSecurityGroups",
			"elasticloadbalancing:Describe*","sts:AssumeRole"],"Resource":"*"},`+changeOwned)
	},
	want: table(pass, pass, pass, pass, pass, pass, pass, pass, fail),
	text: map[string][]string{IDIAMPermissions: {"is denied 1 of the CCM's " + ccmCount() + " actions", "for tag conditions: ec2:DescribeAvailabilityZones: implicitDeny", "put-role-policy --role-name control-plane",
		"file://iam/ccm-policy.json"}},
}, {
	name:  "tag condition met for a mutating action",
	extra: []awsapi.Action{createTags},
	want:  table(pass, pass, pass, pass, pass, pass, pass, pass, pass),
	text:  map[string][]string{IDIAMPermissions: {"allowed all " + ccmCount(createTags) + " of the CCM's actions", "with aws:ResourceTag/kubernetes.io/cluster/demo=owned"}},
}, {
	name:  "tag condition not met",
	extra: []awsapi.Action{createTags},
	fixture: func(f *awsemu.Fixture) {
		ccmPolicy(f, `{"Effect":"Allow","Action":["ec2:Describe*","elasticloadbalancing:Describe*","sts:AssumeRole"],"Resource":"*"},
			{"Effect":"Allow","Action":["ec2:DeleteTags","ec2:*SecurityGroup*","ec2:*Route","ec2:ModifyInstanceAttribute","ec2:ModifyNetworkInterfaceAttribute","elasticloadbalancing:*"],"Resource":"*","Condition":{"StringEquals":{"aws:ResourceTag/kubernetes.io/cluster/demo":"owned"}}},
			{"Effect":"Allow","Action":"ec2:CreateTags","Resource":"*","Condition":{"StringEquals":{"aws:ResourceTag/kubernetes.io/cluster/prod":"owned"}}}`)
	},
	want: table(pass, pass, pass, pass, pass, pass, pass, pass, fail),
	text: map[string][]string{IDIAMPermissions: {"denied 1 of the CCM's " + ccmCount(createTags) + " actions",
		"ec2:CreateTags: implicitDeny (missing context keys: aws:ResourceTag/kubernetes.io/cluster/prod)",
		"aws:ResourceTag conditions name kubernetes.io/cluster/demo"}},
}, {
	name: "unknown and terminated instances among 200",
	fixture: func(f *awsemu.Fixture) {
		for n := range 194 {
			f.Instances = append(f.Instances, awsemu.Instance{ID: instanceID(n), SubnetID: "subnet-0demo00000000000a",
				SecurityGroupIDs: []string{demoSG}, Tags: map[string]string{"kubernetes.io/cluster/demo": "owned"}})
		}
	},
	input: func(in *Input) {
		in.InstanceIDs = append(in.InstanceIDs, demoTerminated, "i-0deadbeefdeadbeef")
		for n := range 194 {
			in.InstanceIDs = append(in.InstanceIDs, instanceID(n))
		}
	},
	want: table(pass, pass, fail, pass, pass, pass, pass, pass, pass),
	text: map[string][]string{IDInstancesExist: {"2 of 200 instances do not exist: " + demoTerminated + " (terminated), i-0deadbeefdeadbeef (not found); the CCM would delete these Nodes"}},
	calls: map[string]int{"sts:GetCallerIdentity": 1, "ec2:DescribeInstances": 2, "ec2:DescribeSubnets": 1, "ec2:DescribeRouteTables": 1,
		"ec2:DescribeSecurityGroups": 1, "iam:GetInstanceProfile": 1, "iam:SimulatePrincipalPolicy": 1},
}, {
	// Past one instance-id batch the instances are listed by the cluster
	// tag first; the untagged, another cluster's and unknown IDs are still
	// described by ID, so every finding is what the ID lookups give.
	name: "cluster-tagged instances listed by tag, the rest by ID, among 305",
	fixture: func(f *awsemu.Fixture) {
		for n := range 300 {
			tags := map[string]string{"kubernetes.io/cluster/demo": "owned"}
			switch {
			case n >= 290:
				tags = map[string]string{"kubernetes.io/cluster/other": "owned"}
			case n >= 260:
				tags = nil
			}
			f.Instances = append(f.Instances, awsemu.Instance{ID: instanceID(n), SubnetID: "subnet-0demo00000000000a",
				SecurityGroupIDs: []string{demoSG}, Tags: tags})
		}
	},
	input: func(in *Input) {
		in.ClusterID = "demo"
		for n := range 300 {
			in.InstanceIDs = append(in.InstanceIDs, instanceID(n))
		}
		in.InstanceIDs = append(in.InstanceIDs, "i-0deadbeefdeadbeef")
	},
	want: table(pass, warn, fail, pass, pass, pass, pass, pass, pass),
	text: map[string][]string{
		IDInstancesExist: {"1 of 305 instances do not exist: i-0deadbeefdeadbeef (not found); the CCM would delete these Nodes"},
		IDClusterID:      {"cluster ID demo (from the cluster ID given to preflight), but 40 of 304 instances lack the tag kubernetes.io/cluster/demo: " + instanceID(260)},
	},
	// One page of the 264 demo-tagged (tag-key filter), one instance-id
	// call for the 41 others; by ID alone it took 3.
	calls: map[string]int{"sts:GetCallerIdentity": 1, "ec2:DescribeInstances": 2, "ec2:DescribeSubnets": 1, "ec2:DescribeRouteTables": 1,
		"ec2:DescribeSecurityGroups": 1, "iam:GetInstanceProfile": 1, "iam:SimulatePrincipalPolicy": 1},
}, {
	name:    "subnet of one zone without a role tag",
	fixture: func(f *awsemu.Fixture) { delete(f.Subnets[2].Tags, "kubernetes.io/role/internal-elb") },
	want:    table(pass, pass, pass, pass, warn, pass, pass, pass, pass),
	text: map[string][]string{IDSubnetsTagged: {"1 of 3 zones", "us-east-1c: no tagged subnet (" + subnetC + " lacks kubernetes.io/role/elb or kubernetes.io/role/internal-elb)",
		"aws ec2 create-tags --resources " + subnetC + " --tags Key=kubernetes.io/role/internal-elb,Value=1"}},
}, {
	name: "two cluster-tagged security groups on one instance",
	fixture: func(f *awsemu.Fixture) {
		f.SecurityGroups = append(f.SecurityGroups, awsemu.SecurityGroup{ID: "sg-0demo000000000002", Name: "demo-extra", VPCID: demoVPC,
			Tags: map[string]string{"kubernetes.io/cluster/demo": "shared"}})
		f.Instances[1].SecurityGroupIDs = append(f.Instances[1].SecurityGroupIDs, "sg-0demo000000000002")
	},
	want: table(pass, pass, pass, pass, pass, warn, pass, pass, pass),
	text: map[string][]string{IDSecurityGroups: {"1 of 4 instances", demoB + " has 2 cluster-tagged groups (" + demoSG + ", sg-0demo000000000002)",
		"aws ec2 delete-tags --resources sg-0demo000000000002 --tags Key=kubernetes.io/cluster/demo"}},
}, {
	name:  "IMDS hop limit 1 without hostNetwork",
	input: func(in *Input) { in.ControlPlaneInstanceIDs, in.HostNetwork = []string{demoC}, false },
	want:  table(pass, pass, pass, pass, pass, pass, pass, warn, pass),
	text: map[string][]string{
		IDIMDS:           {demoC + ": HttpTokens=required, hop limit 1: IMDSv2 answers reach no pod", "--http-put-response-hop-limit 2"},
		IDIAMPermissions: {"the caller of preflight; no control-plane instance profile found"},
	},
	calls: map[string]int{"sts:GetCallerIdentity": 1, "ec2:DescribeInstances": 1, "ec2:DescribeSubnets": 1, "ec2:DescribeRouteTables": 1,
		"ec2:DescribeSecurityGroups": 1, "iam:SimulatePrincipalPolicy": 1},
}, {
	name: "IMDS hop limit 1 without hostNetwork, off-EC2 cloud config",
	input: func(in *Input) {
		in.ControlPlaneInstanceIDs, in.HostNetwork = []string{demoC}, false
		in.CloudConfig = &cloudconfig.Config{Global: cloudconfig.Global{Region: "us-east-1", VPC: demoVPC, KubernetesClusterID: "demo"}}
	},
	want: table(pass, pass, pass, pass, pass, pass, pass, pass, pass),
	text: map[string][]string{IDIMDS: {"the CCM needs no IMDS"}, IDClusterID: {"from cloud config KubernetesClusterID"}},
}, {
	name:  "IMDS hop limit 1 with hostNetwork",
	input: func(in *Input) { in.ControlPlaneInstanceIDs = []string{demoC} },
	want:  table(pass, pass, pass, pass, pass, pass, pass, pass, pass),
}, {
	name:   "STS throttled",
	server: func(t *testing.T, s *awsemu.Server) { s.InjectFault(awsemu.Throttle("sts", 1)) },
	want:   table(fail, skip, skip, skip, skip, skip, skip, skip, skip),
	text:   map[string][]string{IDIdentity: {"STS GetCallerIdentity was throttled", "Throttling"}, IDClusterID: {"requires aws-identity"}},
	calls:  map[string]int{"sts:GetCallerIdentity": 3},
}, {
	name:    "no credentials",
	noCreds: true,
	want:    table(fail, skip, skip, skip, skip, skip, skip, skip, skip),
	text:    map[string][]string{IDIdentity: {"no AWS credentials found", "AWS_ACCESS_KEY_ID", "AWS_PROFILE", "instance profile"}},
	calls:   map[string]int{},
}, {
	name: "assumed-role caller, node mode",
	fixture: func(f *awsemu.Fixture) {
		f.CallerArn = "arn:aws:sts::123456789012:assumed-role/control-plane/preflight"
	},
	input: func(in *Input) {
		in.InstanceIDs, in.ControlPlaneInstanceIDs = nil, nil
		// Without instances, the CCM's VPC comes from the cloud config
		// (aws-route-tables looks where the CCM looks).
		in.CloudConfig = &cloudconfig.Config{Global: cloudconfig.Global{KubernetesClusterID: "demo", VPC: demoVPC}}
	},
	want:  table(pass, pass, skip, pass, skip, skip, pass, skip, pass),
	text:  map[string][]string{IDIAMPermissions: {"arn:aws:iam::123456789012:role/control-plane (the caller", "session arn:aws:sts::123456789012:assumed-role/control-plane/preflight"}},
	calls: map[string]int{"sts:GetCallerIdentity": 1, "iam:GetRole": 1, "iam:SimulatePrincipalPolicy": 1, "ec2:DescribeRouteTables": 1},
}, {
	name:  "node mode without a cluster ID",
	input: func(in *Input) { in.InstanceIDs, in.ControlPlaneInstanceIDs = nil, nil },
	want:  table(pass, warn, skip, pass, skip, skip, skip, skip, warn),
	text:  map[string][]string{IDIAMPermissions: {"tag-scoped actions cannot be checked without the cluster ID", "elasticloadbalancing:CreateLoadBalancer"}},
}, {
	// One instance whose two cluster tags disagree: clustertag.ClusterIDFromTags
	// refuses it, as upstream does (this text used to be the cross-instance
	// one below).
	name:    "legacy cluster tag names another cluster",
	fixture: func(f *awsemu.Fixture) { f.Instances[1].Tags["KubernetesCluster"] = "old" },
	want:    table(pass, fail, pass, pass, skip, skip, skip, pass, warn),
	text: map[string][]string{IDClusterID: {demoB + ": cluster tags name different clusters: KubernetesCluster=old and kubernetes.io/cluster/demo " +
		"(the CCM refuses to take the cluster ID from such an instance)"}},
}, {
	name: "instance tagged only with a legacy tag naming another cluster",
	fixture: func(f *awsemu.Fixture) {
		delete(f.Instances[1].Tags, "kubernetes.io/cluster/demo")
		f.Instances[1].Tags["KubernetesCluster"] = "old"
	},
	want: table(pass, fail, pass, pass, skip, skip, skip, pass, warn),
	text: map[string][]string{IDClusterID: {"legacy tag KubernetesCluster=old on " + demoB + ", but kubernetes.io/cluster/demo on " + demoA}},
}, {
	name: "cluster tag with a value other than owned or shared counts",
	fixture: func(f *awsemu.Fixture) {
		for _, in := range f.Instances {
			in.Tags["kubernetes.io/cluster/demo"] = "1"
		}
	},
	want: table(pass, pass, pass, pass, pass, pass, pass, pass, pass),
	text: map[string][]string{IDClusterID: {"cluster ID demo (from instance tags); all 4 instances carry its tag"}},
}, {
	name: "instances tagged for two clusters, none configured",
	fixture: func(f *awsemu.Fixture) {
		delete(f.Instances[1].Tags, "kubernetes.io/cluster/demo")
		f.Instances[1].Tags["kubernetes.io/cluster/other"] = "owned"
	},
	want: table(pass, fail, pass, pass, skip, skip, skip, pass, warn),
	text: map[string][]string{IDClusterID: {"the instances are tagged for several clusters: demo (3 instances), other (1 instances)"}},
}, {
	name:    "instance without the cluster tag",
	fixture: func(f *awsemu.Fixture) { delete(f.Instances[3].Tags, "kubernetes.io/cluster/demo") },
	want:    table(pass, warn, pass, pass, pass, pass, pass, pass, pass),
	text: map[string][]string{IDClusterID: {"1 of 4 instances lack the tag kubernetes.io/cluster/demo: " + demoStopped,
		"aws ec2 create-tags --resources " + demoStopped + " --tags Key=kubernetes.io/cluster/demo,Value=owned"}},
}}

func TestScenarios(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			e := start(t, sc.fixture, !sc.noCreds)
			if sc.server != nil {
				sc.server(t, e.srv)
			}
			in := e.baseInput()
			if sc.input != nil {
				sc.input(&in)
			}
			if len(sc.extra) > 0 {
				withCCMActions(t, sc.extra...)
			}
			got := run(t, in)
			for _, id := range ids {
				if f := got[id]; f.Status != sc.want[id] {
					t.Errorf("%s = %s, want %s\n  message: %s\n  fix: %s", id, f.Status, sc.want[id], f.Message, f.Remediation)
				}
			}
			for id, subs := range sc.text {
				for _, s := range subs {
					if f := got[id]; !strings.Contains(f.Message+"\n"+f.Remediation, s) {
						t.Errorf("%s: %q not in\n  message: %s\n  fix: %s", id, s, f.Message, f.Remediation)
					}
				}
			}
			if sc.calls != nil && !maps.Equal(e.srv.CallCounts(), sc.calls) {
				t.Errorf("emulator calls = %v, want %v", e.srv.CallCounts(), sc.calls)
			}
		})
	}
}

// TestEveryCallIsRegisteredForPreflight runs the checks down every path
// that calls AWS and compares what reached the emulator with the actions
// registered for the preflight component (iam/preflight-policy.json). The
// guard middleware already refuses unregistered actions; this also catches
// an action registered for the CCM only, which the preflight policy would
// not grant.
func TestEveryCallIsRegisteredForPreflight(t *testing.T) {
	called := map[string]bool{}
	for _, sc := range scenarios {
		if sc.name != "all good" && sc.name != "assumed-role caller, node mode" {
			continue
		}
		e := start(t, sc.fixture, true)
		in := e.baseInput()
		if sc.input != nil {
			sc.input(&in)
		}
		for id, f := range run(t, in) {
			if f.Status == fail || strings.Contains(f.Message, "action registry") {
				t.Errorf("%s: %s: %s", sc.name, id, f.Message)
			}
		}
		for k := range e.srv.CallCounts() {
			called[k] = true
		}
	}
	registered := map[string]bool{}
	for _, a := range awsapi.Actions(awsapi.ComponentPreflight) {
		registered[a.IAMAction()] = true
	}
	for k := range called {
		if !registered[k] {
			t.Errorf("the checks call %s, which is not registered for %s", k, awsapi.ComponentPreflight)
		}
	}
	want := []string{"ec2:DescribeInstances", "ec2:DescribeRouteTables", "ec2:DescribeSecurityGroups", "ec2:DescribeSubnets", "iam:GetInstanceProfile",
		"iam:GetRole", "iam:SimulatePrincipalPolicy", "sts:GetCallerIdentity"}
	if got := slices.Sorted(maps.Keys(called)); !slices.Equal(got, want) {
		t.Errorf("called %v, want %v", got, want)
	}
}

// TestSimulatesExactlyTheCCMActions checks that the simulation covers the
// registry's CCM actions and nothing else.
func TestSimulatesExactlyTheCCMActions(t *testing.T) {
	e := start(t, nil, true)
	must(t, e.srv.PutRolePolicy(role, "deny-all", denyPolicy("*")))
	f := run(t, e.baseInput())[IDIAMPermissions]
	var want []string
	for _, a := range awsapi.Actions(awsapi.ComponentCCM) {
		if !slices.Contains(want, a.IAMAction()+": explicitDeny") { // ELB and ELBv2 share IAM names
			want = append(want, a.IAMAction()+": explicitDeny")
		}
	}
	for _, w := range want {
		if !strings.Contains(f.Message, w) {
			t.Errorf("%q not in %s", w, f.Message)
		}
	}
	if n := strings.Count(f.Message, "explicitDeny"); n != len(want) {
		t.Errorf("%d actions denied, want the %d CCM actions: %s", n, len(want), f.Message)
	}
}

func TestChecksAreStable(t *testing.T) {
	var got []string
	for _, c := range Checks(Input{}) {
		got = append(got, c.ID)
		if c.Category != Category || c.Title == "" || c.Run == nil {
			t.Errorf("%s: incomplete check %+v", c.ID, c)
		}
	}
	if !slices.Equal(got, ids) {
		t.Fatalf("check IDs %v, want %v", got, ids)
	}
	// Without clients, identity fails and the rest is skipped.
	f := run(t, Input{})
	if f[IDIdentity].Status != fail || f[IDIAMPermissions].Status != skip {
		t.Fatalf("no clients: %+v", f)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
