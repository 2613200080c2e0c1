package lb

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/awsccmctl/awsccmctl/internal/instances"
	"github.com/awsccmctl/awsccmctl/internal/lbconfig"
	"github.com/awsccmctl/awsccmctl/internal/lbnames"
)

// Event reasons on Services. They are part of the user interface: alerts
// and runbooks match on them.
const (
	// ReasonInvalidConfiguration: an annotation or spec field cannot be
	// used; what it governs is left as it is in AWS.
	ReasonInvalidConfiguration = "InvalidLoadBalancerConfiguration"
	// ReasonTargetSkipped: a node cannot be a target (no providerID, no
	// instance, no usable security group).
	ReasonTargetSkipped = "LoadBalancerTargetSkipped"
	// ReasonForeignResource: a resource named like this Service's carries
	// another cluster's or Service's tags, or is a security group without
	// the cluster's owned tag (ownedGroup), and is left alone.
	ReasonForeignResource = "LoadBalancerResourceNotOwned"
	// ReasonNLBGroupUnavailable: NLBSecurityGroupMode = Managed, but the
	// Service's NLB was created without a security group, and AWS cannot
	// add one: it keeps its node rules by CIDR.
	ReasonNLBGroupUnavailable = "NLBSecurityGroupUnavailable"
)

// Env is where the reconciler works and for which cluster.
type Env struct {
	Region    string
	VPCID     string
	ClusterID string
	// ClusterName is the CCM's --cluster-name (default
	// DefaultClusterName), which upstream hashes into the name of an
	// NLB's managed security group.
	ClusterName string
	// Legacy: the cluster is identified by KubernetesCluster=<id>, which is
	// then written next to the kubernetes.io/cluster/<id> tag.
	Legacy bool
}

// Options are the cloud-config settings the reconciler honours.
type Options struct {
	// ElbSecurityGroup replaces the managed k8s-elb-<name> group of Classic
	// load balancers (cloud config ElbSecurityGroup).
	ElbSecurityGroup string
	// DisableSecurityGroupIngress: never change node security groups.
	DisableSecurityGroupIngress bool
	// SharedProbe, when set, makes ETP=Cluster Services health-check
	// kube-proxy (ClusterServiceLoadBalancerHealthProbeMode=Shared).
	SharedProbe *SharedProbe
	// NLBManagedSecurityGroups is NLBSecurityGroupMode = Managed: new NLBs
	// get their own security group (nlb_secgroup.go).
	NLBManagedSecurityGroups bool
	// NetworkMaxAge is how long discovered subnets and route tables are
	// reused (default DefaultNetworkMaxAge).
	NetworkMaxAge time.Duration
}

// SharedProbe is kube-proxy's health endpoint.
type SharedProbe struct {
	Port int32
	Path string
}

// DefaultNetworkMaxAge bounds how stale subnet discovery may be. Subnets
// change rarely; a new subnet is picked up within this time.
const DefaultNetworkMaxAge = 5 * time.Minute

// InstanceSource resolves instance IDs, all in one go; *instances.View is
// one. Absent IDs are left out of the map. An error means EC2 could not
// answer, never that instances are gone.
type InstanceSource interface {
	ByIDs(ctx context.Context, ids []string) (map[string]*instances.Instance, error)
}

// Config is what New needs.
type Config struct {
	EC2       EC2
	ELB       ELB
	ELBv2     ELBv2
	Env       Env
	Options   Options
	Instances InstanceSource
	// Events records Warning events on Services; required.
	Events record.EventRecorder
	Clock  clock.PassiveClock
}

// Reconciler creates, updates and deletes the load balancers of Services.
// It is safe for concurrent use by the service controller's workers.
type Reconciler struct {
	Config
	network *networkCache

	mu sync.Mutex
	// nodeGroups remembers, per load balancer, the node security groups
	// this process last reconciled: while they are unchanged, no search
	// for stale rules in other groups is needed.
	nodeGroups map[string]string
	// pending remembers, per load balancer, a target-group cleanup that
	// failed (see leftovers.go). Node rules a Classic load balancer still
	// owes a revocation are recorded on the load balancer, not here
	// (classic_revoke.go).
	pending map[string]*pendingCleanup
	// lookups are what Get last found, per load balancer name, for the
	// Delete that follows it (lookup.go).
	lookups map[string]lookup
}

// New returns a reconciler.
func New(c Config) *Reconciler {
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	if c.Env.ClusterName == "" {
		c.Env.ClusterName = DefaultClusterName
	}
	if c.Options.NetworkMaxAge <= 0 {
		c.Options.NetworkMaxAge = DefaultNetworkMaxAge
	}
	r := &Reconciler{Config: c, nodeGroups: map[string]string{}, pending: map[string]*pendingCleanup{}, lookups: map[string]lookup{}}
	r.network = &networkCache{r: r}
	return r
}

