package awschecks

import (
	"context"
	"fmt"
	"regexp"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/awsccmctl/awsccmctl/internal/preflight"
)

// instanceIDName is a Node named after its instance ID.
var instanceIDName = regexp.MustCompile(`^i-[0-9a-f]{8,17}$`)

// nodeNames checks that the CCM can find the instance of every Node that
// has no providerID, the way it will look: a Node named i-… by that
// instance ID, any other by the private DNS name of a running (or pending,
// stopping, stopped) instance. A Node it cannot match is never initialised.
func (r *runner) nodeNames(ctx context.Context) preflight.Result {
	names := r.in.NodesWithoutProviderID
	if len(names) == 0 {
		return preflight.Pass("every Node has a providerID; the CCM needs no name lookup")
	}
	var byID, byDNS []string
	for _, n := range names {
		if instanceIDName.MatchString(n) {
			byID = append(byID, n)
		} else {
			byDNS = append(byDNS, n)
		}
	}
	found := map[string]bool{}
	live := []string{"pending", "running", "stopping", "stopped"}
	lookup := func(filter string, values []string, key func(ec2types.Instance) string) error {
		for batch := range slices.Chunk(values, describeBatch) {
			in := &ec2.DescribeInstancesInput{MaxResults: aws.Int32(1000), Filters: []ec2types.Filter{
				{Name: aws.String(filter), Values: batch},
				{Name: aws.String("instance-state-name"), Values: live},
			}}
			if cc := r.in.CloudConfig; cc != nil && cc.Global.VPC != "" {
				in.Filters = append(in.Filters, ec2types.Filter{Name: aws.String("vpc-id"), Values: []string{cc.Global.VPC}})
			}
			p := ec2.NewDescribeInstancesPaginator(r.ec2.DescribeInstances, in)
			for p.HasMorePages() {
				out, err := p.NextPage(ctx)
				if err != nil {
					return fmt.Errorf("describe instances by %s: %w", filter, err)
				}
				for _, res := range out.Reservations {
					for _, inst := range res.Instances {
						found[key(inst)] = true
					}
				}
			}
		}
		return nil
	}
	if err := lookup("instance-id", byID, func(i ec2types.Instance) string { return aws.ToString(i.InstanceId) }); err != nil {
		return describeFailed(err)
	}
	if err := lookup("private-dns-name", byDNS, func(i ec2types.Instance) string { return aws.ToString(i.PrivateDnsName) }); err != nil {
		return describeFailed(err)
	}
	var lost []string
	for _, n := range names {
		if !found[n] {
			lost = append(lost, n)
		}
	}
	if len(lost) == 0 {
		return preflight.Pass("the CCM finds the instance of all %d Nodes without a providerID by their names (%d by instance ID, %d by private DNS name)", len(names), len(byID), len(byDNS))
	}
	return preflight.Fail("start these Nodes' kubelets with --provider-id=aws:///<zone>/<instance-id> (a Node keeps the providerID it registered with: `kubectl delete node <name>` and restart the kubelet), or with --hostname-override set to the instance's private DNS name",
		"%d of %d Nodes without a providerID match no instance by name (neither an instance ID nor the private DNS name of a live instance): %s; the CCM cannot initialise them",
		len(lost), len(names), short(lost))
}
