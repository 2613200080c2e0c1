package leadermigration

import (
	"fmt"
	"slices"

	cmconfigv1 "k8s.io/controller-manager/config/v1"
	"sigs.k8s.io/yaml"
)

// Wire contracts shared with kube-controller-manager and cloud-provider:
// they MUST NOT change.
const (
	// LeaseName is the Lease (in kube-system, the namespace of both managers'
	// main leases) that the migrated controllers run under during the move.
	// It is the default of both managers.
	LeaseName = "cloud-provider-extraction-migration"
	// LeaseNamespace is where kube-controller-manager keeps its leases; the
	// CCM must elect in the same namespace or it never meets the migration
	// lease.
	LeaseNamespace = "kube-system"
	// KCMLeaseName is kube-controller-manager's main Lease.
	KCMLeaseName = "kube-controller-manager"
	// ComponentKCM and ComponentCCM are the component names a
	// LeaderMigrationConfiguration assigns controllers to.
	ComponentKCM = "kube-controller-manager"
	ComponentCCM = "cloud-controller-manager"
)

// Controller is one migrated controller under both of its names.
type Controller struct {
	// KCM is kube-controller-manager's name (1.26 and earlier).
	KCM string
	// CCM is the key of cloud-provider's controller map (0.28 and later).
	CCM string
}

// Controllers are the cloud loops that move from kube-controller-manager to
// the CCM. The cloud-node controller is not among them: the in-tree
// kube-controller-manager never ran it (the kubelet initialized Nodes).
var Controllers = []Controller{
	{KCM: "route", CCM: "node-route-controller"},
	{KCM: "service", CCM: "service-lb-controller"},
	{KCM: "cloud-node-lifecycle", CCM: "cloud-node-lifecycle-controller"},
}

// CCMNames returns the CCM's names of the migrated controllers, as its
// /healthz?verbose lists them.
func CCMNames() []string {
	out := make([]string, 0, len(Controllers))
	for _, c := range Controllers {
		out = append(out, c.CCM)
	}
	return out
}

// KCMNames returns kube-controller-manager's names of the migrated
// controllers, as its /healthz?verbose lists them.
func KCMNames() []string {
	out := make([]string, 0, len(Controllers))
	for _, c := range Controllers {
		out = append(out, c.KCM)
	}
	return out
}

// Render returns the LeaderMigrationConfiguration (controllermanager.config.k8s.io/v1)
// that assigns every migrated controller, under both names, to component:
// ComponentKCM for the file kube-controller-manager reads while it still
// runs the loops, ComponentCCM for the CCM's. Each side ignores the names it
// does not know. resourceLock is never written (trap A).
func Render(component string) ([]byte, error) {
	if component != ComponentKCM && component != ComponentCCM {
		return nil, fmt.Errorf("leader migration: component %q: want %s or %s", component, ComponentKCM, ComponentCCM)
	}
	c := cmconfigv1.LeaderMigrationConfiguration{LeaderName: LeaseName}
	c.APIVersion = cmconfigv1.SchemeGroupVersion.String()
	c.Kind = "LeaderMigrationConfiguration"
	for _, ctl := range Controllers {
		for _, name := range []string{ctl.KCM, ctl.CCM} {
			c.ControllerLeaders = append(c.ControllerLeaders, cmconfigv1.ControllerLeaderConfiguration{Name: name, Component: component})
		}
	}
	return yaml.Marshal(c)
}

// Validate decodes data strictly as a LeaderMigrationConfiguration v1 and
// checks what the hand-over needs: the migration lease's name, no
// resourceLock, and every migrated controller under both names assigned to
// component. It returns every problem at once.
func Validate(data []byte, component string) error {
	var c cmconfigv1.LeaderMigrationConfiguration
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		return fmt.Errorf("leader migration configuration: %w", err)
	}
	var problems []string
	if c.APIVersion != cmconfigv1.SchemeGroupVersion.String() || c.Kind != "LeaderMigrationConfiguration" {
		problems = append(problems, fmt.Sprintf("apiVersion/kind %s/%s: want %s/LeaderMigrationConfiguration", c.APIVersion, c.Kind, cmconfigv1.SchemeGroupVersion))
	}
	if c.LeaderName != LeaseName {
		problems = append(problems, fmt.Sprintf("leaderName %q: want %q, the lease kube-controller-manager contends", c.LeaderName, LeaseName))
	}
	assigned := map[string]string{}
	for _, l := range c.ControllerLeaders {
		assigned[l.Name] = l.Component
	}
	for _, ctl := range Controllers {
		for _, name := range []string{ctl.KCM, ctl.CCM} {
			if got, ok := assigned[name]; !ok {
				problems = append(problems, fmt.Sprintf("controller %q is not listed: without it the manager runs it outside the migration lease", name))
			} else if got != component && got != "*" {
				problems = append(problems, fmt.Sprintf("controller %q is assigned to %q, want %q", name, got, component))
			}
		}
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		return fmt.Errorf("leader migration configuration: %v", problems)
	}
	return nil
}
