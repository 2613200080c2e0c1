package awschecks

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	corev1 "k8s.io/api/core/v1"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
	"github.com/awsccmctl/awsccmctl/internal/clustertag"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/pkg/cloudconfig"
)

// Category of every check here.
const Category = "aws"

// Check IDs. They are stable: documented and used by --ignore-checks; never
// rename one.
const (
	IDIdentity         = "aws-identity"
	IDClusterID        = "aws-cluster-id"
	IDInstancesExist   = "aws-instances-exist"
	IDSubnetsTagged    = "aws-subnets-tagged"
	IDSecurityGroups   = "aws-security-groups"
	IDIMDS             = "aws-imds"
	IDIAMPermissions   = "aws-iam-permissions"
	IDRouteTables      = "aws-route-tables"
	IDNodeNames        = "aws-node-names"
	IDLoadBalancers    = "aws-load-balancers"
	describeBatch      = 150 // instance IDs per DescribeInstances (filter values are capped at 200)
	groupBatch         = 200 // group IDs per DescribeSecurityGroups
	listShown          = 10  // items a message lists before "and N more"
	roleELBTag         = "kubernetes.io/role/elb"
	roleInternalELBTag = "kubernetes.io/role/internal-elb"
)

// CCMPolicyFile is the generated policy granting what the CCM calls, by its
// path in the repository and the release archive.
const CCMPolicyFile = "iam/ccm-policy.json"

// Input is what the AWS checks look at.
type Input struct {
	// AWS are the calls the checks make (NewAPI). Without STS aws-identity
	// fails and every other check is skipped; without IAM
	// aws-iam-permissions is skipped.
	AWS API
	// CloudConfig is the CCM's cloud config; nil means none.
	CloudConfig *cloudconfig.Config
	// ClusterID is the cluster ID preflight was given; empty: the cloud
	// config's, else the one the instances are tagged with.
	ClusterID string
	// InstanceIDs are the instances of the cluster's Nodes (from their
	// providerIDs); empty in node mode.
	InstanceIDs []string
	// NodesWithoutProviderID are the names of the Nodes the CCM must find
	// by name (cluster mode).
	NodesWithoutProviderID []string
	// ControlPlaneInstanceIDs are the instances the CCM will run on.
	ControlPlaneInstanceIDs []string
	// CloudRoutes tells whether the CCM will configure cloud routes.
	CloudRoutes CloudRoutes
	// NodePodCIDRs has one entry per Node of the cluster: its pod CIDRs
	// (empty for a Node that has none yet). Cluster mode only; nil in node
	// mode, where the route quota is not checked.
	NodePodCIDRs [][]string
	// LoadBalancerServices are the cluster's Services of type LoadBalancer;
	// empty in node mode.
	LoadBalancerServices []corev1.Service
	// HostNetwork tells whether the CCM runs with hostNetwork: true.
	HostNetwork bool
	// Mode is the moment preflight runs at.
	Mode preflight.Mode
	// Unavailable, when set, says why AWS cannot be asked at all (the
	// region is unknown): every AWS check is skipped with this reason, so
	// the checks that need no AWS still run and report.
	Unavailable string
}

// ccmActions returns the actions the CCM calls; tests add a mutating one
// while the registry has none.
var ccmActions = func() []awsapi.Action { return awsapi.Actions(awsapi.ComponentCCM) }

