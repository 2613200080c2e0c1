package migrate

import (
	"context"
	"fmt"
	"io"

	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/internal/preflight/gather"
)

// ClusterPlanOptions are what PlanCluster needs besides the cluster's
// client.
type ClusterPlanOptions struct {
	// Plan are BuildPlan's options; PlanCluster fills in Preflight.
	Plan PlanOptions
	// Preflight are the pre-migrate preflight's options (Mode is always
	// preflight.ModePreMigrate).
	Preflight gather.Options
	// Progress, when not nil, gets a line once the cluster is read and
	// once the preflight ran.
	Progress io.Writer
}

// DiscoverError says the cluster could not be read: nothing was planned.
type DiscoverError struct{ Err error }

func (e *DiscoverError) Error() string { return e.Err.Error() }
func (e *DiscoverError) Unwrap() error { return e.Err }

// PreflightError says the pre-migrate preflight could not run (it wraps
// gather's *InputError or *UnreachableError, or an unexpected error).
type PreflightError struct{ Err error }

func (e *PreflightError) Error() string { return "pre-migrate preflight: " + e.Err.Error() }
func (e *PreflightError) Unwrap() error { return e.Err }

// PlanCluster is what `migrate-from-intree plan` does, as one call: it
// reads the cluster (Discover), runs the pre-migrate preflight and builds
// the plan from both (BuildPlan). Its errors are a *DiscoverError, a
// *PreflightError, or BuildPlan's (a *RefusedError when the move would not
// be safe).
func PlanCluster(ctx context.Context, client kubernetes.Interface, o ClusterPlanOptions) (*MigrationPlan, error) {
	cluster, err := Discover(ctx, client)
	if err != nil {
		return nil, &DiscoverError{Err: err}
	}
	progress(o.Progress, "cluster: %s, %d control-plane node(s), %d Nodes, %d LoadBalancer Services\n",
		cluster.Version, len(cluster.KCM), len(cluster.Nodes), len(cluster.LoadBalancers))
	g := o.Preflight
	g.Mode = preflight.ModePreMigrate
	report, err := gather.Collect(ctx, g)
	if err != nil {
		return nil, &PreflightError{Err: err}
	}
	progress(o.Progress, "preflight (pre-migrate): %d passed, %d warnings, %d failed, %d skipped\n",
		report.Summary.Pass, report.Summary.Warn, report.Summary.Fail, report.Summary.Skip)
	po := o.Plan
	po.Preflight = &report
	return BuildPlan(cluster, po)
}

func progress(w io.Writer, format string, a ...any) {
	if w != nil {
		fmt.Fprintf(w, format, a...)
	}
}
