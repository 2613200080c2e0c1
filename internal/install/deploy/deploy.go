package deploy

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/install/apply"
)

// DefaultWaitTimeout bounds each step of the wait.
const DefaultWaitTimeout = 5 * time.Minute

// Clients are the cluster clients of Apply and Uninstall.
type Clients struct {
	// Apply applies, diffs and deletes the objects.
	Apply *apply.Client
	// Kube reads what the wait watches.
	Kube kubernetes.Interface
}

// NewClients builds the clients for cfg.
func NewClients(cfg *rest.Config) (Clients, error) {
	a, err := apply.NewClient(cfg)
	if err != nil {
		return Clients{}, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return Clients{}, err
	}
	return Clients{Apply: a, Kube: cs}, nil
}

// RenderError says install values did not render: a problem of the values.
type RenderError struct{ Err error }

func (e *RenderError) Error() string { return e.Err.Error() }
func (e *RenderError) Unwrap() error { return e.Err }

// Objects renders v (install.Render) into the objects Apply and Uninstall
// take. v is expected valid (install.Values.Validate); a failed rendering
// is a *RenderError.
func Objects(v install.Values) ([]*unstructured.Unstructured, error) {
	stream, err := install.Render(v)
	if err != nil {
		return nil, &RenderError{err}
	}
	objs, err := apply.Decode(stream)
	if err != nil {
		return nil, fmt.Errorf("decode the rendered manifests: %w", err)
	}
	return objs, nil
}

// Report is what Apply or Uninstall did: the -o json result of both.
type Report struct {
	DryRun  string         `json:"dryRun,omitempty"`
	Objects []apply.Result `json:"objects"`
	// Differences, set when a diff was asked for, says whether the live
	// objects differ from what the apply makes of them.
	Differences *bool `json:"differences,omitempty"`
}

// Summary counts the objects by action, in the order the actions first
// happened: "2 created, 4 unchanged (dry run: server)".
func (r Report) Summary() string {
	counts := map[string]int{}
	var order []string
	for _, res := range r.Objects {
		if counts[res.Action] == 0 {
			order = append(order, res.Action)
		}
		counts[res.Action]++
	}
	parts := make([]string, len(order))
	for i, a := range order {
		parts[i] = fmt.Sprintf("%d %s", counts[a], a)
	}
	summary := strings.Join(parts, ", ")
	if r.DryRun != "" {
		summary += " (dry run: " + r.DryRun + ")"
	}
	return summary
}

// ApplyOptions say how to apply.
type ApplyOptions struct {
	// DryRun is apply.DryRunNone, apply.DryRunClient or apply.DryRunServer.
	DryRun string
	// Force takes over fields another field manager owns.
	Force bool
	// Diff writes a unified diff of the live objects against what the
	// apply makes of them to Out, before applying.
	Diff bool
	Out  io.Writer
	// Wait waits, after applying (not in a dry run), for the CCM to take
	// over: each step at most Timeout (0: DefaultWaitTimeout).
	Wait    bool
	Timeout time.Duration
	// Progress receives a line per object and the wait's progress; nil
	// discards them.
	Progress io.Writer
	// Applied, when set, receives the report once the objects are applied,
	// before the wait; its error ends Apply.
	Applied func(Report) error
}

// WaitError says the CCM did not take over in time, or the post-install
// checks failed: the objects were applied.
type WaitError struct{ Err error }

func (e *WaitError) Error() string { return e.Err.Error() }
func (e *WaitError) Unwrap() error { return e.Err }

// Apply applies objs with server-side apply and, with o.Wait, waits for the
// CCM to take over (a *WaitError when it does not).
func Apply(ctx context.Context, c Clients, objs []*unstructured.Unstructured, o ApplyOptions) (Report, error) {
	progress := o.Progress
	if progress == nil {
		progress = io.Discard
	}
	start := time.Now()
	// Refusals first: a mismatched install, or one of kinds the cluster
	// does not serve, changes nothing, not even the diff's server dry run.
	if err := checkServed(c, objs); err != nil {
		return Report{}, err
	}
	inv, err := planInventory(ctx, c, objs)
	if err != nil {
		return Report{}, err
	}
	// What is applied (and diffed): adopted objects without the managed-by
	// label, which says "created by awsccmctl".
	objs = inv.Objects(objs)
	var differences *bool
	if o.Diff {
		d, err := c.Apply.Diff(ctx, objs)
		if err != nil {
			return Report{}, err
		}
		differences = ptr.To(d != "")
		if d == "" {
			d = "no differences\n"
		}
		if o.Out != nil {
			fmt.Fprint(o.Out, d)
		}
	}
	if err := c.Apply.WriteInventory(ctx, inv, o.DryRun); err != nil {
		return Report{}, err
	}
	fmt.Fprintf(progress, "applying %d objects (server-side apply, field manager %s; inventory ConfigMap %s/%s)\n", len(objs), apply.FieldManager, inv.Namespace, apply.InventoryName)
	results, err := c.Apply.Apply(ctx, objs, apply.Options{DryRun: o.DryRun, Force: o.Force, Progress: progress})
	if err != nil {
		return Report{}, err
	}
	r := Report{DryRun: o.DryRun, Objects: results, Differences: differences}
	if o.Applied != nil {
		if err := o.Applied(r); err != nil {
			return r, err
		}
	}
	if !o.Wait {
		return r, nil
	}
	if o.DryRun != apply.DryRunNone {
		fmt.Fprintln(progress, "--wait: nothing to wait for in a dry run")
		return r, nil
	}
	timeout := o.Timeout
	if timeout == 0 {
		timeout = DefaultWaitTimeout
	}
	return r, waitForCCM(ctx, c.Kube, objs, start, timeout, progress)
}

// Uninstall removes the install objs were rendered from: it deletes, in
// reverse order, the objects its inventory records as created by it (also
// those of earlier applies that objs no longer hold), leaves those that
// existed before it, then deletes the inventory. When objs do not match
// the recorded install (another namespace or workload) it is a
// *MismatchError and nothing is deleted. Adopted objects are kept, with the
// fields only the install owned removed. dryRun is as in ApplyOptions.
func Uninstall(ctx context.Context, c Clients, objs []*unstructured.Unstructured, dryRun string, progress io.Writer) (Report, error) {
	if progress == nil {
		progress = io.Discard
	}
	inv, err := recordedInventory(ctx, c, objs)
	if err != nil {
		return Report{}, err
	}
	fmt.Fprintf(progress, "removing the install recorded in ConfigMap %s/%s (%d objects)\n", inv.Namespace, apply.InventoryName, len(inv.Members))
	results, err := c.Apply.UninstallInventory(ctx, inv, apply.Options{DryRun: dryRun, Progress: progress})
	if err != nil {
		return Report{}, err
	}
	return Report{DryRun: dryRun, Objects: results}, nil
}
