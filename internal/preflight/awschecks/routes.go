package awschecks

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/awsccmctl/awsccmctl/internal/clustertag"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/internal/routes"
)

// CloudRoutes says whether the CCM's route controller will run (the CCM
// has --configure-cloud-routes=true and --cluster-cidr, and
// kube-controller-manager allocates the Nodes' pod CIDRs with
// --allocate-node-cidrs=true; the CCM's own --allocate-node-cidrs does
// nothing).
type CloudRoutes string

// The CloudRoutes values.
const (
	CloudRoutesUnknown CloudRoutes = ""
	CloudRoutesOn      CloudRoutes = "on"
	CloudRoutesOff     CloudRoutes = "off"
)

// routeTables checks what the route controller needs: the route table it
// will manage, found by the CCM's own code (routes.FindTable) as the CCM
// will look for it: RouteTableID, else exactly one route table in the
// cluster's VPC carrying the cluster tag (either form), with the same
// errors; in cluster mode, also that the Nodes' routes fit EC2's default
// quota of routes per table (routequota.go).
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
	set, err := r.instances(ctx)
	if err != nil {
		return describeFailed(err)
	}
	env := routes.Env{ClusterID: r.cluster(set).id}
	if cc := r.in.CloudConfig; cc != nil {
		env.RouteTableID = cc.Global.RouteTableID
	}
	if env.RouteTableID == "" && env.ClusterID == "" {
		return preflight.Skip("the cluster ID is not known")
	}
	vpc, from, vpcs := r.ccmVPC(set)
	switch {
	case len(vpcs) > 1:
		return fail("set VPC in [Global] of the cloud config to the VPC of the cluster's route table",
			"the CCM looks for the route table only in its own VPC (VPC in the cloud config, else its instance's), and %s are in %d VPCs: %s%s",
			strings.TrimPrefix(from, "from "), len(vpcs), strings.Join(vpcs, ", "), unknownNote)
	case vpc == "":
		return preflight.Skip("the cluster's VPC is not known (no VPC in the cloud config and no live instance to read it from); the CCM looks for the route table only there")
	}
	env.VPCID = vpc
	rt, err := routes.FindTable(ctx, r.ec2.DescribeRouteTables, env)
	if tableErr := (*routes.TableError)(nil); errors.As(err, &tableErr) {
		return r.routeTableProblem(ctx, set, tableErr, fail, unknownNote)
	} else if err != nil {
		return describeRouteTablesFailed(err)
	}
	res, quota, ok := r.routeQuota(rt)
	if !ok {
		return res
	}
	if env.RouteTableID != "" {
		return preflight.Pass("the cloud config's RouteTableID %s is in the cluster's VPC %s (%s)%s", env.RouteTableID, vpc, from, quota)
	}
	tag := clustertag.Key(env.ClusterID)
	if _, ok := tags(rt.Tags)[tag]; !ok {
		tag = clustertag.LegacyKey + "=" + env.ClusterID
	}
	return preflight.Pass("route table %s is the only one in the cluster's VPC %s (%s) with the cluster tag %s%s", aws.ToString(rt.RouteTableId), vpc, from, tag, quota)
}

// ccmVPC is the VPC the CCM will look for the route table in: VPC in the
// cloud config, else the VPC of the instance it runs on (from IMDS), which
// is one of the control-plane instances; without those, the cluster's
// instances'. vpcs lists the VPCs seen when there are several (vpc is then
// empty); from says where the VPC comes from ("from the cloud config").
func (r *runner) ccmVPC(set *instanceSet) (vpc, from string, vpcs []string) {
	if cc := r.in.CloudConfig; cc != nil && cc.Global.VPC != "" {
		return cc.Global.VPC, "from the cloud config", nil
	}
	var live []ec2types.Instance
	from = "from the control-plane instances"
	if len(r.in.ControlPlaneInstanceIDs) > 0 {
		live = set.live(r.in.ControlPlaneInstanceIDs...)
	}
	if len(live) == 0 {
		live, from = set.live(), "from the cluster's instances"
	}
	for _, in := range live {
		if v := aws.ToString(in.VpcId); v != "" && !slices.Contains(vpcs, v) {
			vpcs = append(vpcs, v)
		}
	}
	if len(vpcs) == 1 {
		return vpcs[0], from, vpcs
	}
	return "", from, vpcs
}

// routeTableProblem is the result when the CCM would find no route table to
// manage: its own error's first line, quoted, and the fix.
func (r *runner) routeTableProblem(ctx context.Context, set *instanceSet, e *routes.TableError, fail func(string, string, ...any) preflight.Result, note string) preflight.Result {
	said, ccmFix, _ := strings.Cut(e.Error(), "\nfix: ")
	id := e.Env.ClusterID
	fix := ccmFix
	switch e.Problem {
	case routes.NoTaggedTable:
		fix = r.tagRouteTableFix(ctx, set, e.Env.VPCID, id)
	case routes.SeveralTaggedTables:
		fix = fmt.Sprintf("set RouteTableID in [Global] of the cloud config to the table the cluster's node routes belong in, or remove the cluster tag from the others "+
			"(aws ec2 delete-tags --resources <rtb-id> --tags Key=%s%s, or Key=%s for the legacy tag)", clustertag.Prefix, id, clustertag.LegacyKey)
	default:
		// The configured table's problems keep the CCM fix.
	}
	return fail(fix, "the CCM's route controller would fail every sync with %q and route nothing%s", said, note)
}

// tagRouteTableFix names the tables of vpc to tag: those the cluster's
// subnets there use (their explicit associations, else the VPC's main
// table).
func (r *runner) tagRouteTableFix(ctx context.Context, set *instanceSet, vpc, id string) string {
	generic := fmt.Sprintf("tag the route table of the cluster's subnets in %s: aws ec2 create-tags --resources <rtb-id> --tags Key=%s%s,Value=owned (or set RouteTableID in the cloud config)", vpc, clustertag.Prefix, id)
	var subnets []string
	for _, in := range set.live() {
		if s := aws.ToString(in.SubnetId); s != "" && aws.ToString(in.VpcId) == vpc && !slices.Contains(subnets, s) {
			subnets = append(subnets, s)
		}
	}
	if len(subnets) == 0 {
		return generic
	}
	tables, err := r.describeRouteTables(ctx, ec2types.Filter{Name: aws.String("vpc-id"), Values: []string{vpc}})
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
