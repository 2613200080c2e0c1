package awsemu

import (
	"net/url"
	"strconv"
	"time"
)

// DescribeNetworkInterfaces: the interfaces of the visible instances, each
// with its own source/destination check and tags (ec2_network_attr.go).
// A terminated instance's interfaces are gone: EC2 deletes an interface
// created with its instance on termination.

// attachedInterface is one interface with its instance.
type attachedInterface struct {
	in *Instance
	e  *ENI
}

// xmlNetworkInterface is DescribeNetworkInterfaces' item: an instance's
// interface item plus what only this call reports.
type xmlNetworkInterface struct {
	xmlInstanceENI
	AvailabilityZone string               `xml:"availabilityZone"`
	RequesterManaged bool                 `xml:"requesterManaged"`
	Attachment       xmlNetworkAttachment `xml:"attachment"`
	Tags             []xmlTag             `xml:"tagSet>item"`
}

// xmlNetworkAttachment is the attachment as DescribeNetworkInterfaces
// reports it: with the instance.
type xmlNetworkAttachment struct {
	xmlENIAttachment
	InstanceID      string `xml:"instanceId"`
	InstanceOwnerID string `xml:"instanceOwnerId"`
}

type describeNetworkInterfacesResult struct {
	NetworkInterfaces []xmlNetworkInterface `xml:"networkInterfaceSet>item"`
	NextToken         string                `xml:"nextToken,omitempty"`
}

func (s *ec2State) describeNetworkInterfaces(form url.Values) (any, *apiError) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	now := time.Now()
	all := func() []*attachedInterface {
		var out []*attachedInterface
		for _, rec := range s.instances.list() {
			if now.Before(rec.visibleAt) || rec.State == "terminated" {
				continue
			}
			for i := range rec.ENIs {
				out = append(out, &attachedInterface{in: &rec.Instance, e: &rec.ENIs[i]})
			}
		}
		return out
	}
	l := lister[attachedInterface]{
		idParam: "NetworkInterfaceId", prefix: "eni-", noun: "networkInterface ID",
		notFound: "InvalidNetworkInterfaceID.NotFound", malformed: "InvalidNetworkInterfaceID.Malformed",
		filters: append([]string{"network-interface-id", "attachment.instance-id", "attachment.device-index", "vpc-id",
			"subnet-id", "availability-zone", "source-dest-check", "status", "mac-address", "private-ip-address"}, tagFilters...),
		min: 5, max: 1000, noIDsPage: true,
		all: all,
		get: func(id string) (*attachedInterface, bool) {
			rec, ok := s.visibleInstance(s.eniOwner[id], now)
			if !ok || rec.State == "terminated" {
				return nil, false
			}
			for i := range rec.ENIs {
				if rec.ENIs[i].ID == id {
					return &attachedInterface{in: &rec.Instance, e: &rec.ENIs[i]}, true
				}
			}
			return nil, false
		},
		values: func(x *attachedInterface, name string) []string {
			switch name {
			case "network-interface-id":
				return []string{x.e.ID}
			case "attachment.instance-id":
				return []string{x.in.ID}
			case "attachment.device-index":
				return []string{strconv.Itoa(int(x.e.DeviceIndex))}
			case "vpc-id":
				return []string{s.xmlInstanceENIOf(x.in, x.e).VPCID}
			case "subnet-id":
				return []string{x.e.SubnetID}
			case "availability-zone":
				return []string{x.in.AvailabilityZone}
			case "source-dest-check":
				return []string{strconv.FormatBool(x.in.eniSourceDestCheck(x.e))}
			case "status":
				return []string{x.e.Status}
			case "mac-address":
				return []string{x.e.MAC}
			case "private-ip-address":
				return x.e.PrivateIPs
			}
			return tagValues(x.e.Tags, name)
		},
	}
	page, next, apiErr := l.run(form)
	if apiErr != nil {
		return nil, apiErr
	}
	res := describeNetworkInterfacesResult{NextToken: next}
	for _, x := range page {
		item := s.xmlInstanceENIOf(x.in, x.e)
		res.NetworkInterfaces = append(res.NetworkInterfaces, xmlNetworkInterface{
			xmlInstanceENI:   item,
			AvailabilityZone: x.in.AvailabilityZone,
			Attachment:       xmlNetworkAttachment{xmlENIAttachment: item.Attachment, InstanceID: x.in.ID, InstanceOwnerID: s.account},
			Tags:             xmlTags(x.e.Tags),
		})
	}
	return res, nil
}
