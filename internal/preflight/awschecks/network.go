package awschecks

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/awsccmctl/awsccmctl/internal/clustertag"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
)

// liveCluster returns the live instances and the cluster ID, or the result
// to report when there is nothing to check.
func (r *runner) liveCluster(ctx context.Context) ([]ec2types.Instance, string, *preflight.Result) {
	set, err := r.instances(ctx)
	if err != nil {
		res := describeFailed(err)
		return nil, "", &res
	}
	live, ci := set.live(), r.cluster(set)
	switch {
	case len(live) == 0:
		res := preflight.Skip("no running or stopped instances to look at")
		return nil, "", &res
	case ci.id == "":
		res := preflight.Skip("the cluster ID is not known")
		return nil, "", &res
	}
	return live, ci.id, nil
}

// subnetsTagged checks that every zone with cluster instances has a subnet
// the CCM will place load balancers in: cluster-tagged (owned or shared)
// and carrying a kubernetes.io/role/elb or internal-elb tag.
func (r *runner) subnetsTagged(ctx context.Context) preflight.Result {
	live, id, res := r.liveCluster(ctx)
	if res != nil {
		return *res
	}
	var vpcs, zones []string
	if cc := r.in.CloudConfig; cc != nil && cc.Global.VPC != "" {
		vpcs = []string{cc.Global.VPC}
	}
	ownSubnet := map[string]string{} // zone -> a subnet of the cluster's instances there
	for _, in := range live {
		zone := ""
		if in.Placement != nil {
			zone = aws.ToString(in.Placement.AvailabilityZone)
		}
		if zone != "" && !slices.Contains(zones, zone) {
			zones = append(zones, zone)
			ownSubnet[zone] = aws.ToString(in.SubnetId)
		}
		if v := aws.ToString(in.VpcId); v != "" && (r.in.CloudConfig == nil || r.in.CloudConfig.Global.VPC == "") && !slices.Contains(vpcs, v) {
			vpcs = append(vpcs, v)
		}
	}
	if len(vpcs) == 0 || len(zones) == 0 {
		return preflight.Skip("the instances report no VPC or zone")
	}
	slices.Sort(zones)
	var subnets []ec2types.Subnet
	p := ec2.NewDescribeSubnetsPaginator(r.ec2.DescribeSubnets, &ec2.DescribeSubnetsInput{
		Filters: []ec2types.Filter{{Name: aws.String("vpc-id"), Values: vpcs}}, MaxResults: aws.Int32(1000)})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return failedCall(preflight.Fail("grant the caller ec2:DescribeSubnets (attach iam/preflight-policy.json)",
				"describe the subnets of %s: %v", strings.Join(vpcs, ", "), err), err)
		}
		subnets = append(subnets, out.Subnets...)
	}
	var found, problems, fixes []string
	for _, zone := range zones {
		var inZone []ec2types.Subnet
		chosen := ""
		for _, sn := range subnets {
			if aws.ToString(sn.AvailabilityZone) != zone {
				continue
			}
			inZone = append(inZone, sn)
			m := tags(sn.Tags)
			_, elb := m[roleELBTag]
			_, internal := m[roleInternalELBTag]
			if v := m[clustertag.Key(id)]; clustertag.Lifecycle(v).Valid() && (elb || internal) && chosen == "" {
				chosen = aws.ToString(sn.SubnetId)
			}
		}
		if chosen != "" {
			found = append(found, zone+": "+chosen)
			continue
		}
		if len(inZone) == 0 {
			problems = append(problems, fmt.Sprintf("%s: no subnet of %s", zone, strings.Join(vpcs, ", ")))
			fixes = append(fixes, fmt.Sprintf("create a subnet in %s and tag it %s%s=shared and %s=1", zone, clustertag.Prefix, id, roleELBTag))
			continue
		}
		// Fix the subnet the cluster's instances use there, else the first.
		target := inZone[0]
		for _, sn := range inZone {
			if aws.ToString(sn.SubnetId) == ownSubnet[zone] {
				target = sn
			}
		}
		m := tags(target.Tags)
		var lacks, kv []string
		if v := m[clustertag.Key(id)]; !clustertag.Lifecycle(v).Valid() {
			lacks = append(lacks, fmt.Sprintf("%s%s=owned|shared", clustertag.Prefix, id))
			kv = append(kv, clustertag.Key(id), string(clustertag.Shared))
		}
		_, elb := m[roleELBTag]
		if _, internal := m[roleInternalELBTag]; !elb && !internal {
			role := roleInternalELBTag
			if aws.ToBool(target.MapPublicIpOnLaunch) {
				role = roleELBTag
			}
			lacks = append(lacks, roleELBTag+" or "+roleInternalELBTag)
			kv = append(kv, role, "1")
		}
		problems = append(problems, fmt.Sprintf("%s: no tagged subnet (%s lacks %s)", zone, aws.ToString(target.SubnetId), strings.Join(lacks, " and ")))
		fixes = append(fixes, createTagsCmd([]string{aws.ToString(target.SubnetId)}, kv...))
	}
	if len(problems) > 0 {
		return preflight.Fail(strings.Join(fixes, "; "),
			"%d of %d zones have no subnet the CCM can place load balancers in: %s; Services of type LoadBalancer get no subnet there",
			len(problems), len(zones), strings.Join(problems, "; "))
	}
	return preflight.Pass("every zone has a tagged load-balancer subnet: %s", strings.Join(found, ", "))
}

