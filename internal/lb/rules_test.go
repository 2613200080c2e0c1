package lb

import (
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

func TestFlattenPermissionsRoundTrip(t *testing.T) {
	tests := []struct {
		name  string
		rules []rule
	}{
		{"IPv4 with description", []rule{{Protocol: "tcp", From: 80, To: 80, CIDR: "10.0.0.0/8", Desc: "kubernetes.io/rule/nlb/client=a1"}}},
		{"IPv4 port range without description", []rule{{Protocol: "udp", From: 30000, To: 32767, CIDR: "0.0.0.0/0"}}},
		{"IPv6", []rule{{Protocol: "tcp", From: 443, To: 443, IPv6: "2001:db8::/32", Desc: "v6"}}},
		{"group source", []rule{{Protocol: "-1", Group: "sg-0123456789abcdef0", Desc: "from the ELB"}}},
		{"ICMP type and code", []rule{{Protocol: "icmp", From: 3, To: 4, CIDR: "192.168.0.0/16", Desc: nlbMTURuleDesc}}},
		{"several of each", []rule{
			{Protocol: "tcp", From: 80, To: 80, CIDR: "10.0.0.0/8"},
			{Protocol: "tcp", From: 80, To: 80, IPv6: "::/0"},
			{Protocol: "-1", Group: "sg-11111111"},
			{Protocol: "-1", Group: "sg-22222222", Desc: "x"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			perms := permissions(tc.rules)
			if len(perms) != len(tc.rules) {
				t.Fatalf("permissions made %d permissions for %d rules, want one each", len(perms), len(tc.rules))
			}
			if got := flatten(perms); !reflect.DeepEqual(got, tc.rules) {
				t.Errorf("flatten(permissions(x)) = %+v\nwant %+v", got, tc.rules)
			}
		})
	}
}

func TestPermissionsShape(t *testing.T) {
	perms := permissions([]rule{
		{Protocol: "-1", From: 80, To: 90, Group: "sg-1"}, // ports of -1 are meaningless: not sent
		{Protocol: "tcp", From: 80, To: 90, CIDR: "10.0.0.0/8"},
	})
	if perms[0].FromPort != nil || perms[0].ToPort != nil {
		t.Errorf("protocol -1 sent ports %v-%v; want none", aws.ToInt32(perms[0].FromPort), aws.ToInt32(perms[0].ToPort))
	}
	if aws.ToInt32(perms[1].FromPort) != 80 || aws.ToInt32(perms[1].ToPort) != 90 {
		t.Errorf("tcp ports = %v-%v, want 80-90", aws.ToInt32(perms[1].FromPort), aws.ToInt32(perms[1].ToPort))
	}
	if d := perms[1].IpRanges[0].Description; d != nil {
		t.Errorf("empty description sent as %q; want none (AWS rejects empty descriptions)", *d)
	}
	if len(perms[1].Ipv6Ranges)+len(perms[1].UserIdGroupPairs) != 0 || len(perms[0].IpRanges)+len(perms[0].Ipv6Ranges) != 0 {
		t.Errorf("a permission carries more than its rule's one source: %+v", perms)
	}
}

func TestFlatten(t *testing.T) {
	// As AWS returns them: one permission grouping several sources, and an
	// all-protocols permission with AWS's -1 ports.
	perms := []ec2types.IpPermission{
		{
			IpProtocol: aws.String("tcp"), FromPort: aws.Int32(30080), ToPort: aws.Int32(30081),
			IpRanges:         []ec2types.IpRange{{CidrIp: aws.String("10.0.0.0/8"), Description: aws.String("a")}, {CidrIp: aws.String("0.0.0.0/0")}},
			Ipv6Ranges:       []ec2types.Ipv6Range{{CidrIpv6: aws.String("::/0"), Description: aws.String("b")}},
			UserIdGroupPairs: []ec2types.UserIdGroupPair{{GroupId: aws.String("sg-1"), Description: aws.String("c")}},
		},
		{IpProtocol: aws.String("-1"), FromPort: aws.Int32(-1), ToPort: aws.Int32(-1), UserIdGroupPairs: []ec2types.UserIdGroupPair{{GroupId: aws.String("sg-2")}}},
	}
	want := []rule{
		{Protocol: "tcp", From: 30080, To: 30081, CIDR: "10.0.0.0/8", Desc: "a"},
		{Protocol: "tcp", From: 30080, To: 30081, CIDR: "0.0.0.0/0"},
		{Protocol: "tcp", From: 30080, To: 30081, IPv6: "::/0", Desc: "b"},
		{Protocol: "tcp", From: 30080, To: 30081, Group: "sg-1", Desc: "c"},
		{Protocol: "-1", Group: "sg-2"},
	}
	if got := flatten(perms); !reflect.DeepEqual(got, want) {
		t.Errorf("flatten = %+v\nwant %+v", got, want)
	}
}

func TestDiffRules(t *testing.T) {
	mine := func(x rule) bool { return x.Desc == "mine" }
	tcp := func(port int32, cidr, desc string) rule {
		return rule{Protocol: "tcp", From: port, To: port, CIDR: cidr, Desc: desc}
	}
	tests := []struct {
		name               string
		have, want         []rule
		wantAdd, wantRemov []rule
	}{
		{
			name:    "adds only missing",
			have:    []rule{tcp(80, "10.0.0.0/8", "mine")},
			want:    []rule{tcp(80, "10.0.0.0/8", "mine"), tcp(443, "10.0.0.0/8", "mine")},
			wantAdd: []rule{tcp(443, "10.0.0.0/8", "mine")},
		},
		{
			name:      "revokes only owned and unwanted",
			have:      []rule{tcp(80, "10.0.0.0/8", "mine"), tcp(81, "10.0.0.0/8", "theirs"), tcp(82, "10.0.0.0/8", "mine"), tcp(22, "10.0.0.0/8", "")},
			want:      []rule{tcp(82, "10.0.0.0/8", "mine")},
			wantRemov: []rule{tcp(80, "10.0.0.0/8", "mine")},
		},
		{
			name: "wanted rule present under another description is present",
			have: []rule{tcp(80, "10.0.0.0/8", "someone else's")},
			want: []rule{tcp(80, "10.0.0.0/8", "mine")},
		},
		{
			name: "owned rule kept when wanted under another description",
			have: []rule{tcp(80, "10.0.0.0/8", "mine")},
			want: []rule{tcp(80, "10.0.0.0/8", "new description")},
		},
		{
			name:    "wanted rules de-duplicated (first description kept)",
			want:    []rule{tcp(80, "10.0.0.0/8", "mine"), tcp(80, "10.0.0.0/8", "mine"), tcp(80, "10.0.0.0/8", "other")},
			wantAdd: []rule{tcp(80, "10.0.0.0/8", "mine")},
		},
		{
			name: "sources of different kinds are different rules",
			have: []rule{{Protocol: "tcp", From: 80, To: 80, CIDR: "10.0.0.0/8", Desc: "mine"}},
			want: []rule{{Protocol: "tcp", From: 80, To: 80, IPv6: "::/0", Desc: "mine"}, {Protocol: "tcp", From: 80, To: 80, Group: "sg-1", Desc: "mine"}},
			wantAdd: []rule{ // sorted: CIDR, then IPv6, then group ("" first)
				{Protocol: "tcp", From: 80, To: 80, Group: "sg-1", Desc: "mine"},
				{Protocol: "tcp", From: 80, To: 80, IPv6: "::/0", Desc: "mine"},
			},
			wantRemov: []rule{{Protocol: "tcp", From: 80, To: 80, CIDR: "10.0.0.0/8", Desc: "mine"}},
		},
		{
			name: "output sorted",
			have: []rule{tcp(9, "10.0.0.3/32", "mine"), {Protocol: "icmp", From: 3, To: 4, CIDR: "10.0.0.1/32", Desc: "mine"}, tcp(9, "10.0.0.2/32", "mine")},
			want: []rule{tcp(443, "10.0.0.1/32", "mine"), {Protocol: "udp", From: 53, To: 53, CIDR: "10.0.0.1/32", Desc: "mine"}, tcp(80, "10.0.0.2/32", "mine"), tcp(80, "10.0.0.1/32", "mine")},
			wantAdd: []rule{
				tcp(80, "10.0.0.1/32", "mine"), tcp(80, "10.0.0.2/32", "mine"), tcp(443, "10.0.0.1/32", "mine"),
				{Protocol: "udp", From: 53, To: 53, CIDR: "10.0.0.1/32", Desc: "mine"},
			},
			wantRemov: []rule{{Protocol: "icmp", From: 3, To: 4, CIDR: "10.0.0.1/32", Desc: "mine"}, tcp(9, "10.0.0.2/32", "mine"), tcp(9, "10.0.0.3/32", "mine")},
		},
		{
			name: "nothing to do",
			have: []rule{tcp(80, "10.0.0.0/8", "mine"), tcp(22, "0.0.0.0/0", "")},
			want: []rule{tcp(80, "10.0.0.0/8", "mine")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			add, remove := diffRules(tc.have, tc.want, mine)
			if !reflect.DeepEqual(add, tc.wantAdd) {
				t.Errorf("add = %+v\nwant %+v", add, tc.wantAdd)
			}
			if !reflect.DeepEqual(remove, tc.wantRemov) {
				t.Errorf("remove = %+v\nwant %+v", remove, tc.wantRemov)
			}
		})
	}
}
