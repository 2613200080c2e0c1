package awschecks

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/awsccmctl/awsccmctl/internal/clustertag"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
)

// CloudRoutes says whether the CCM's route controller will run (the CCM
// has --allocate-node-cidrs=true and --configure-cloud-routes=true, as the
// kube-controller-manager it replaces had).
type CloudRoutes string

// The CloudRoutes values.
const (
	CloudRoutesUnknown CloudRoutes = ""
	CloudRoutesOn      CloudRoutes = "on"
	CloudRoutesOff     CloudRoutes = "off"
)

// routeTables checks what the route controller needs: the route table named
// by RouteTableID, else exactly one route table in the region carrying the
// cluster tag (the route controller looks in the whole region, not only the
// VPC, and refuses to choose between several); in cluster mode, also that
// the Nodes' routes fit EC2's default quota of routes per table
// (routequota.go).
func (r *runner) routeTables(ctx context.Context) preflight.Result {
	if r.in.CloudRoutes == CloudRoutesOff {
		return preflight.Pass("cloud routes are off: the CCM needs no route table")
	}
	// fail is Fail when cloud routes are on, Warn when preflight cannot tell.
	fail, unknownNote := preflight.Fail, ""
	if r.in.CloudRoutes == CloudRoutesUnknown {
		fail = preflight.Warn
		unknownNote = " (this matters only if the CCM configures cloud routes: pass --cloud-routes=on|off to say; control-plane-kcm-cloud-routes tells what kube-controller-manager does today)"
	}
	if cc := r.in.CloudConfig; cc != nil && cc.Global.RouteTableID != "" {
		return r.configuredRouteTable(ctx, cc.Global.RouteTableID, fail, unknownNote)
	}
	set, err := r.instances(ctx)
	if err != nil {
		return describeFailed(err)
	}
	id := r.cluster(set).id
	if id == "" {
		return preflight.Skip("the cluster ID is not known")
	}
	// One listing of the tagged tables, region-wide as the route controller
	// looks; the legacy tag is matched on its value here.
	tagged, err := r.describeRouteTables(ctx, ec2types.Filter{Name: aws.String("tag-key"), Values: []string{clustertag.Key(id), clustertag.LegacyKey}})
	if err != nil {
		return describeRouteTablesFailed(err)
	}
	tagged = slices.DeleteFunc(tagged, func(rt ec2types.RouteTable) bool { return !clustertag.Has(tags(rt.Tags), id) })
	names := make([]string, len(tagged))
	for i, rt := range tagged {
		names[i] = fmt.Sprintf("%s (%s)", aws.ToString(rt.RouteTableId), aws.ToString(rt.VpcId))
	}
	switch len(tagged) {
	case 1:
		res, note, ok := r.routeQuota(tagged[0])
		if !ok {
			return res
		}
		return preflight.Pass("route table %s carries the cluster tag %s%s%s", names[0], clustertag.Prefix, id, note)
	case 0:
		return fail(r.tagRouteTableFix(ctx, set, id),
			"no route table in the region carries the cluster tag %s%s (or %s=%s): the route controller would fail with \"unable to find route table for AWS cluster\"%s",
			clustertag.Prefix, id, clustertag.LegacyKey, id, unknownNote)
	default:
		return fail(fmt.Sprintf("set RouteTableID in [Global] of the cloud config to the table the cluster's node routes belong in, or remove the cluster tag from the others (aws ec2 delete-tags --resources <rtb-id> --tags Key=%s%s)", clustertag.Prefix, id),
			"%d route tables carry the cluster tag %s%s: %s; the route controller refuses to choose between them%s",
			len(tagged), clustertag.Prefix, id, short(names), unknownNote)
	}
}

