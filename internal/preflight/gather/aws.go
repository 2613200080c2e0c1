package gather

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
	"github.com/awsccmctl/awsccmctl/internal/preflight/awschecks"
	"github.com/awsccmctl/awsccmctl/pkg/cloudconfig"
	"github.com/awsccmctl/awsccmctl/pkg/providerid"
)

// imdsTimeout bounds the IMDS questions; off EC2 nothing answers.
const imdsTimeout = 5 * time.Second

// Why the AWS checks are skipped when the region is unknown, with the fix.
// IMDS goes silent in a container when the instance's IMDSv2 hop limit is 1.
const (
	regionUnknownNode = "skipped: the AWS region is unknown (no --region, no Region in a --cloud-config file, and IMDS did not answer); " +
		"pass --region, or run on the EC2 instance with IMDS reachable (in a container the instance's IMDSv2 hop limit must be 2)"
	regionUnknownCluster = "skipped: the AWS region is unknown (no --region, no Region in a --cloud-config file, and no Node has a " +
		"topology.kubernetes.io/region label); pass --region or --cloud-config"
)

// awsNodeInput builds the AWS checks' input for node mode: the region from
// o.Region, the cloud config, or IMDS; this node's instance from its
// kubelet providerID or IMDS.
func awsNodeInput(ctx context.Context, o Options, node *nodefiles.Node) (awschecks.Input, error) {
	cc, err := cloudconfig.Load(o.CloudConfig)
	if err != nil {
		return awschecks.Input{}, &InputError{err}
	}
	region := o.Region
	if region == "" {
		region, _ = cc.RegionFromConfig()
	}
	var self string
	if id := kubeletInstanceID(node); id != "" {
		self = id
	}
	if region == "" || self == "" {
		ictx, cancel := context.WithTimeout(ctx, imdsTimeout)
		defer cancel()
		if client, err := awsapi.NewIMDS(ictx, awsapi.Options{CloudConfig: cc}); err == nil {
			if doc, err := client.GetInstanceIdentityDocument(ictx, &imds.GetInstanceIdentityDocumentInput{}); err == nil {
				if region == "" {
					region = doc.Region
				}
				if self == "" {
					self = doc.InstanceID
				}
			}
		}
	}
	if region == "" {
		// Not an error: the node checks need no AWS and still report.
		return awschecks.Input{Mode: o.Mode, CloudConfig: cc, Unavailable: regionUnknownNode}, nil
	}
	in, err := newAWSInput(ctx, o, cc, region)
	if err != nil {
		return in, err
	}
	if self != "" {
		in.InstanceIDs = []string{self}
		if len(node.StaticPods) > 0 {
			in.ControlPlaneInstanceIDs = []string{self}
		}
	}
	return in, nil
}

// newAWSInput builds the clients the AWS checks use (EC2 and STS in the
// region, IAM globally; read-only, newReadOnlyClients) and the parts of the
// input both modes share.
func newAWSInput(ctx context.Context, o Options, cc *cloudconfig.Config, region string) (awschecks.Input, error) {
	clients, iamClient, err := newReadOnlyClients(ctx, awsapi.Options{Region: region, CloudConfig: cc})
	if err != nil {
		return awschecks.Input{}, &UnreachableError{err}
	}
	return awschecks.Input{AWS: awschecks.NewAPI(clients, iamClient), CloudConfig: cc, ClusterID: cc.ClusterID(), HostNetwork: o.HostNetwork, Mode: o.Mode}, nil
}

// kubeletInstanceID is the instance ID in the kubelet's --provider-id or
// configuration providerID, if any.
func kubeletInstanceID(node *nodefiles.Node) string {
	if node.Kubelet == nil {
		return ""
	}
	pid, _ := node.Kubelet.Flags.Get("provider-id")
	if pid == "" && node.Kubelet.Config != nil {
		pid = node.Kubelet.Config.ProviderID
	}
	if id, err := providerid.Parse(pid); err == nil {
		return id.InstanceID
	}
	return ""
}