// Checks returns the AWS checks in report order. aws-identity comes first
// and every other check requires it; the subnet and security-group checks
// also require aws-cluster-id, since they look for the cluster's tag.
func Checks(in Input) []preflight.Check {
	r := &runner{in: in, ec2: in.AWS.EC2, sts: in.AWS.STS, iam: in.AWS.IAM}
	c := func(id, title string, sev preflight.Severity, req []string, run func(context.Context) preflight.Result) preflight.Check {
		if in.Unavailable != "" {
			// Each check says why itself, rather than "requires aws-identity".
			req, run = nil, func(context.Context) preflight.Result { return preflight.Skip("%s", in.Unavailable) }
		}
		d := checkDocs[id]
		return preflight.Check{ID: id, Category: Category, Title: title, Description: d.description, Fix: d.fix, Severity: sev, Requires: req, Run: run}
	}
	const errSev, warnSev = preflight.SeverityError, preflight.SeverityWarning
	identity, cluster := []string{IDIdentity}, []string{IDIdentity, IDClusterID}
	return []preflight.Check{
		c(IDIdentity, "AWS credentials work (STS GetCallerIdentity)", errSev, nil, r.identity),
		c(IDClusterID, "Cluster ID known and consistent, instances tagged with it", errSev, identity, r.clusterID),
		c(IDInstancesExist, "Every Node's instance exists", errSev, identity, r.instancesExist),
		c(IDNodeNames, "Nodes without a providerID name an instance", errSev, identity, r.nodeNames),
		c(IDSubnetsTagged, "Each zone has a cluster-tagged load-balancer subnet", warnSev, cluster, r.subnetsTagged),
		c(IDSecurityGroups, "Each instance has exactly one cluster-tagged security group", warnSev, cluster, r.securityGroups),
		c(IDRouteTables, "The route controller finds the cluster's route table", errSev, cluster, r.routeTables),
		c(IDIMDS, "Control-plane IMDS settings fit how the CCM runs", warnSev, identity, r.imds),
		c(IDIAMPermissions, "The CCM's principal is allowed every action the CCM calls", errSev, identity, r.iamPermissions),
		c(IDLoadBalancers, "Existing load balancers will be adopted", warnSev, cluster, r.loadBalancers),
	}
}

// runner holds the input and what the checks fetched, so that every check
// shares one batched lookup.
type runner struct {
	in  Input
	ec2 EC2
	sts STS
	iam IAM

	mu        sync.Mutex
	caller    *sts.GetCallerIdentityOutput
	callerErr error
	instDone  bool
	inst      *instanceSet
	instErr   error
}

// instanceSet is what DescribeInstances said about the requested IDs.
type instanceSet struct {
	ids  []string                     // requested, deduplicated, in order
	byID map[string]ec2types.Instance // found, any state
}

// live returns the found instances that are not terminated or shutting
// down, in request order; only lists those of ids when given.
func (s *instanceSet) live(ids ...string) []ec2types.Instance {
	var only map[string]bool
	if len(ids) > 0 {
		only = make(map[string]bool, len(ids))
		for _, id := range ids {
			only[id] = true
		}
	}
	out := make([]ec2types.Instance, 0, min(len(s.byID), len(s.ids)))
	for _, id := range s.ids {
		in, ok := s.byID[id]
		if ok && !gone(in) && (only == nil || only[id]) {
			out = append(out, in)
		}
	}
	return out
}

func gone(in ec2types.Instance) bool {
	state := ec2types.InstanceStateName("")
	if in.State != nil {
		state = in.State.Name
	}
	return state == ec2types.InstanceStateNameTerminated || state == ec2types.InstanceStateNameShuttingDown
}

// callerIdentity calls STS GetCallerIdentity once.
func (r *runner) callerIdentity(ctx context.Context) (*sts.GetCallerIdentityOutput, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.caller == nil && r.callerErr == nil {
		r.caller, r.callerErr = r.sts.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	}
	return r.caller, r.callerErr
}

