package deploy

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/install/apply"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/internal/preflight/clusterchecks"
)

// leaseNamespace is where the CCM's leader-election Lease lives (the
// binary's --leader-elect-resource-namespace default).
const leaseNamespace = "kube-system"

// nodeChecks are the post-install checks --wait polls until they pass:
// every Node has a providerID, no uninitialized taint, and the labels and
// addresses the CCM sets.
var nodeChecks = []string{clusterchecks.IDNodesProviderID, clusterchecks.IDNodesUninitialized, clusterchecks.IDNodesCloudMetadata}

// waitForCCM waits for the rollout, then for the CCM's Lease renewed after
// start, then for the Nodes to be initialised, and ends with preflight's
// post-install report on progress. A step not done in time, or a failed
// report, is a *WaitError.
func waitForCCM(ctx context.Context, cs kubernetes.Interface, objs []*unstructured.Unstructured, start time.Time, timeout time.Duration, progress io.Writer) error {
	fmt.Fprintln(progress, "waiting for the rollout")
	if err := apply.WaitRollout(ctx, cs, objs, timeout, progress); err != nil {
		return &WaitError{err}
	}
	fmt.Fprintln(progress, "waiting for the CCM to lead")
	if err := apply.WaitLease(ctx, cs, leaseNamespace, install.LeaseName, start, timeout, progress); err != nil {
		return &WaitError{err}
	}
	fmt.Fprintln(progress, "waiting for every Node to be initialised")
	var last string
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		rep, err := postInstall(ctx, cs, nodeChecks)
		if err != nil {
			return false, err
		}
		if msg := failures(rep); msg != last && msg != "" {
			fmt.Fprintln(progress, msg)
			last = msg
		}
		return rep.Success, nil
	})
	if err != nil {
		return &WaitError{fmt.Errorf("Nodes not initialised after %s: %s", timeout, last)}
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
