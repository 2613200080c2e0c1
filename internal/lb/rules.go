package lb

import (
	"cmp"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// rule is one security-group ingress rule in flat form: one protocol and
// port range from one source (a CIDR or a group). AWS groups rules into
// IpPermissions; comparing flat rules makes diffs exact.
type rule struct {
	Protocol string // tcp, udp, icmp, -1
	From, To int32
	CIDR     string // IPv4 source, or
	IPv6     string // IPv6 source, or
	Group    string // source security group
	// Desc is the rule description. It is not part of a rule's identity in
	// AWS (a rule differing only in description is a duplicate), so key()
	// leaves it out.
	Desc string
}

// key identifies the rule as AWS does.
func (r rule) key() rule { r.Desc = ""; return r }

// flatten turns AWS permissions into rules.
func flatten(perms []ec2types.IpPermission) []rule {
	var out []rule
	for _, p := range perms {
		base := rule{Protocol: aws.ToString(p.IpProtocol), From: aws.ToInt32(p.FromPort), To: aws.ToInt32(p.ToPort)}
		if base.Protocol == "-1" {
			base.From, base.To = 0, 0
		}
		for _, r := range p.IpRanges {
			x := base
			x.CIDR, x.Desc = aws.ToString(r.CidrIp), aws.ToString(r.Description)
			out = append(out, x)
		}
		for _, r := range p.Ipv6Ranges {
			x := base
			x.IPv6, x.Desc = aws.ToString(r.CidrIpv6), aws.ToString(r.Description)
			out = append(out, x)
		}
		for _, g := range p.UserIdGroupPairs {
			x := base
			x.Group, x.Desc = aws.ToString(g.GroupId), aws.ToString(g.Description)
			out = append(out, x)
		}
	}
	return out
}

// permissions turns rules back into AWS permissions, one per rule (AWS
// accepts that and it keeps each rule's description).
func permissions(rules []rule) []ec2types.IpPermission {
	out := make([]ec2types.IpPermission, 0, len(rules))
	for _, r := range rules {
		p := ec2types.IpPermission{IpProtocol: aws.String(r.Protocol)}
		if r.Protocol != "-1" {
			p.FromPort, p.ToPort = aws.Int32(r.From), aws.Int32(r.To)
		}
		var desc *string
		if r.Desc != "" {
			desc = aws.String(r.Desc)
		}
		switch {
		case r.CIDR != "":
			p.IpRanges = []ec2types.IpRange{{CidrIp: aws.String(r.CIDR), Description: desc}}
		case r.IPv6 != "":
			p.Ipv6Ranges = []ec2types.Ipv6Range{{CidrIpv6: aws.String(r.IPv6), Description: desc}}
		default:
			p.UserIdGroupPairs = []ec2types.UserIdGroupPair{{GroupId: aws.String(r.Group), Description: desc}}
		}
		out = append(out, p)
	}
	return out
}

// diffRules returns what to authorize and what to revoke so that the rules
// owned (as decided by owns) become exactly want. Rules not owned are never
// revoked; a wanted rule that exists under another description counts as
// present (AWS would refuse it as a duplicate).
func diffRules(have, want []rule, owns func(rule) bool) (add, remove []rule) {
	present := map[rule]bool{}
	for _, r := range have {
		present[r.key()] = true
	}
	wanted := map[rule]bool{}
	for _, r := range want {
		if wanted[r.key()] {
			continue
		}
		wanted[r.key()] = true
		if !present[r.key()] {
			add = append(add, r)
		}
	}
	for _, r := range have {
		if owns(r) && !wanted[r.key()] {
			remove = append(remove, r)
		}
	}
	sortRules(add)
	sortRules(remove)
	return add, remove
}

func sortRules(rs []rule) {
	slices.SortFunc(rs, func(a, b rule) int {
		return cmp.Or(cmp.Compare(a.Protocol, b.Protocol), cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To),
			cmp.Compare(a.CIDR, b.CIDR), cmp.Compare(a.IPv6, b.IPv6), cmp.Compare(a.Group, b.Group), cmp.Compare(a.Desc, b.Desc))
	})
}
