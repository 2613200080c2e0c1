package deploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/install/apply"
	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/internal/preflight/clusterchecks"
)

// The binary's defaults of the leader-election flags, for a workload
// rendered without them.
const (
	defaultLeaseNamespace = "kube-system"
	defaultLeaseName      = install.LeaseName
)

// nodeChecks are the post-install checks --wait polls until they pass:
// every Node has a providerID, no uninitialized taint, and the labels and
// addresses the CCM sets.
var nodeChecks = []string{clusterchecks.IDNodesProviderID, clusterchecks.IDNodesUninitialized, clusterchecks.IDNodesCloudMetadata}

// nodePollInterval is how often the Node wait runs nodeChecks: each run
// lists every Node.
const nodePollInterval = 2 * time.Second

// waitForCCM waits for the rollout, then for the CCM's Lease renewed after
// start, then for the Nodes to be initialised, and ends with preflight's
// post-install report on progress. A step not done in time, or a failed
// report, is a *WaitError.
func waitForCCM(ctx context.Context, cs kubernetes.Interface, objs []*unstructured.Unstructured, start time.Time, timeout time.Duration, progress io.Writer) error {
	fmt.Fprintln(progress, "waiting for the rollout")
	if err := apply.WaitRollout(ctx, cs, objs, timeout, progress); err != nil {
		return &WaitError{err}
	}
	if err := waitRunning(ctx, cs, objs, start, timeout, progress); err != nil {
		return &WaitError{err}
	}
	fmt.Fprintln(progress, "waiting for every Node to be initialised")
	err := apply.Poll(ctx, nodePollInterval, timeout, "Nodes", func(ctx context.Context) (string, bool, error) {
		rep, err := postInstall(ctx, cs, nodeChecks)
		if err != nil {
			return "", false, err
		}
		if rep.Success {
			return "initialised", true, nil
		}
		return failures(rep), false, nil
	}, progress)
	if err != nil {
		return &WaitError{err}
	}
	rep, err := postInstall(ctx, cs, nil)
	if err != nil {
		return err
	}
	if err := preflight.WriteText(progress, rep, false); err != nil {
		return err
	}
	if !rep.Success {
		return &WaitError{fmt.Errorf("post-install checks failed: %s", failures(rep))}
	}
	return nil
}

// waitRunning waits for the CCM to run: with leader election, for one of
// its Pods to hold its Lease (in the namespace and under the name it was
// rendered with) renewed after start; without, for its Pods to be Ready.
func waitRunning(ctx context.Context, cs kubernetes.Interface, objs []*unstructured.Unstructured, start time.Time, timeout time.Duration, progress io.Writer) error {
	w := workload(objs)
	if w == nil {
		return errors.New("the rendered objects hold no DaemonSet or Deployment")
	}
	elect, lease, err := leaderElection(w)
	if err != nil {
		return err
	}
	if !elect {
		fmt.Fprintln(progress, "waiting for the CCM's Pods to be Ready (--leader-elect=false: no Lease to wait for)")
		return apply.WaitPodsReady(ctx, cs, w, timeout, progress)
	}
	fmt.Fprintln(progress, "waiting for the CCM to lead")
	return apply.WaitLeader(ctx, cs, w, lease, start, timeout, progress)
}

// leaderElection reads the leader-election flags of the workload's CCM
// container: whether it elects a leader, and in which Lease.
func leaderElection(w *unstructured.Unstructured) (bool, apply.LeaseRef, error) {
	lease := apply.LeaseRef{Namespace: defaultLeaseNamespace, Name: defaultLeaseName}
	containers, _, err := unstructured.NestedSlice(w.Object, "spec", "template", "spec", "containers")
	if err != nil || len(containers) == 0 {
		return false, lease, fmt.Errorf("%s: no containers in the Pod template", apply.Ref(w))
	}
	var args []string
	for _, c := range containers {
		m, _ := c.(map[string]any)
		if name, _ := m["name"].(string); name != install.AppName && len(containers) > 1 {
			continue
		}
		for _, field := range []string{"command", "args"} {
			list, _, _ := unstructured.NestedStringSlice(m, field)
			args = append(args, list...)
		}
	}
	flags := nodefiles.ParseFlags(args)
	elect, err := flags.Bool("leader-elect", true)
	if err != nil {
		return false, lease, fmt.Errorf("%s: %w", apply.Ref(w), err)
	}
	if ns, ok := flags.Get("leader-elect-resource-namespace"); ok {
		lease.Namespace = ns
	}
	if name, ok := flags.Get("leader-elect-resource-name"); ok {
		lease.Name = name
	}
	return elect, lease, nil
}

// postInstall runs preflight's cluster checks in post-install mode, only
// those of ids when given (and what they require).
func postInstall(ctx context.Context, cs kubernetes.Interface, ids []string) (preflight.Report, error) {
	checks := clusterchecks.Checks(clusterchecks.Input{Client: cs, Mode: preflight.ModePostInstall})
	if len(ids) > 0 {
		checks = slices.DeleteFunc(checks, func(c preflight.Check) bool {
			return c.ID != clusterchecks.IDClusterReachable && !slices.Contains(ids, c.ID)
		})
	}
	return preflight.Run(ctx, checks, preflight.Options{Mode: preflight.ModePostInstall})
}

func failures(r preflight.Report) string {
	msg := ""
	for _, f := range r.Findings {
		if f.Status == preflight.StatusFail {
			if msg != "" {
				msg += "; "
			}
			msg += f.ID + ": " + f.Message
		}
	}
	return msg
}
