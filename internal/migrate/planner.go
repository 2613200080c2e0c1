package migrate

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/leadermigration"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
)

// PlanOptions are plan's inputs besides the cluster.
type PlanOptions struct {
	// Name of the plan; "" derives one from the time.
	Name string
	// Mode; "" is ModeLeaderMigration.
	Mode Mode
	// Install is the CCM's install configuration (from install's flags);
	// plan pins what the migration needs (namespace, leader election,
	// cluster name) and refuses what contradicts it.
	Install install.Configuration
	// Preflight is the pre-migrate preflight report; nil means it was not
	// run, which plan refuses.
	Preflight *preflight.Report
	// NodeStepTimeout bounds each node step's wait (someone must run the
	// node command); 0: 30 minutes.
	NodeStepTimeout time.Duration
	// Now is the plan's creation time.
	Now time.Time
}

// Refusal is one reason plan will not migrate the cluster, and the way out.
type Refusal struct {
	Reason string `json:"reason"`
	WayOut string `json:"wayOut"`
}

// RefusedError lists every reason at once.
type RefusedError struct{ Refusals []Refusal }

func (e *RefusedError) Error() string {
	var b strings.Builder
	b.WriteString("migrate-from-intree refuses this cluster:")
	for _, r := range e.Refusals {
		fmt.Fprintf(&b, "\n  - %s\n    way out: %s", r.Reason, r.WayOut)
	}
	return b.String()
}

// idImagesECRProvider is preflight's check for Pods pulling private ECR
// images on nodes without a kubelet credential provider.
const idImagesECRProvider = "images-ecr-credential-provider"

// preflight checks whose failure plan explains in its own words.
var preflightWayOut = map[string]string{
	"storage-ebs-csi-driver": "install the EBS CSI driver (ebs.csi.aws.com) before the move: CSI migration for EBS is locked on since 1.25, and in-tree EBS volumes need the driver to attach",
	"aws-load-balancers":     "make the load balancers adoptable unchanged (the names and tags the in-tree provider writes), or move those Services first; the CCM must not recreate a load balancer (new DNS name)",
	"aws-iam-permissions":    "grant the CCM's role the policy from `awsccmctl install iam` (iam/), then plan again",
}

