package detect

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
	"github.com/awsccmctl/awsccmctl/internal/clustertag"
	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/pkg/cloudconfig"
	"github.com/awsccmctl/awsccmctl/pkg/providerid"
)

// libraryMinor is the Kubernetes minor of the client libraries the CCM is
// built with (k8s.io/* v0.37): the version skew policy for controller
// managers wants the API server at that minor or one newer.
const libraryMinor = 37

// detectSample bounds the Nodes whose instances are looked up for the
// cluster tag: one DescribeInstances call.
const detectSample = 20

// EC2 lists the EC2 call detection makes; NewEC2 fills it from a client
// (internal/awsapi's calls.go says why a struct of method values and not an
// interface).
type EC2 struct {
	DescribeInstances awsapi.DescribeInstancesFunc
}

// NewEC2 takes the calls from a client.
func NewEC2(c *ec2.Client) EC2 { return EC2{DescribeInstances: c.DescribeInstances} }

// Detector fills what the user left unset from the cluster and AWS, one
// log line per value, never overriding a value that was given.
type Detector struct {
	Kube kubernetes.Interface
	// EC2 returns the EC2 calls for a region; nil skips the cluster-ID
	// lookup (the CCM then reads its own instance's tags).
	EC2 func(ctx context.Context, region string) (EC2, error)
	Log io.Writer
}

// New returns a Detector with the real clients: kube, and EC2 through the
// same client factory as the CCM (credentials chain, cc's endpoint
// overrides).
func New(kube kubernetes.Interface, cc *cloudconfig.Config, log io.Writer) Detector {
	return Detector{Kube: kube, Log: log, EC2: func(ctx context.Context, region string) (EC2, error) {
		c, err := awsapi.NewClients(ctx, awsapi.Options{Region: region, CloudConfig: cc})
		if err != nil {
			return EC2{}, err
		}
		return NewEC2(c.EC2), nil
	}}
}

// Detect checks the API server's version against the CCM's and fills
// v.ExpectedNodes (from the count of Nodes, install.ExpectedNodesForCount),
// v.CloudConfig's Region (from the Nodes' region label) and
// KubernetesClusterID (from the cluster tag of the Nodes' instances, read as
// the CCM reads its own instance's; KubernetesClusterTag if they carry only
// the legacy tag) when they are empty.
func (d Detector) Detect(ctx context.Context, v *install.Values) error {
	sv, err := d.Kube.Discovery().ServerVersion()
	if err != nil {
		return fmt.Errorf("read the API server's version: %w", err)
	}
	d.logVersion(sv.GitVersion, v.Image)
	if err := d.detectExpectedNodes(ctx, v); err != nil {
		return err
	}
	if v.CloudConfig == nil {
		v.CloudConfig = &cloudconfig.Config{}
	}
	g := &v.CloudConfig.Global
	needRegion, needID := g.Region == "", v.CloudConfig.ClusterID() == ""
	if !needRegion && !needID {
		fmt.Fprintf(d.Log, "region %s, cluster ID %s: from the cloud config\n", g.Region, v.CloudConfig.ClusterID())
		return nil
	}
	nodes, err := d.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{Limit: 500})
	if err != nil {
		return fmt.Errorf("list Nodes: %w", err)
	}
	if needRegion {
		d.detectRegion(nodes.Items, g)
	} else {
		fmt.Fprintf(d.Log, "region %s: from the cloud config\n", g.Region)
	}
	if needID {
		d.detectClusterID(ctx, nodes.Items, g)
	} else {
		fmt.Fprintf(d.Log, "cluster ID %s: from the cloud config\n", v.CloudConfig.ClusterID())
	}
	return nil
}

