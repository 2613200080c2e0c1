package awscloud

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/record"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
	"github.com/awsccmctl/awsccmctl/internal/instances"
	"github.com/awsccmctl/awsccmctl/internal/lb"
	"github.com/awsccmctl/awsccmctl/internal/routes"
	"github.com/awsccmctl/awsccmctl/internal/tagging"
	"github.com/awsccmctl/awsccmctl/internal/topology"
	"github.com/awsccmctl/awsccmctl/pkg/cloudconfig"
)

// Flags are the provider's own command-line settings (the "aws" flag set).
type Flags struct {
	// InstanceCacheMaxAge is how long an instance observation answers.
	InstanceCacheMaxAge time.Duration
	// AbsenceGracePeriod is how long an instance must be missing from
	// successful lookups before its Node may be deleted.
	AbsenceGracePeriod time.Duration
	// RequestTimeout bounds one AWS HTTP attempt.
	RequestTimeout time.Duration
	// MaxAbsentNodeDeletions bounds the Nodes deleted for missing
	// instances within one grace period (the node deletion breaker); 0
	// means max(10% of the Nodes, 3).
	MaxAbsentNodeDeletions int
}

// DefaultAbsenceGracePeriod covers EC2's eventual consistency for new
// instances with a wide margin (AWS's own tagging controller waits 5 min).
const DefaultAbsenceGracePeriod = 5 * time.Minute

// NewFlags returns the defaults.
func NewFlags() *Flags {
	return &Flags{InstanceCacheMaxAge: instances.DefaultMaxAge, AbsenceGracePeriod: DefaultAbsenceGracePeriod, RequestTimeout: awsapi.DefaultHTTPTimeout}
}

// AddFlags registers the flags.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&f.InstanceCacheMaxAge, "aws-instance-cache-max-age", f.InstanceCacheMaxAge,
		"How long an EC2 instance observation is reused by every controller before EC2 is asked again.")
	fs.DurationVar(&f.AbsenceGracePeriod, "aws-instance-absence-grace-period", f.AbsenceGracePeriod,
		"How long an instance must be missing from successful EC2 lookups (seen missing at least twice) before its Node may be deleted. Covers EC2's eventual consistency for new instances.")
	fs.DurationVar(&f.RequestTimeout, "aws-request-timeout", f.RequestTimeout,
		"Timeout of one AWS API HTTP attempt; the SDK retries timed-out attempts.")
	fs.IntVar(&f.MaxAbsentNodeDeletions, "aws-max-absent-node-deletions", f.MaxAbsentNodeDeletions,
		"The most Nodes whose instances are missing from EC2 (not terminated) the CCM lets be deleted within one absence grace period. When more are missing at once, the CCM suspects its own view of AWS (wrong region, VPC or account), deletes none of them and reports AWSNodeDeletionWithheld. 0 means max(10% of the Nodes, 3).")
}

// Validate checks the flags.
func (f *Flags) Validate() error {
	if f.InstanceCacheMaxAge <= 0 {
		return fmt.Errorf("--aws-instance-cache-max-age must be positive, got %s", f.InstanceCacheMaxAge)
	}
	if f.RequestTimeout <= 0 {
		return fmt.Errorf("--aws-request-timeout must be positive, got %s", f.RequestTimeout)
	}
	if f.MaxAbsentNodeDeletions < 0 {
		return fmt.Errorf("--aws-max-absent-node-deletions must be 0 (max(10%% of the Nodes, 3)) or positive, got %d", f.MaxAbsentNodeDeletions)
	}
	if f.AbsenceGracePeriod < f.InstanceCacheMaxAge {
		return fmt.Errorf("--aws-instance-absence-grace-period (%s) must be at least --aws-instance-cache-max-age (%s)", f.AbsenceGracePeriod, f.InstanceCacheMaxAge)
	}
	return nil
}

// Config is what New needs.
type Config struct {
	// CloudConfigPath is --cloud-config; empty means no file.
	CloudConfigPath string
	Flags           *Flags
	// Metrics records AWS calls; nil records nothing.
	Metrics *awsapi.Metrics
	// ViewMetrics records the instance view's hit rates; nil records nothing.
	ViewMetrics *instances.Metrics
	// RouteMetrics records route table problems and the routes' Warning
	// events; nil records nothing.
	RouteMetrics *routes.Metrics
	// TopologyMetrics counts Nodes left without network-node labels by a
	// denied ec2:DescribeInstanceTopology; nil records nothing.
	TopologyMetrics *topology.Metrics
	Clock           clock.PassiveClock
	// ClusterName is the CCM's --cluster-name; upstream hashes it into the
	// names of managed NLB security groups (empty: lb.DefaultClusterName).
	ClusterName string
	// TaggingTags are the tagging controller's --tags when it runs: the
	// instance view keeps those tags (and the cluster tag) of each instance.
	TaggingTags map[string]string
	// ClusterCIDR is --cluster-cidr (comma-separated): the routes own only
	// routes into it; empty leaves Routes() off.
	ClusterCIDR string
}

// Cloud is the AWS cloudprovider.Interface.
type Cloud struct {
	cfg   *cloudconfig.Config
	env   environment
	flags Flags
	clock clock.PassiveClock
	view  *instances.View
	zones *zoneIDs
	// broadcaster carries events; Initialize connects it to the API server.
	broadcaster record.EventBroadcaster
	// led is set once the library calls Initialize, which it does only in
	// a run of the controllers: with leader election, after this process
	// took the Lease (Led).
	led      atomic.Bool
	events   record.EventRecorder
	nodes    corelisters.NodeLister
	refs     *nodeRefs
	lb       *lb.Reconciler
	routes   *routes.Manager
	breaker  *instances.Breaker
	tagging  tagging.EC2
	topology *topology.Reader
}

