package migrate

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/awsccmctl/awsccmctl/internal/install"
)

// The plan file's type: a contract with users' files and scripts.
const (
	PlanAPIVersion = "awsccmctl.io/v1alpha1"
	PlanKind       = "MigrationPlan"
)

// Mode is how the cloud loops move.
type Mode string

// Modes.
const (
	// ModeLeaderMigration hands the loops over through the shared migration
	// lease (KEP-2436): no overlap, a gap of about one lease duration. The
	// default, and required with more than one control-plane node.
	ModeLeaderMigration Mode = "leader-migration"
	// ModeRestart turns the loops off in kube-controller-manager, then starts
	// the CCM; single control-plane node only.
	ModeRestart Mode = "restart"
)

// Distribution is how the control plane was built.
type Distribution string

// Distributions.
const (
	DistributionKubeadm Distribution = "kubeadm"
	DistributionKops    Distribution = "kops"
)

// MigrationPlan is the versioned plan file `migrate-from-intree plan`
// writes and `apply` executes.
type MigrationPlan struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   PlanMeta `json:"metadata"`
	Spec       PlanSpec `json:"spec"`
}

// PlanMeta identifies a plan.
type PlanMeta struct {
	// Name identifies the migration in the journal: a run of another plan
	// is refused while this one is unfinished.
	Name      string      `json:"name"`
	CreatedAt metav1.Time `json:"createdAt"`
}

// PlanSpec is what the plan does.
type PlanSpec struct {
	Mode Mode `json:"mode"`
	// Cluster is what plan saw; apply checks it still holds.
	Cluster ClusterSummary `json:"cluster"`
	// Install is the CCM install's configuration, rendered by install's own
	// renderer; the leader-migration flags are added for the migration only.
	Install install.Configuration `json:"install"`
	// Handover states the expected gap of the cloud loops.
	Handover Handover `json:"handover"`
	// LoadBalancers are the Services' load balancers the CCM must adopt
	// unchanged; apply checks their hostnames after each step.
	LoadBalancers []LoadBalancer `json:"loadBalancers,omitempty"`
	// NodeGroups are the kubelets to switch, in order, after the control plane.
	NodeGroups []NodeGroup `json:"nodeGroups"`
	// Kops holds the cluster-spec edits and commands for kops clusters,
	// where nodeup rewrites the node files.
	Kops *KopsInstructions `json:"kops,omitempty"`
	// Steps run in order.
	Steps []Step `json:"steps"`
}

// ClusterSummary is the cluster as plan saw it.
type ClusterSummary struct {
	KubernetesVersion string       `json:"kubernetesVersion"`
	Distribution      Distribution `json:"distribution"`
	ControlPlaneNodes []string     `json:"controlPlaneNodes"`
	Nodes             int          `json:"nodes"`
	// KCMIdentity is the user kube-controller-manager authenticates as,
	// granted the migration lease (kubeadm and kops: system:kube-controller-manager).
	KCMIdentity string `json:"kcmIdentity"`
	// ClusterName is the in-tree provider's cluster ID (KubernetesClusterTag
	// or --cluster-name): the CCM must use the same, or it does not recognise
	// the load balancers and tags the in-tree provider made.
	ClusterName string `json:"clusterName"`
}

// Handover is the expected hand-over of the cloud loops.
type Handover struct {
	// LeaseDuration is kube-controller-manager's --leader-elect-lease-duration.
	LeaseDuration metav1.Duration `json:"leaseDuration"`
	// RetryPeriod is the CCM's --leader-elect-retry-period.
	RetryPeriod metav1.Duration `json:"retryPeriod"`
	// ExpectedGap is how long no manager runs the cloud loops: about one lease
	// duration plus one retry period after the old holder's last renewal.
	ExpectedGap metav1.Duration `json:"expectedGap"`
	// GateBound is how long the cut-over gate waits for the CCM to take the
	// migration lease before it fails.
	GateBound metav1.Duration `json:"gateBound"`
}

// LoadBalancer is one Service's load balancer.
type LoadBalancer struct {
	Service  string `json:"service"`
	Hostname string `json:"hostname"`
}

// NodeGroup is a set of nodes whose kubelets switch together.
type NodeGroup struct {
	Name  string   `json:"name"`
	Nodes []string `json:"nodes"`
	// KubeletFlags are the extra flags their kubelets need besides
	// --cloud-provider=external (e.g. --hostname-override where the node name
	// would not resolve).
	KubeletFlags []string `json:"kubeletFlags,omitempty"`
}

// KopsInstructions replace the node phases on kops clusters.
type KopsInstructions struct {
	// ClusterName is the kops cluster every command names (--name).
	ClusterName string `json:"clusterName,omitempty"`
	// ClusterSpecEdits say what each step sets, for people.
	ClusterSpecEdits []string `json:"clusterSpecEdits"`
	// Commands are every edit's commands, in order.
	Commands []string `json:"commands"`
	// Edits are the same per plan step, in the plan's order, for tools: the
	// `kops edit cluster --set` values each step applies on top of the
	// earlier steps' edits, and its commands (the edit, then the update and
	// rolling update that take it to the cluster).
	Edits []KopsEdit `json:"edits,omitempty"`
}

