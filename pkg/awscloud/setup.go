package awscloud

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"k8s.io/klog/v2"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
	"github.com/awsccmctl/awsccmctl/internal/clustertag"
	"github.com/awsccmctl/awsccmctl/pkg/cloudconfig"
)

// environment is what the CCM must know before it can serve: where it runs
// and which cluster it serves.
type environment struct {
	Region    string
	VPCID     string
	ClusterID string
	// Legacy is true when the cluster is identified by the KubernetesCluster tag.
	Legacy bool
}

// imdsTimeout bounds the whole IMDS conversation at start: off EC2, or with a
// hop limit the pod cannot reach, IMDS never answers and waiting long only
// hides the real fix.
const imdsTimeout = 10 * time.Second

// resolveEnvironment takes region, VPC and cluster ID from the cloud config
// and asks IMDS (and EC2, for the CCM's own instance) only for what is
// missing. Every failure says what was missing and how to supply it.
func resolveEnvironment(ctx context.Context, cc *cloudconfig.Config, o awsapi.Options) (environment, *awsapi.Clients, error) {
	env := environment{VPCID: cc.Global.VPC, ClusterID: cc.ClusterID()}
	env.Legacy = cc.Global.KubernetesClusterID == "" && cc.Global.KubernetesClusterTag != ""
	region, haveRegion := cc.RegionFromConfig()
	env.Region = region

	var self *imdsIdentity
	if !haveRegion || env.VPCID == "" || env.ClusterID == "" {
		id, err := askIMDS(ctx, o)
		if err != nil {
			return env, nil, fmt.Errorf("%s are not in the cloud config and the instance metadata service (IMDSv2) did not answer: %w\n"+
				"fix: set Region, VPC and KubernetesClusterID in [Global] of the cloud config to run without IMDS, "+
				"or run the CCM on an EC2 instance with hostNetwork: true (or an IMDS hop limit of 2)", missing(haveRegion, env), err)
		}
		self = id
		if !haveRegion {
			env.Region = id.Region
		}
	}

	o.Region = env.Region
	clients, err := awsapi.NewClients(ctx, o)
	if err != nil {
		return env, nil, err
	}
	if self != nil && (env.VPCID == "" || env.ClusterID == "") {
		if err := fillFromOwnInstance(ctx, newEC2Calls(clients.EC2), self.InstanceID, &env); err != nil {
			return env, nil, err
		}
	}
	if env.ClusterID == "" {
		return env, nil, fmt.Errorf("the cluster ID is unknown: the CCM's instance %s has no %s<id> or %s tag\n"+
			"fix: set KubernetesClusterID in [Global] of the cloud config, or tag the control-plane instances", self.InstanceID, clustertag.Prefix, clustertag.LegacyKey)
	}
	return env, clients, nil
}

func missing(haveRegion bool, env environment) string {
	var m []string
	if !haveRegion {
		m = append(m, "Region")
	}
	if env.VPCID == "" {
		m = append(m, "VPC")
	}
	if env.ClusterID == "" {
		m = append(m, "KubernetesClusterID")
	}
	return strings.Join(m, ", ")
}

type imdsIdentity struct {
	Region     string
	InstanceID string
}

func askIMDS(ctx context.Context, o awsapi.Options) (*imdsIdentity, error) {
	ctx, cancel := context.WithTimeout(ctx, imdsTimeout)
	defer cancel()
	client, err := awsapi.NewIMDS(ctx, o)
	if err != nil {
		return nil, err
	}
	doc, err := client.GetInstanceIdentityDocument(ctx, &imds.GetInstanceIdentityDocumentInput{})
	if err != nil {
		return nil, fmt.Errorf("read instance identity document: %w", err)
	}
	klog.InfoS("Read instance identity from IMDS", "region", doc.Region, "instanceID", doc.InstanceID)
	return &imdsIdentity{Region: doc.Region, InstanceID: doc.InstanceID}, nil
}

// fillFromOwnInstance reads VPC and cluster ID from the CCM's own instance.
func fillFromOwnInstance(ctx context.Context, api ec2Calls, instanceID string, env *environment) error {
	out, err := api.DescribeInstances(ctx, &ec2.DescribeInstancesInput{
		Filters: []ec2types.Filter{{Name: aws.String("instance-id"), Values: []string{instanceID}}},
	})
	if err != nil {
		return fmt.Errorf("describe the CCM's own instance %s: %w", instanceID, err)
	}
	var self *ec2types.Instance
	for _, r := range out.Reservations {
		for i := range r.Instances {
			self = &r.Instances[i]
		}
	}
	if self == nil {
		return fmt.Errorf("the CCM's own instance %s (from IMDS) is not in EC2 region %s: check the region and credentials", instanceID, env.Region)
	}
	if env.VPCID == "" {
		env.VPCID = aws.ToString(self.VpcId)
	}
	if env.ClusterID == "" {
		id, legacy, err := clustertag.ClusterIDFromEC2Tags(self.Tags)
		if err != nil {
			return fmt.Errorf("instance %s: %w\nfix: set KubernetesClusterID in [Global] of the cloud config", instanceID, err)
		}
		env.ClusterID, env.Legacy = id, legacy
	}
	return nil
}

// clusterFilters select the cluster's instances.
func clusterFilters(env environment) []ec2types.Filter {
	return []ec2types.Filter{clustertag.Filter(env.ClusterID, env.Legacy)}
}