// detectExpectedNodes sizes the CCM for the Nodes counted in the cluster
// unless a size was given. A count that fails leaves the default size, with
// the flag to set it; only an ended context is an error.
func (d Detector) detectExpectedNodes(ctx context.Context, v *install.Values) error {
	if v.ExpectedNodes != nil {
		fmt.Fprintf(d.Log, "expected Nodes %d: as given; the Nodes are not counted\n", *v.ExpectedNodes)
		return nil
	}
	n, err := CountNodes(ctx, d.Kube)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		fmt.Fprintf(d.Log, "expected Nodes: not counted (%v); the CCM is sized for the default %d Nodes — pass --expected-nodes to set the size\n", err, install.DefaultExpectedNodes)
		return nil
	}
	size := install.ExpectedNodesForCount(n)
	v.ExpectedNodes = &size
	fmt.Fprintf(d.Log, "expected Nodes %d: %d Nodes counted, rounded up to 1, 2 or 5 times a power of ten and at least %d; the CCM's workers and API rate limits are sized for it (--expected-nodes overrides)\n",
		size, n, install.DefaultExpectedNodes)
	return nil
}

// countPage is the page size of CountNodes' fallback.
const countPage = 500

// CountNodes counts the cluster's Nodes with one List of limit 1: the API
// server sets remainingItemCount on a list without selectors (served from
// etcd or the watch cache), so one Node is transferred, not all. An API
// server that leaves it out is paged through, countPage Nodes at a time.
func CountNodes(ctx context.Context, kube kubernetes.Interface) (int, error) {
	l, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return 0, fmt.Errorf("list Nodes: %w", err)
	}
	if l.RemainingItemCount != nil {
		return len(l.Items) + int(*l.RemainingItemCount), nil
	}
	n := len(l.Items)
	for cont := l.Continue; cont != ""; cont = l.Continue {
		if l, err = kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{Limit: countPage, Continue: cont}); err != nil {
			return 0, fmt.Errorf("list Nodes: %w", err)
		}
		n += len(l.Items)
	}
	return n, nil
}

func (d Detector) logVersion(gitVersion, image string) {
	sv, err := version.ParseGeneric(gitVersion)
	switch {
	case err != nil:
		fmt.Fprintf(d.Log, "Kubernetes %s (API server): not a version awsccmctl can compare\n", gitVersion)
	case int(sv.Minor()) < libraryMinor:
		fmt.Fprintf(d.Log, "Kubernetes %s (API server): WARNING: this CCM is built for Kubernetes 1.%d; the version skew policy wants the API server at 1.%d or 1.%d — upgrade the control plane first, or pick an older image with --image\n",
			gitVersion, libraryMinor, libraryMinor, libraryMinor+1)
	case int(sv.Minor()) > libraryMinor+1:
		fmt.Fprintf(d.Log, "Kubernetes %s (API server): WARNING: this CCM is built for Kubernetes 1.%d, more than one minor older than the API server; use a newer awsccmctl and image\n", gitVersion, libraryMinor)
	default:
		fmt.Fprintf(d.Log, "Kubernetes %s (API server): the CCM is built for it (Kubernetes 1.%d libraries); image %s\n", gitVersion, libraryMinor, image)
	}
}

// detectRegion takes the region all Nodes agree on.
func (d Detector) detectRegion(nodes []corev1.Node, g *cloudconfig.Global) {
	regions := map[string]int{}
	for _, n := range nodes {
		if r := n.Labels[corev1.LabelTopologyRegion]; r != "" {
			regions[r]++
		}
	}
	switch len(regions) {
	case 0:
		fmt.Fprintf(d.Log, "region: unknown (no Node has %s); the CCM reads it from IMDS — pass --region to set it\n", corev1.LabelTopologyRegion)
	case 1:
		for r, n := range regions {
			g.Region = r
			fmt.Fprintf(d.Log, "region %s: from the %s label of %d Nodes (--region overrides)\n", r, corev1.LabelTopologyRegion, n)
		}
	default:
		fmt.Fprintf(d.Log, "region: the Nodes name several (%s); not set, pass --region\n", strings.Join(slices.Sorted(maps.Keys(regions)), ", "))
	}
}