// KopsEdit is one plan step's cluster-spec edit on a kops cluster.
type KopsEdit struct {
	// Step is the plan step the edit does.
	Step string `json:"step"`
	// Set are `kops edit cluster --set` values, spec.<path>=<value>, paths
	// as kops' --set takes them.
	Set []string `json:"set,omitempty"`
	// Commands run it, in order.
	Commands []string `json:"commands"`
}

// Runs says where a step's action happens.
type Runs string

// Where steps run.
const (
	// RunsCluster: apply does the action through the API.
	RunsCluster Runs = "cluster"
	// RunsNodes: `migrate-from-intree node --phase Phase` on each of Nodes
	// does it; apply waits for the evidence.
	RunsNodes Runs = "nodes"
)

// Step is one step of the plan.
type Step struct {
	// Name is stable: --until, rollback --to and the journal use it.
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	Runs         Runs            `json:"runs"`
	Phase        string          `json:"phase,omitempty"`
	Nodes        []string        `json:"nodes,omitempty"`
	Mutating     bool            `json:"mutating"`
	Precondition string          `json:"precondition"`
	Action       string          `json:"action"`
	Gate         string          `json:"gate"`
	Timeout      metav1.Duration `json:"timeout"`
	Undo         string          `json:"undo"`
}

// EncodePlan writes p as YAML.
func EncodePlan(p *MigrationPlan) ([]byte, error) { return yaml.Marshal(p) }

// DecodePlan reads a plan file strictly (unknown and duplicate fields are
// errors) and validates it.
func DecodePlan(data []byte) (*MigrationPlan, error) {
	var tm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(data, &tm); err != nil {
		return nil, fmt.Errorf("not a YAML object: %w", err)
	}
	if tm.APIVersion != PlanAPIVersion || tm.Kind != PlanKind {
		return nil, fmt.Errorf("apiVersion %q, kind %q: want %s %s", tm.APIVersion, tm.Kind, PlanAPIVersion, PlanKind)
	}
	var p MigrationPlan
	if err := yaml.UnmarshalStrict(data, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", PlanKind, err)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

// Validate checks a decoded plan: known mode and step names in the order
// the mode requires, positive timeouts, an install configuration install
// accepts. It returns every problem at once.
func (p *MigrationPlan) Validate() error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if p.Metadata.Name == "" {
		add("metadata.name: required")
	}
	want, ok := stepOrder[p.Spec.Mode]
	if !ok {
		add("spec.mode %q: want %s or %s", p.Spec.Mode, ModeLeaderMigration, ModeRestart)
	}
	var names []string
	for i, s := range p.Spec.Steps {
		names = append(names, s.Name)
		if s.Timeout.Duration <= 0 {
			add("spec.steps[%d] (%s): timeout must be positive", i, s.Name)
		}
		if s.Runs == RunsNodes && (s.Phase == "" || len(s.Nodes) == 0) {
			add("spec.steps[%d] (%s): a node step needs a phase and nodes", i, s.Name)
		}
	}
	if ok && !slices.Equal(baseNames(names), want) {
		add("spec.steps: %s does not run %s in this order (want %s); write a new plan with `migrate-from-intree plan`",
			strings.Join(names, ", "), p.Spec.Mode, strings.Join(want, ", "))
	}
	errs = append(errs, p.validateKops()...)
	if p.Spec.Handover.GateBound.Duration <= 0 && p.Spec.Mode == ModeLeaderMigration {
		add("spec.handover.gateBound: must be positive")
	}
	v, err := p.Values()
	if err == nil {
		v.Default()
		err = v.Validate()
	}
	if err != nil {
		add("spec.install: %v", err)
	}
	return errors.Join(errs...)
}

// Values returns install's values for the CCM the plan installs (without
// the leader-migration file, which the steps add and remove).
func (p *MigrationPlan) Values() (install.Values, error) {
	var v install.Values
	c := p.Spec.Install
	if err := c.ApplyTo(&v); err != nil {
		return v, err
	}
	return v, nil
}

// Step returns the named step and its index.
func (p *MigrationPlan) Step(name string) (int, *Step, bool) {
	for i := range p.Spec.Steps {
		if p.Spec.Steps[i].Name == name {
			return i, &p.Spec.Steps[i], true
		}
	}
	return -1, nil, false
}

// StepNames lists the steps' names in order.
func (p *MigrationPlan) StepNames() []string {
	out := make([]string, 0, len(p.Spec.Steps))
	for _, s := range p.Spec.Steps {
		out = append(out, s.Name)
	}
	return out
}

// baseNames maps node-group steps ("kubelet-external/workers") to their kind.
func baseNames(names []string) []string {
	var out []string
	for _, n := range names {
		base, _, _ := strings.Cut(n, "/")
		if len(out) > 0 && out[len(out)-1] == base && base == StepKubeletExternal {
			continue
		}
		out = append(out, base)
	}
	return out
}

// durationOf is a metav1.Duration.
func durationOf(d time.Duration) metav1.Duration { return metav1.Duration{Duration: d} }