// desired parses the Service, reports every problem as a Warning event and
// returns an error when a problem blocks the load balancer altogether.
func (r *Reconciler) desired(svc *corev1.Service, kind lbnames.LoadBalancerKind) (*lbconfig.Config, error) {
	cfg, problems := lbconfig.Parse(svc, kind)
	var blocking []string
	for _, p := range problems {
		r.Events.Eventf(svc, corev1.EventTypeWarning, ReasonInvalidConfiguration, "%s; what it governs is left unchanged", p)
		if p.Blocking() {
			blocking = append(blocking, p.String())
		}
	}
	if len(blocking) > 0 {
		return nil, fmt.Errorf("the Service cannot have an AWS load balancer as written: %s", strings.Join(blocking, "; "))
	}
	if r.Options.SharedProbe != nil {
		r.applySharedProbe(svc, cfg)
	}
	return cfg, nil
}

// applySharedProbe points ETP=Cluster health checks at kube-proxy unless the
// Service chose its own protocol, port or path.
func (r *Reconciler) applySharedProbe(svc *corev1.Service, cfg *lbconfig.Config) {
	if svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal {
		return
	}
	for _, k := range []string{lbconfig.KeyHealthCheckProtocol, lbconfig.KeyHealthCheckPort, lbconfig.KeyHealthCheckPath} {
		if strings.TrimSpace(svc.Annotations[k]) != "" {
			return
		}
	}
	cfg.HealthCheck.Protocol = lbconfig.ProtocolHTTP
	cfg.HealthCheck.Port = fmt.Sprint(r.Options.SharedProbe.Port)
	cfg.HealthCheck.Path = r.Options.SharedProbe.Path
}

// Ensure creates or updates the Service's load balancer.
func (r *Reconciler) Ensure(ctx context.Context, svc *corev1.Service, nodes []*corev1.Node) (*corev1.LoadBalancerStatus, error) {
	r.forgetLookup(lbnames.LoadBalancerName(svc))
	kind := lbnames.Kind(svc)
	if kind == lbnames.KindNotOurs {
		return nil, cloudprovider.ImplementedElsewhere
	}
	cfg, err := r.desired(svc, kind)
	if err != nil {
		return nil, err
	}
	targets, err := r.targets(ctx, svc, cfg, nodes)
	if err != nil {
		return nil, err
	}
	start := r.Clock.Now()
	var dns string
	if kind == lbnames.KindNLB {
		dns, err = r.ensureNLB(ctx, svc, cfg, targets)
	} else {
		dns, err = r.ensureClassic(ctx, svc, cfg, targets)
	}
	if err != nil {
		return nil, err
	}
	klog.V(2).InfoS("Ensured load balancer", "service", klog.KObj(svc), "name", cfg.Name, "kind", kind, "targets", len(targets), "took", r.Clock.Since(start))
	return &corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{Hostname: dns}}}, nil
}

// Update brings the targets (and the node security-group rules) up to date
// with nodes; nothing else changes.
func (r *Reconciler) Update(ctx context.Context, svc *corev1.Service, nodes []*corev1.Node) error {
	r.forgetLookup(lbnames.LoadBalancerName(svc))
	kind := lbnames.Kind(svc)
	if kind == lbnames.KindNotOurs {
		return cloudprovider.ImplementedElsewhere
	}
	cfg, err := r.desired(svc, kind)
	if err != nil {
		return err
	}
	targets, err := r.targets(ctx, svc, cfg, nodes)
	if err != nil {
		return err
	}
	if kind == lbnames.KindNLB {
		return r.updateNLB(ctx, svc, cfg, targets)
	}
	return r.updateClassic(ctx, svc, cfg, targets)
}

// Get reports the Service's load balancer. It looks for both types, so a
// Service whose type annotation changed or which stopped being of type
// LoadBalancer is still cleaned up, and it reports exists while any owned
// part is left (a half-built or half-deleted load balancer), so the
// service controller keeps calling Delete and the cleanup finalizer stays.
func (r *Reconciler) Get(ctx context.Context, svc *corev1.Service) (*corev1.LoadBalancerStatus, bool, error) {
	if isExternal(svc) {
		return nil, false, nil
	}
	name := lbnames.LoadBalancerName(svc)
	clb, err := r.describeClassic(ctx, name)
	if err != nil {
		return nil, false, err
	}
	if clb != nil {
		r.rememberLookup(name, svc, lookup{classic: clb})
		return hostnameStatus(clb.DNSName), true, nil
	}
	nlb, err := r.describeNLB(ctx, name)
	if err != nil {
		return nil, false, err
	}
	if nlb != nil {
		r.rememberLookup(name, svc, lookup{nlb: nlb, nlbKnown: true})
		return hostnameStatus(nlb.DNSName), true, nil
	}
	left, err := r.leftovers(ctx, svc)
	if err != nil {
		return nil, false, err
	}
	if len(left) > 0 {
		klog.InfoS("Load balancer is gone but owned parts remain; reporting it as existing so they are deleted", "service", klog.KObj(svc), "remaining", left)
		r.rememberLookup(name, svc, lookup{nlbKnown: true})
		return &corev1.LoadBalancerStatus{}, true, nil
	}
	return nil, false, nil
}