var _ cloudprovider.Interface = (*Cloud)(nil)

// New loads the cloud config, finds region, VPC and cluster ID, and builds
// the AWS clients. Its errors name what is wrong and how to fix it.
func New(ctx context.Context, c Config) (*Cloud, error) {
	flags := c.Flags
	if flags == nil {
		flags = NewFlags()
	}
	if err := flags.Validate(); err != nil {
		return nil, err
	}
	clusterCIDRs, err := routes.ParseClusterCIDRs(c.ClusterCIDR)
	if err != nil {
		return nil, err
	}
	if c.CloudConfigPath == "" {
		klog.InfoS("No --cloud-config given; region, VPC and cluster ID come from IMDS and the CCM's own instance")
	}
	cc, err := cloudconfig.Load(c.CloudConfigPath)
	if err != nil {
		return nil, err
	}
	for _, w := range cc.Warnings() {
		klog.InfoS("Cloud config warning", "warning", w)
	}
	env, clients, err := resolveEnvironment(ctx, cc, awsapi.Options{CloudConfig: cc, Metrics: c.Metrics, HTTPTimeout: flags.RequestTimeout})
	if err != nil {
		return nil, err
	}
	clk := c.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	cloud := &Cloud{cfg: cc, env: env, flags: *flags, clock: clk, refs: newNodeRefs()}
	// The recorder exists from the start so every part can hold it; its
	// events reach the API server once Initialize connects the broadcaster,
	// and no controller runs before that. The broadcaster outlives ctx (which
	// bounds only New's own lookups): Initialize's stop shuts it down.
	cloud.broadcaster = record.NewBroadcaster(record.WithContext(context.WithoutCancel(ctx)))
	host, _ := os.Hostname()
	cloud.events = cloud.broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "aws-cloud-controller-manager", Host: host})
	cloud.view = instances.New(instances.NewEC2(clients.EC2), instances.Options{
		ClusterFilters: clusterFilters(env),
		VPCID:          env.VPCID,
		MaxAge:         flags.InstanceCacheMaxAge,
		Candidates:     cloud.candidates,
		Clock:          clk,
		Metrics:        c.ViewMetrics,
		TagKeys:        append(tagging.ViewTagKeys(c.TaggingTags, env.ClusterID), routes.ViewTagKeys(env.ClusterID)...),
	})
	cloud.tagging = tagging.NewEC2(clients.EC2)
	cloud.breaker = cloud.newBreaker(c.ViewMetrics)
	cloud.zones = newZoneIDs(newEC2Calls(clients.EC2), clk)
	if cloud.topology, err = newTopology(cc, clients.EC2, clk, c.TopologyMetrics); err != nil {
		return nil, err
	}
	cloud.lb = cloud.newLoadBalancers(clients, c.ClusterName)
	cloud.routes = cloud.newRoutes(clients, clusterCIDRs, c.RouteMetrics)
	klog.InfoS("AWS cloud provider ready", "region", env.Region, "vpc", env.VPCID, "clusterID", env.ClusterID,
		"legacyClusterTag", env.Legacy, "instanceCacheMaxAge", flags.InstanceCacheMaxAge, "absenceGracePeriod", flags.AbsenceGracePeriod,
		"maxAbsentNodeDeletions", flags.MaxAbsentNodeDeletions)
	return cloud, nil
}

// Initialize sends the provider's Warning events (on Nodes and Services)
// to the API server, until stop.
func (c *Cloud) Initialize(clientBuilder cloudprovider.ControllerClientBuilder, stop <-chan struct{}) {
	c.led.Store(true)
	go func() { <-stop; c.broadcaster.Shutdown() }()
	client, err := clientBuilder.Client("aws-cloud-provider")
	if err != nil {
		klog.ErrorS(err, "Cannot build a Kubernetes client for the AWS provider; Warning events on Nodes and Services are off")
		return
	}
	c.broadcaster.StartStructuredLogging(3)
	c.broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
}

// Led reports whether the controllers ran in this process: with leader
// election, whether it ever held the leader Lease.
func (c *Cloud) Led() bool { return c.led.Load() }

// SetInformers takes the Node lister from the controllers' shared informer
// factory (cloudprovider.InformerUser), so the view's candidates cost no
// watch of their own. The app calls it after Initialize, before any
// controller runs.
func (c *Cloud) SetInformers(factory informers.SharedInformerFactory) {
	c.nodes = factory.Core().V1().Nodes().Lister()
}

var _ cloudprovider.InformerUser = (*Cloud)(nil)

// candidates lists what the cluster's Nodes will ask the view about.
func (c *Cloud) candidates() instances.Candidates {
	if c.nodes == nil {
		return instances.Candidates{}
	}
	nodes, err := c.nodes.List(labels.Everything())
	if err != nil {
		return instances.Candidates{}
	}
	return c.refs.candidates(nodes)
}

// ProviderName returns "aws".
func (c *Cloud) ProviderName() string { return ProviderName }

// HasClusterID is true: New fails without one.
func (c *Cloud) HasClusterID() bool { return c.env.ClusterID != "" }

// InstancesV2 is the instances facet every node controller uses.
func (c *Cloud) InstancesV2() (cloudprovider.InstancesV2, bool) { return &instancesV2{c}, true }

// Instances (v1) is not offered: InstancesV2 supersedes it and costs fewer calls.
func (c *Cloud) Instances() (cloudprovider.Instances, bool) { return nil, false }

// Zones answers from the same instance view; with InstancesV2 the
// controllers do not call it, but other consumers of the interface may.
func (c *Cloud) Zones() (cloudprovider.Zones, bool) { return zonesFacet{c}, true }

// Clusters is not offered.
func (c *Cloud) Clusters() (cloudprovider.Clusters, bool) { return nil, false }