// BuildPlan decides whether and how the cluster can move, and writes the
// plan; every refusal is returned at once in a *RefusedError.
func BuildPlan(c *Cluster, o PlanOptions) (*MigrationPlan, error) {
	var refusals []Refusal
	refuse := func(reason, wayOut string) { refusals = append(refusals, Refusal{reason, wayOut}) }
	if o.Mode == "" {
		o.Mode = ModeLeaderMigration
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if _, ok := stepOrder[o.Mode]; !ok {
		return nil, fmt.Errorf("--mode %q: want %s or %s", o.Mode, ModeLeaderMigration, ModeRestart)
	}
	if c.Minor > MaxInTreeMinor {
		refuse(fmt.Sprintf("the control plane runs %s: Kubernetes 1.%d and later have no in-tree AWS provider, nothing is left to migrate", c.Version, MaxInTreeMinor+1),
			"use `awsccmctl install` to adopt or repair the external CCM, and `awsccmctl preflight --mode post-install`")
	}
	if len(c.KCM) == 0 {
		refuse("no kube-controller-manager mirror Pod in kube-system: the control plane is managed (EKS) or not run by kubelets of this cluster, so there are no flags to change",
			"a managed control plane moves off the in-tree provider with the provider's own upgrade; for a self-hosted control plane run elsewhere, do the migration by hand (docs/migrate-from-intree.md)")
	}
	dist, layoutRefusal := c.distribution()
	if layoutRefusal != nil {
		refusals = append(refusals, *layoutRefusal)
	}
	cp := c.controlPlaneNodes()
	if len(c.KCM) > 0 {
		provider, _, err := c.kcmFlag("cloud-provider")
		switch {
		case err != nil:
			refuse(err.Error(), "make every control-plane node's kube-controller-manager flags the same, then plan again")
		case provider == "external":
			refuse("kube-controller-manager already runs with --cloud-provider=external: the in-tree provider is off",
				"use `awsccmctl install` to run (or adopt) the CCM; `awsccmctl migrate-from-intree status` shows an earlier migration")
		case provider != "aws":
			refuse(fmt.Sprintf("kube-controller-manager has --cloud-provider=%q, not aws", provider), "only the in-tree AWS provider is migrated by this command")
		}
	}
	kcmRoutes, routeRefusals := c.cloudRoutes()
	refusals = append(refusals, routeRefusals...)
	if o.Mode == ModeLeaderMigration && c.KCMVersion != "" && minorOf(c.KCMVersion) >= 0 && minorOf(c.KCMVersion) < MinLeaderMigrationMinor {
		refuse(fmt.Sprintf("kube-controller-manager is %s: leader migration's v1 configuration needs 1.%d or later", c.KCMVersion, MinLeaderMigrationMinor),
			fmt.Sprintf("upgrade the control plane to 1.%d-1.%d first, or use --mode=restart on a single control-plane node", MinLeaderMigrationMinor, MaxInTreeMinor))
	}
	if o.Mode == ModeRestart && len(cp) > 1 {
		refuse(fmt.Sprintf("--mode=restart on %d control-plane nodes: while some run the in-tree loops and others do not, the loops run twice or not at all", len(cp)),
			"use the default --mode=leader-migration")
	}
	refusals = append(refusals, preflightRefusals(o.Preflight)...)

	inst := o.Install
	inst.APIVersion, inst.Kind = install.ConfigAPIVersion, install.ConfigKind
	if o.Mode == ModeLeaderMigration {
		switch inst.Namespace {
		case "", leadermigration.LeaseNamespace:
			inst.Namespace = leadermigration.LeaseNamespace
		default:
			refuse(fmt.Sprintf("--namespace %s: during leader migration the CCM must elect its leader in %s, where kube-controller-manager holds the migration lease", inst.Namespace, leadermigration.LeaseNamespace),
				"install the CCM in kube-system (the default)")
		}
		if inst.LeaderElect != nil && !*inst.LeaderElect {
			refuse("--leader-elect=false: leader migration hands the loops over through leader election", "leave leader election on")
		}
	}
	clusterName, _, _ := c.kcmFlag("cluster-name")
	if clusterName == "" {
		clusterName = install.DefaultClusterName
	}
	switch {
	case inst.ClusterName == "":
		inst.ClusterName = clusterName
	case inst.ClusterName != clusterName:
		refuse(fmt.Sprintf("--cluster-name %s, but kube-controller-manager runs with --cluster-name=%s: the CCM would not recognise the load balancers the in-tree provider made (their names and tags derive from it)", inst.ClusterName, clusterName),
			fmt.Sprintf("leave --cluster-name unset, or set it to %s", clusterName))
	}
	refusals = append(refusals, carryCloudRoutes(&inst, kcmRoutes)...)
	if len(refusals) > 0 {
		return nil, &RefusedError{Refusals: refusals}
	}

	lease, err := c.kcmDuration("leader-elect-lease-duration", DefaultLeaseDuration)
	if err != nil {
		return nil, err
	}
	retryPeriod, err := c.kcmDuration("leader-elect-retry-period", DefaultRetryPeriod)
	if err != nil {
		return nil, err
	}
	name := o.Name
	if name == "" {
		name = "migrate-" + o.Now.UTC().Format("20060102-150405")
	}
	p := &MigrationPlan{
		APIVersion: PlanAPIVersion, Kind: PlanKind,
		Metadata: PlanMeta{Name: name, CreatedAt: metav1.NewTime(o.Now.UTC().Truncate(time.Second))},
		Spec: PlanSpec{
			Mode:    o.Mode,
			Install: inst,
			Cluster: ClusterSummary{
				KubernetesVersion: c.Version, Distribution: dist, ControlPlaneNodes: cp, Nodes: len(c.Nodes),
				KCMIdentity: DefaultKCMIdentity, ClusterName: clusterName,
			},
			Handover: Handover{
				LeaseDuration: durationOf(lease), RetryPeriod: durationOf(retryPeriod),
				ExpectedGap: durationOf(lease + retryPeriod),
				// Generous: the CCM's lease attempts are jittered and a busy
				// control plane slows every renewal.
				GateBound: durationOf(4*(lease+retryPeriod) + 30*time.Second),
			},
			NodeGroups: c.nodeGroups(),
		},
	}
	for _, svc := range slices.Sorted(maps.Keys(c.LoadBalancers)) {
		p.Spec.LoadBalancers = append(p.Spec.LoadBalancers, LoadBalancer{Service: svc, Hostname: c.LoadBalancers[svc]})
	}
	p.Spec.Steps = planSteps(p, o)
	if dist == DistributionKops {
		if p.Spec.Kops, err = kopsInstructions(p); err != nil {
			return nil, err
		}
	}
	if err := p.Validate(); err != nil {
		return nil, errors.Join(errors.New("the plan does not validate (a bug)"), err)
	}
	return p, nil
}

// minorOf returns the minor of "v1.26.13", or -1.
func minorOf(v string) int {
	var major, minor int
	if _, err := fmt.Sscanf(strings.TrimPrefix(v, "v"), "%d.%d", &major, &minor); err != nil || major != 1 {
		return -1
	}
	return minor
}

func preflightRefusals(r *preflight.Report) []Refusal {
	if r == nil {
		return []Refusal{{"the pre-migrate preflight did not run", "run plan without --skip-preflight"}}
	}
	var out []Refusal
	for _, f := range r.Findings {
		// A warning there is a refusal here: after kubelet-external the
		// kubelets have no in-tree ECR credentials, and those pulls fail.
		if f.ID == idImagesECRProvider && f.Status == preflight.StatusWarn && !f.Ignored {
			out = append(out, Refusal{Reason: fmt.Sprintf("preflight %s: %s; the kubelet-external step removes the in-tree ECR credentials", f.ID, f.Message),
				WayOut: "configure a kubelet credential provider for ECR on those nodes first (" + f.Remediation + ")"})
			continue
		}
		if f.Status != preflight.StatusFail {
			continue
		}
		way := preflightWayOut[f.ID]
		if way == "" {
			way = f.Remediation
		}
		if way == "" {
			way = "fix what the check reports; `awsccmctl preflight --mode pre-migrate` runs it alone"
		}
		out = append(out, Refusal{Reason: fmt.Sprintf("preflight %s failed: %s", f.ID, f.Message), WayOut: way})
	}
	return out
}