// Delete removes the Service's load balancer and every part this CCM made
// for it. It returns nil only when nothing is left; an error makes the
// service controller retry with backoff (no worker waits on AWS).
func (r *Reconciler) Delete(ctx context.Context, svc *corev1.Service) error {
	if isExternal(svc) {
		return cloudprovider.ImplementedElsewhere
	}
	groups, err := r.ownServiceGroups(ctx, svc)
	if err != nil {
		return err
	}
	for _, f := range groups.foreign {
		r.Events.Eventf(svc, corev1.EventTypeWarning, ReasonForeignResource, "%v; it is not deleted", f)
	}
	seen := r.takeLookup(lbnames.LoadBalancerName(svc), svc)
	errs := []error{r.deleteClassic(ctx, svc, groups.classic, groups.notOurs, seen), r.deleteNLB(ctx, svc, groups.nlb, seen)}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	r.mu.Lock()
	delete(r.nodeGroups, lbnames.LoadBalancerName(svc))
	r.mu.Unlock()
	return nil
}

// leftovers lists owned parts that outlive a missing load balancer: the
// managed groups of either type (rules in node groups reference them, so
// they outlive them), and for an NLB its target groups and its rules in
// node groups, found by tag and by description.
func (r *Reconciler) leftovers(ctx context.Context, svc *corev1.Service) ([]string, error) {
	var out []string
	own, err := r.ownServiceGroups(ctx, svc)
	if err != nil {
		return nil, err
	}
	for _, g := range []*group{own.classic, own.nlb} {
		if g != nil {
			out = append(out, "security group "+g.id)
		}
	}
	name := lbnames.LoadBalancerName(svc)
	if svc.Annotations[lbnames.TypeAnnotation] == lbnames.TypeNLB || r.targetGroupSweepPending(name) {
		tgs, err := r.ownedTargetGroups(ctx, svc, "")
		if err != nil {
			return nil, err
		}
		for _, tg := range tgs {
			out = append(out, "target group "+tg)
		}
		if !r.Options.DisableSecurityGroupIngress {
			groups, err := r.nlbRuleGroups(ctx, nlbRuleOwner(name))
			if err != nil {
				return nil, err
			}
			for _, id := range slices.Sorted(maps.Keys(groups)) {
				out = append(out, "rules in security group "+id)
			}
		}
	}
	return out, nil
}

// isExternal: the AWS Load Balancer Controller provides it.
func isExternal(svc *corev1.Service) bool {
	if svc.Spec.LoadBalancerClass != nil {
		return true
	}
	t := svc.Annotations[lbnames.TypeAnnotation]
	return t == lbnames.TypeNLBIP || t == lbnames.TypeExternal
}

func hostnameStatus(dns *string) *corev1.LoadBalancerStatus {
	if dns == nil || *dns == "" {
		return &corev1.LoadBalancerStatus{}
	}
	return &corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{Hostname: *dns}}}
}

// rememberNodeGroups records the node groups reconciled for lb and reports
// whether they differ from the last ones (or none were recorded), with
// the last ones.
func (r *Reconciler) rememberNodeGroups(lb string, groups []string) (previous []string, changed bool) {
	key := strings.Join(groups, ",")
	r.mu.Lock()
	defer r.mu.Unlock()
	old, ok := r.nodeGroups[lb]
	r.nodeGroups[lb] = key
	if old != "" {
		previous = strings.Split(old, ",")
	}
	return previous, !ok || old != key
}

// forgetNodeGroups makes the next sync search for stale rules again (after
// a failed rule change).
func (r *Reconciler) forgetNodeGroups(lb string) {
	r.mu.Lock()
	delete(r.nodeGroups, lb)
	r.mu.Unlock()
}

// keepScheme makes cfg follow an existing load balancer's scheme, which AWS
// cannot change: subnets are then chosen for the scheme it has, not for the
// annotation (upstream would attach an internet-facing load balancer to
// private subnets when the internal annotation is added later). A Warning
// says the annotation has no effect.
func (r *Reconciler) keepScheme(svc *corev1.Service, cfg *lbconfig.Config, actual string) {
	if actual == "" || lbconfig.Scheme(actual) == cfg.Scheme {
		return
	}
	r.Events.Eventf(svc, corev1.EventTypeWarning, ReasonInvalidConfiguration,
		"%s: the load balancer %s is %s and AWS cannot change a scheme after creation; recreate the Service to get an %s one",
		lbconfig.KeyInternal, cfg.Name, actual, cfg.Scheme)
	cfg.Scheme = lbconfig.Scheme(actual)
}
