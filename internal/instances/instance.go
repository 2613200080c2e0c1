package instances

import (
	"cmp"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// Instance is the part of an EC2 instance the CCM uses, kept small so a
// 5,000-node cache stays a few megabytes.
type Instance struct {
	ID             string
	Type           string
	State          string // pending, running, shutting-down, terminated, stopping, stopped
	Zone           string
	VPCID          string
	SubnetID       string
	PrivateDNSName string
	PublicDNSName  string
	PrivateIP      string
	PublicIP       string
	// ENIs are the attached network interfaces, ordered by device index.
	ENIs       []ENI
	LaunchTime time.Time
	// SecurityGroups are the IDs of the instance's security groups (of its
	// primary interface); load balancers open node ports in them.
	SecurityGroups []string
	// SourceDestCheck is on unless turned off; the instance must have it
	// off to be the target of pod routes (internal/routes turns it off).
	SourceDestCheck bool
	// Tags are the instance's tags whose keys are in Options.TagKeys, nil
	// when it has none of them.
	Tags map[string]string
}

// ENI is one network interface of an instance.
type ENI struct {
	// ID is the interface's ID (eni-...); routes may target it.
	ID          string
	DeviceIndex int32
	// Listed is the interface's position in DescribeInstances' list, which
	// EC2 does not keep in device order (kubernetes/cloud-provider-aws#911).
	// Upstream's IPv6 node addresses follow that order when its ipv4 block
	// has not sorted the list first (see pkg/awscloud's nodeAddresses).
	Listed int
	Status string // in-use, ...
	// PrivateIPs are the interface's private IPv4 addresses in EC2's order:
	// the primary, then the secondary ones (under the VPC CNI, the
	// addresses it holds for pods). Upstream lists them all as node
	// addresses.
	PrivateIPs []string
	IPv6       []string
}

// Terminated reports whether the instance is gone for good.
func (i *Instance) Terminated() bool { return i.State == string(ec2types.InstanceStateNameTerminated) }

// ShutDown reports whether the instance is stopped or on its way to it.
func (i *Instance) ShutDown() bool {
	return i.State == string(ec2types.InstanceStateNameStopped) || i.State == string(ec2types.InstanceStateNameStopping)
}

// fromEC2 converts an SDK instance.
func fromEC2(in ec2types.Instance) *Instance {
	out := &Instance{
		ID:             aws.ToString(in.InstanceId),
		Type:           string(in.InstanceType),
		VPCID:          aws.ToString(in.VpcId),
		SubnetID:       aws.ToString(in.SubnetId),
		PrivateDNSName: aws.ToString(in.PrivateDnsName),
		PublicDNSName:  aws.ToString(in.PublicDnsName),
		PrivateIP:      aws.ToString(in.PrivateIpAddress),
		PublicIP:       aws.ToString(in.PublicIpAddress),
		LaunchTime:     aws.ToTime(in.LaunchTime),
		// EC2 reports the attribute on every instance in a VPC; absent
		// (never in practice) is taken as on, EC2's default.
		SourceDestCheck: in.SourceDestCheck == nil || *in.SourceDestCheck,
	}
	if in.State != nil {
		out.State = string(in.State.Name)
	}
	for _, g := range in.SecurityGroups {
		out.SecurityGroups = append(out.SecurityGroups, aws.ToString(g.GroupId))
	}
	if in.Placement != nil {
		out.Zone = aws.ToString(in.Placement.AvailabilityZone)
	}
	// Interfaces without an attachment (never seen on an instance) sort
	// after the attached ones, as upstream sorts them.
	var unattached map[int]bool
	for i, ni := range in.NetworkInterfaces {
		eni := ENI{ID: aws.ToString(ni.NetworkInterfaceId), Listed: i, Status: string(ni.Status)}
		if ni.Attachment != nil {
			eni.DeviceIndex = aws.ToInt32(ni.Attachment.DeviceIndex)
		} else {
			if unattached == nil {
				unattached = map[int]bool{}
			}
			unattached[i] = true
		}
		for _, ip := range ni.PrivateIpAddresses {
			if a := aws.ToString(ip.PrivateIpAddress); a != "" {
				eni.PrivateIPs = append(eni.PrivateIPs, a)
			}
		}
		for _, ip := range ni.Ipv6Addresses {
			if a := aws.ToString(ip.Ipv6Address); a != "" {
				eni.IPv6 = append(eni.IPv6, a)
			}
		}
		out.ENIs = append(out.ENIs, eni)
	}
	slices.SortStableFunc(out.ENIs, func(a, b ENI) int {
		if ua, ub := unattached[a.Listed], unattached[b.Listed]; ua != ub {
			if ua {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.DeviceIndex, b.DeviceIndex)
	})
	return out
}