// configuredRouteTable checks the table the cloud config names.
func (r *runner) configuredRouteTable(ctx context.Context, rtb string, fail func(string, string, ...any) preflight.Result, note string) preflight.Result {
	found, err := r.describeRouteTables(ctx, ec2types.Filter{Name: aws.String("route-table-id"), Values: []string{rtb}})
	if err != nil {
		return describeRouteTablesFailed(err)
	}
	if len(found) == 0 {
		return fail("set RouteTableID in [Global] of the cloud config to an existing route table (aws ec2 describe-route-tables)",
			"the cloud config's RouteTableID %s does not exist in this account and region%s", rtb, note)
	}
	vpc := aws.ToString(found[0].VpcId)
	if cc := r.in.CloudConfig; cc.Global.VPC != "" && cc.Global.VPC != vpc {
		return fail(fmt.Sprintf("set RouteTableID to a route table of %s, or VPC to %s", cc.Global.VPC, vpc),
			"the cloud config's RouteTableID %s belongs to %s, not to its VPC %s%s", rtb, vpc, cc.Global.VPC, note)
	}
	res, quota, ok := r.routeQuota(found[0])
	if !ok {
		return res
	}
	return preflight.Pass("the cloud config's RouteTableID %s exists (%s)%s", rtb, vpc, quota)
}

// tagRouteTableFix names the tables to tag: those the cluster's subnets use
// (their explicit associations, else their VPC's main table).
func (r *runner) tagRouteTableFix(ctx context.Context, set *instanceSet, id string) string {
	generic := fmt.Sprintf("tag the route table of the cluster's subnets: aws ec2 create-tags --resources <rtb-id> --tags Key=%s%s,Value=owned (or set RouteTableID in the cloud config)", clustertag.Prefix, id)
	var subnets, vpcs []string
	for _, in := range set.live() {
		if s := aws.ToString(in.SubnetId); s != "" && !slices.Contains(subnets, s) {
			subnets = append(subnets, s)
		}
		if v := aws.ToString(in.VpcId); v != "" && !slices.Contains(vpcs, v) {
			vpcs = append(vpcs, v)
		}
	}
	if len(vpcs) == 0 {
		return generic
	}
	tables, err := r.describeRouteTables(ctx, ec2types.Filter{Name: aws.String("vpc-id"), Values: vpcs})
	if err != nil {
		return generic
	}
	var use []string
	for _, s := range subnets {
		var explicit, main string
		for _, rt := range tables {
			for _, a := range rt.Associations {
				switch {
				case aws.ToString(a.SubnetId) == s:
					explicit = aws.ToString(rt.RouteTableId)
				case aws.ToBool(a.Main) && main == "":
					main = aws.ToString(rt.RouteTableId)
				}
			}
		}
		if t := cmp.Or(explicit, main); t != "" && !slices.Contains(use, t) {
			use = append(use, t)
		}
	}
	switch len(use) {
	case 0:
		return generic
	case 1:
		return createTagsCmd(use, clustertag.Key(id), string(clustertag.Owned))
	default:
		return fmt.Sprintf("the cluster's subnets use %d route tables (%s) but the route controller manages one: use one route table for the nodes' subnets, tag it (aws ec2 create-tags --resources <rtb-id> --tags Key=%s%s,Value=owned) or set RouteTableID",
			len(use), strings.Join(use, ", "), clustertag.Prefix, id)
	}
}

// describeRouteTables lists the route tables matching filter, every page.
func (r *runner) describeRouteTables(ctx context.Context, filter ec2types.Filter) ([]ec2types.RouteTable, error) {
	var out []ec2types.RouteTable
	p := ec2.NewDescribeRouteTablesPaginator(r.ec2.DescribeRouteTables, &ec2.DescribeRouteTablesInput{Filters: []ec2types.Filter{filter}, MaxResults: aws.Int32(100)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("describe route tables (%s=%s): %w", aws.ToString(filter.Name), strings.Join(filter.Values, ","), err)
		}
		out = append(out, page.RouteTables...)
	}
	return out, nil
}

func describeRouteTablesFailed(err error) preflight.Result {
	return failedCall(preflight.Fail("grant the caller ec2:DescribeRouteTables (attach iam/preflight-policy.json)", "%v", err), err)
}