// primaryGroups returns the security groups of the instance's primary
// network interface (the instance's groups when it reports no interface).
func primaryGroups(in ec2types.Instance) []string {
	var ids []string
	for _, eni := range in.NetworkInterfaces {
		if eni.Attachment != nil && aws.ToInt32(eni.Attachment.DeviceIndex) == 0 {
			for _, g := range eni.Groups {
				ids = append(ids, aws.ToString(g.GroupId))
			}
			return ids
		}
	}
	for _, g := range in.SecurityGroups {
		ids = append(ids, aws.ToString(g.GroupId))
	}
	return ids
}

// securityGroups checks that each instance's primary interface has exactly
// one cluster-tagged security group: the one the CCM opens for load
// balancer traffic.
func (r *runner) securityGroups(ctx context.Context) preflight.Result {
	live, id, res := r.liveCluster(ctx)
	if res != nil {
		return *res
	}
	groups := map[string][]string{} // instance -> its primary groups
	var all []string
	for _, in := range live {
		g := primaryGroups(in)
		groups[aws.ToString(in.InstanceId)] = g
		for _, x := range g {
			if !slices.Contains(all, x) {
				all = append(all, x)
			}
		}
	}
	tagged := map[string]bool{}
	for batch := range slices.Chunk(all, groupBatch) {
		p := ec2.NewDescribeSecurityGroupsPaginator(r.ec2.DescribeSecurityGroups, &ec2.DescribeSecurityGroupsInput{
			Filters: []ec2types.Filter{{Name: aws.String("group-id"), Values: batch}}, MaxResults: aws.Int32(1000)})
		for p.HasMorePages() {
			out, err := p.NextPage(ctx)
			if err != nil {
				return failedCall(preflight.Fail("grant the caller ec2:DescribeSecurityGroups (attach iam/preflight-policy.json)",
					"describe %d security groups: %v", len(batch), err), err)
			}
			for _, sg := range out.SecurityGroups {
				tagged[aws.ToString(sg.GroupId)] = clustertag.Has(tags(sg.Tags), id)
			}
		}
	}
	var problems, fixes []string
	for _, in := range live {
		iid := aws.ToString(in.InstanceId)
		var mine []string
		for _, g := range groups[iid] {
			if tagged[g] {
				mine = append(mine, g)
			}
		}
		switch {
		case len(mine) > 1:
			problems = append(problems, fmt.Sprintf("%s has %d cluster-tagged groups (%s)", iid, len(mine), strings.Join(mine, ", ")))
			fixes = append(fixes, fmt.Sprintf("aws ec2 delete-tags --resources %s --tags Key=%s%s (keep the tag on the one node group)",
				strings.Join(mine[1:], " "), clustertag.Prefix, id))
		case len(mine) == 0 && len(groups[iid]) == 0:
			problems = append(problems, iid+" has no security group")
			fixes = append(fixes, "attach the cluster's node security group to "+iid)
		case len(mine) == 0:
			problems = append(problems, fmt.Sprintf("%s has no cluster-tagged group among %s", iid, strings.Join(groups[iid], ", ")))
			fixes = append(fixes, createTagsCmd(groups[iid][:1], clustertag.Key(id), string(clustertag.Owned))+" (tag the node group)")
		}
	}
	if len(problems) > 0 {
		return preflight.Fail(strings.Join(slices.Compact(fixes), "; "),
			"%d of %d instances do not have exactly one security group tagged %s%s: %s; the CCM cannot choose which group to open for load balancers",
			len(problems), len(live), clustertag.Prefix, id, short(problems))
	}
	return preflight.Pass("each of %d instances has exactly one cluster-tagged security group (%s)",
		len(live), strings.Join(slices.Sorted(maps.Keys(onlyTrue(tagged))), ", "))
}