// instances describes every requested instance once. Up to describeBatch
// IDs take one DescribeInstances by the instance-id filter (an InstanceIds
// list fails whole when one ID is unknown). More take the CCM's way
// (internal/instances): one list of the cluster-tagged instances, 1,000 a
// page (clusterTagFilter), then the instance-id filter, describeBatch IDs a
// call, for the requested IDs that list did not return (untagged, another
// cluster's, terminated, unknown). At 5,000 tagged instances that is 5
// calls instead of 34, and EC2 matches one tag key per instance instead of
// 150 IDs.
func (r *runner) instances(ctx context.Context) (*instanceSet, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.instDone {
		return r.inst, r.instErr
	}
	r.instDone = true
	set := &instanceSet{byID: map[string]ec2types.Instance{}}
	requested := map[string]bool{}
	for _, id := range slices.Concat(r.in.InstanceIDs, r.in.ControlPlaneInstanceIDs) {
		if id != "" && !requested[id] {
			requested[id] = true
			set.ids = append(set.ids, id)
		}
	}
	rest := set.ids
	if len(set.ids) > describeBatch {
		if err := r.describe(ctx, r.clusterTagFilter(), func(in ec2types.Instance) {
			if id := aws.ToString(in.InstanceId); requested[id] {
				set.byID[id] = in
			}
		}); err != nil {
			r.instErr = fmt.Errorf("list the cluster-tagged instances: %w", err)
			return nil, r.instErr
		}
		rest = slices.DeleteFunc(slices.Clone(set.ids), func(id string) bool { _, ok := set.byID[id]; return ok })
	}
	for batch := range slices.Chunk(rest, describeBatch) {
		filter := ec2types.Filter{Name: aws.String("instance-id"), Values: batch}
		if err := r.describe(ctx, filter, func(in ec2types.Instance) { set.byID[aws.ToString(in.InstanceId)] = in }); err != nil {
			r.instErr = fmt.Errorf("describe %d instances: %w", len(batch), err)
			return nil, r.instErr
		}
	}
	r.inst = set
	return set, nil
}

// clusterTagFilter selects the instances tagged for the cluster: the
// cluster tag of each configured cluster ID, else of any cluster, and the
// legacy tag (whatever its value; instances of other clusters are dropped
// by ID).
func (r *runner) clusterTagFilter() ec2types.Filter {
	var keys []string
	ids := []string{r.in.ClusterID}
	if cc := r.in.CloudConfig; cc != nil {
		ids = append(ids, cc.Global.KubernetesClusterID, cc.Global.KubernetesClusterTag)
	}
	for _, id := range ids {
		if id != "" && !slices.Contains(keys, clustertag.Key(id)) {
			keys = append(keys, clustertag.Key(id))
		}
	}
	if len(keys) == 0 {
		keys = []string{clustertag.Prefix + "*"}
	}
	return ec2types.Filter{Name: aws.String("tag-key"), Values: append(keys, clustertag.LegacyKey)}
}

// describe calls DescribeInstances with filter, every page, and hands each
// instance to found.
func (r *runner) describe(ctx context.Context, filter ec2types.Filter, found func(ec2types.Instance)) error {
	p := ec2.NewDescribeInstancesPaginator(r.ec2.DescribeInstances, &ec2.DescribeInstancesInput{
		Filters:    []ec2types.Filter{filter},
		MaxResults: aws.Int32(1000),
	})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, res := range out.Reservations {
			for _, in := range res.Instances {
				found(in)
			}
		}
	}
	return nil
}

// describeFailed is the result when DescribeInstances failed.
func describeFailed(err error) preflight.Result {
	return failedCall(preflight.Fail("grant the caller ec2:DescribeInstances (attach iam/preflight-policy.json) and check the EC2 endpoint, then run preflight again",
		"%v", err), err)
}

// tags returns EC2 tags as a map.
func tags(ts []ec2types.Tag) map[string]string { return clustertag.Map(ts) }

// short lists at most listShown items, then says how many more there are.
func short(items []string) string {
	if len(items) <= listShown {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:listShown], ", "), len(items)-listShown)
}

// createTagsCmd is the AWS CLI command adding tags (Key=Value pairs).
func createTagsCmd(resources []string, kv ...string) string {
	if len(resources) > listShown {
		resources = resources[:listShown]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "aws ec2 create-tags --resources %s --tags", strings.Join(resources, " "))
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(&b, " Key=%s,Value=%s", kv[i], kv[i+1])
	}
	return b.String()
}