// detectClusterID reads the cluster tag of a sample of the Nodes'
// instances: one DescribeInstances by instance-id filter.
func (d Detector) detectClusterID(ctx context.Context, nodes []corev1.Node, g *cloudconfig.Global) {
	unknown := func(why string) {
		fmt.Fprintf(d.Log, "cluster ID: %s; the CCM reads it from its own instance's tags — set KubernetesClusterID in the cloud config to make it explicit\n", why)
	}
	if d.EC2 == nil || g.Region == "" {
		unknown("not looked up (no AWS region)")
		return
	}
	var ids []string
	for _, n := range nodes {
		if id, err := providerid.Parse(n.Spec.ProviderID); err == nil && len(ids) < detectSample && !slices.Contains(ids, id.InstanceID) {
			ids = append(ids, id.InstanceID)
		}
	}
	if len(ids) == 0 {
		unknown("no Node has an AWS providerID to look up")
		return
	}
	api, err := d.EC2(ctx, g.Region)
	if err != nil {
		unknown(fmt.Sprintf("no AWS client (%v)", err))
		return
	}
	out, err := api.DescribeInstances(ctx, &ec2.DescribeInstancesInput{
		Filters: []ec2types.Filter{{Name: aws.String("instance-id"), Values: ids}}})
	if err != nil {
		unknown(fmt.Sprintf("DescribeInstances failed (%v)", err))
		return
	}
	// Each instance's cluster ID as the CCM reads its own instance's; found
	// counts the instances per ID, legacyOnly those identified by the legacy
	// tag alone.
	found, legacyOnly := map[string]int{}, map[string]int{}
	var ambiguous []string
	for _, r := range out.Reservations {
		for _, in := range r.Instances {
			id, legacy, err := clustertag.ClusterIDFromEC2Tags(in.Tags)
			switch {
			case err != nil:
				ambiguous = append(ambiguous, fmt.Sprintf("%s: %v", aws.ToString(in.InstanceId), err))
			case id != "":
				found[id]++
				if legacy {
					legacyOnly[id]++
				}
			}
		}
	}
	switch {
	case len(ambiguous) > 0:
		unknown(fmt.Sprintf("%d of %d instances are tagged for several clusters (%s)", len(ambiguous), len(ids), strings.Join(ambiguous, "; ")))
	case len(found) == 0:
		unknown(fmt.Sprintf("none of %d instances carries a %s<id> or %s tag", len(ids), clustertag.Prefix, clustertag.LegacyKey))
	case len(found) == 1:
		for id, n := range found {
			if legacyOnly[id] == n {
				// As the CCM does for its own instance tagged so: it then
				// filters by, and writes, the legacy tag.
				g.KubernetesClusterTag = id
				fmt.Fprintf(d.Log, "cluster ID %s: from the legacy %s=%s tag of %d of %d Nodes' instances (set as KubernetesClusterTag; KubernetesClusterID in the cloud config overrides)\n",
					id, clustertag.LegacyKey, id, n, len(ids))
				continue
			}
			g.KubernetesClusterID = id
			fmt.Fprintf(d.Log, "cluster ID %s: from the %s tag of %d of %d Nodes' instances (KubernetesClusterID in the cloud config overrides)\n", id, clustertag.Key(id), n, len(ids))
			if l := legacyOnly[id]; l > 0 {
				fmt.Fprintf(d.Log, "cluster ID %s: WARNING: %d of these instances carry only the legacy %s tag; the CCM finds instances by %s — tag them with it too\n",
					id, l, clustertag.LegacyKey, clustertag.Key(id))
			}
		}
	default:
		unknown(fmt.Sprintf("the instances are tagged for several clusters (%s)", strings.Join(slices.Sorted(maps.Keys(found)), ", ")))
	}
}