func onlyTrue(m map[string]bool) map[string]bool {
	maps.DeleteFunc(m, func(_ string, v bool) bool { return !v })
	return m
}

// imds checks that the CCM can reach IMDS from where it runs: a pod
// network adds a hop, so IMDSv2 with a hop limit of 1 only answers
// hostNetwork pods. A cloud config with Region, VPC and cluster ID makes
// IMDS unnecessary.
func (r *runner) imds(ctx context.Context) preflight.Result {
	if len(r.in.ControlPlaneInstanceIDs) == 0 {
		return preflight.Skip("no control-plane instances known")
	}
	set, err := r.instances(ctx)
	if err != nil {
		return describeFailed(err)
	}
	cps := set.live(r.in.ControlPlaneInstanceIDs...)
	if len(cps) == 0 {
		return preflight.Skip("none of the control-plane instances exists (see %s)", IDInstancesExist)
	}
	offEC2 := r.in.CloudConfig != nil && r.in.CloudConfig.OffEC2()
	network := "a pod network (hostNetwork: false)"
	if r.in.HostNetwork {
		network = "hostNetwork"
	}
	var seen, problems, ids []string
	for _, in := range cps {
		iid, mo := aws.ToString(in.InstanceId), in.MetadataOptions
		if mo == nil {
			mo = &ec2types.InstanceMetadataOptionsResponse{}
		}
		hop := aws.ToInt32(mo.HttpPutResponseHopLimit)
		desc := fmt.Sprintf("%s: HttpTokens=%s, hop limit %d", iid, mo.HttpTokens, hop)
		seen = append(seen, desc)
		switch {
		case mo.HttpEndpoint == ec2types.InstanceMetadataEndpointStateDisabled:
			problems, ids = append(problems, iid+": the metadata endpoint is disabled"), append(ids, iid)
		case !r.in.HostNetwork && mo.HttpTokens == ec2types.HttpTokensStateRequired && hop <= 1:
			problems, ids = append(problems, desc+": IMDSv2 answers reach no pod"), append(ids, iid)
		}
	}
	switch {
	case len(problems) > 0 && offEC2:
		return preflight.Pass("%s with %s, but the cloud config sets Region, VPC and the cluster ID, so the CCM needs no IMDS", short(seen), network)
	case len(problems) > 0:
		return preflight.Fail(fmt.Sprintf("aws ec2 modify-instance-metadata-options --instance-id %s --http-endpoint enabled --http-put-response-hop-limit 2 "+
			"(once per instance, and in the launch template); or run the CCM with hostNetwork: true; "+
			"or set Region, VPC and KubernetesClusterID in the cloud config's [Global] section so the CCM never asks IMDS", ids[0]),
			"the CCM runs in %s and cannot read IMDS on %s", network, short(problems))
	}
	return preflight.Pass("%s; the CCM runs in %s", short(seen), network)
}
