package migrate

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/awsccmctl/awsccmctl/internal/kubeletrun"
)

// providerExternal is the kubelet's --cloud-provider after the move.
const providerExternal = "external"

// maxListed bounds the nodes a gate names in its evidence: at thousands of
// nodes the count says the rest.
const maxListed = 5

// kubeletObservation is what a kubelet phase's gate judges: the reports of
// Phase written since the step started, and the nodes with none yet.
type kubeletObservation struct {
	Nodes   []string
	Phase   string
	Reports map[string]NodeReport
	Missing []string
}

// decideKubelets (kubelet-external and the restore of the kubelet): every
// node of the group reported the phase and, in that report, the kubelet
// running on it runs what its files say (external after kubelet-external),
// started after they were last edited, and answers /healthz ok. A file
// edit alone proves nothing: the kubelet reads its flags only when it
// starts. An external kubelet that registers under another name than its
// Node has already made a second Node: that stops the run.
func decideKubelets(o kubeletObservation) (gateResult, error) {
	var waits, guard []string
	switched := 0
	for _, n := range slices.Sorted(maps.Keys(o.Reports)) {
		r := o.Reports[n]
		problem, broken := kubeletProblem(r, o.Phase)
		switch {
		case broken:
			guard = append(guard, problem)
		case problem != "":
			waits = append(waits, problem)
		default:
			switched++
		}
	}
	if len(guard) > 0 {
		return gateResult{}, &GuardError{Problems: guard}
	}
	ev := []string{fmt.Sprintf("%d of %d nodes run a healthy kubelet started after its files were edited, with the flags of phase %s", switched, len(o.Nodes), o.Phase)}
	if len(o.Missing) > 0 {
		ev = append(ev, "no report yet from "+listSome(o.Missing))
	}
	ev = append(ev, firstOf(waits)...)
	return gateResult{ok: switched == len(o.Nodes) && len(o.Missing) == 0, evidence: ev}, nil
}

// kubeletProblem says what, in a node's report, keeps the gate from
// passing ("" for nothing), and whether it breaks a guard.
func kubeletProblem(r NodeReport, phase string) (string, bool) {
	k := r.Kubelet
	if k == nil {
		why := r.KubeletError
		if why == "" {
			why = "the report carries no running kubelet"
		}
		return fmt.Sprintf("%s: %s; run the node step again once the kubelet runs", r.Node, why), false
	}
	want := r.KubeletFilesCloudProvider
	if phase == PhaseKubeletExternal && want != providerExternal {
		return fmt.Sprintf("%s: the kubelet's files say --cloud-provider=%s after phase %s", r.Node, kubeletrun.ProviderName(want), phase), false
	}
	if k.CloudProvider == providerExternal && r.KubeletNodeName != "" && r.KubeletNodeName != r.Node {
		return fmt.Sprintf("the external kubelet on %s registers as Node %q, not %q: it made a new Node, and %s gets no status; give it --hostname-override=%s (the node step's --hostname-override) and restart it",
			r.Node, r.KubeletNodeName, r.Node, r.Node, r.Node), true
	}
	switch {
	case k.CloudProvider != want:
		return fmt.Sprintf("%s: the running kubelet (pid %d) runs --cloud-provider=%s while its files say %s: restart it (systemctl restart kubelet) and run the node step again, or run it without --restart-kubelet=false",
			r.Node, k.PID, kubeletrun.ProviderName(k.CloudProvider), kubeletrun.ProviderName(want)), false
	case r.KubeletFilesModified != nil && k.StartedBefore(r.KubeletFilesModified.Time):
		return fmt.Sprintf("%s: the running kubelet (pid %d) started at %s, before its files were edited at %s: it runs the old flags; restart it",
			r.Node, k.PID, k.Started.UTC().Format(time.RFC3339), r.KubeletFilesModified.UTC().Format(time.RFC3339)), false
	case !k.Healthy():
		return fmt.Sprintf("%s: the kubelet (pid %d) answers /healthz: %s", r.Node, k.PID, k.Healthz), false
	}
	return "", false
}

// runsExternal reports whether a node's report shows a healthy kubelet
// running the external provider (kubeletrun.Running of a kubelet-external
// report).
func runsExternal(r NodeReport) bool {
	problem, _ := kubeletProblem(r, PhaseKubeletExternal)
	return r.Phase == PhaseKubeletExternal && !r.InProgress && problem == ""
}

// decideKubeletsExternal (finalize): every node of the plan's node groups
// last reported a kubelet running external, as kubelet-external's gate
// saw it; a node restored or never switched since keeps the migration
// open (finalize removes the reports, and with them this evidence).
func decideKubeletsExternal(groups []NodeGroup, reports map[string]NodeReport) gateResult {
	var behind []string
	total := 0
	for _, g := range groups {
		for _, n := range g.Nodes {
			total++
			r, ok := reports[n]
			switch {
			case !ok:
				behind = append(behind, n+": no report")
			case !runsExternal(r):
				behind = append(behind, fmt.Sprintf("%s: last report %s%s", n, r.Phase, kubeletSummary(r.Kubelet)))
			}
		}
	}
	ev := []string{fmt.Sprintf("%d of %d planned kubelets run external", total-len(behind), total)}
	if len(behind) > 0 {
		return waiting(append(ev, "finalize waits while a kubelet may still run the in-tree provider: "+listSome(behind))...)
	}
	return passed(ev...)
}

// kubeletSummary is ", kubelet --cloud-provider=X" for a report's kubelet.
func kubeletSummary(k *kubeletrun.Running) string {
	if k == nil {
		return ", no running kubelet seen"
	}
	return fmt.Sprintf(", kubelet pid %d --cloud-provider=%s healthz %s", k.PID, kubeletrun.ProviderName(k.CloudProvider), k.Healthz)
}

// listSome joins up to maxListed items and says how many more there are.
func listSome(items []string) string {
	if len(items) <= maxListed {
		return strings.Join(items, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(items[:maxListed], "; "), len(items)-maxListed)
}

// firstOf returns up to maxListed items and a count of the rest.
func firstOf(items []string) []string {
	if len(items) <= maxListed {
		return items
	}
	return append(slices.Clone(items[:maxListed]), fmt.Sprintf("and %d more nodes", len(items)-maxListed))
}

// kubeletNodesBegun are the nodes of the kubelet steps begun (running,
// undoing or done): the nodes whose kubelet the run restarts, which the
// Ready guard watches.
func (e *env) kubeletNodesBegun() map[string]bool {
	out := map[string]bool{}
	for _, rec := range e.journal.Steps {
		if rec.Started == nil {
			continue
		}
		if _, s, ok := e.plan.Step(rec.Name); ok && s.Phase == PhaseKubeletExternal {
			for _, n := range s.Nodes {
				out[n] = true
			}
		}
	}
	return out
}
