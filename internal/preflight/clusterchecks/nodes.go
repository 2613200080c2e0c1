package clusterchecks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	cloudproviderapi "k8s.io/cloud-provider/api"

	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/internal/preflight/nodechecks"
	"github.com/awsccmctl/awsccmctl/pkg/providerid"
)

// UninitializedGrace is how long after joining a Node may carry the
// uninitialized taint, after install, before nodes-uninitialized fails: the
// CCM initialises a new Node within seconds, EC2 may take a little longer
// to list a new instance.
const UninitializedGrace = 2 * time.Minute

// labelHostname is the kubelet's hostname label.
const labelHostname = corev1.LabelHostname

// nodesOrSkip returns the Nodes, or the result to report when there are
// none or they cannot be read.
func (r *runner) nodesOrSkip(ctx context.Context) ([]corev1.Node, *preflight.Result) {
	nodes, err := r.snap.Nodes(ctx)
	if err != nil {
		res := preflight.Fail(readFix(err), "%v", err)
		return nil, &res
	}
	if len(nodes) == 0 {
		res := preflight.Skip("the cluster has no Nodes")
		return nil, &res
	}
	return nodes, nil
}

// addOnce appends s unless present.
func addOnce(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

func (r *runner) kubeletSkew(ctx context.Context) preflight.Result {
	nodes, res := r.nodesOrSkip(ctx)
	if res != nil {
		return *res
	}
	v, err := r.snap.serverVersion(ctx)
	if err != nil {
		return preflight.Fail(readFix(err), "%v", err)
	}
	var offenders, fixes []string
	count := map[string]int{}
	for i := range nodes {
		n := &nodes[i]
		kv := n.Status.NodeInfo.KubeletVersion
		if kv == "" {
			// No status posted yet: nothing to compare, not a violation.
			count["no reported version"]++
			continue
		}
		count[kv]++
		if res := nodechecks.KubeletSkew(kv, v.GitVersion); res.Status == preflight.StatusFail {
			offenders = append(offenders, fmt.Sprintf("%s (kubelet %s)", n.Name, kv))
			fixes = addOnce(fixes, res.Remediation)
		}
	}
	if len(offenders) == 0 {
		versions := make([]string, 0, len(count))
		for kv, c := range count {
			versions = append(versions, fmt.Sprintf("%s on %s", kv, plural(c, "Node")))
		}
		sort.Strings(versions)
		return preflight.Pass("every kubelet is within the skew policy against kube-apiserver %s: %s", v.GitVersion, strings.Join(versions, ", "))
	}
	sort.Strings(offenders)
	return preflight.Fail(strings.Join(fixes, "; "),
		"kubelet outside the version skew policy against kube-apiserver %s (none newer, at most 3 minors older) on %d of %s: %s",
		v.GitVersion, len(offenders), plural(len(nodes), "Node"), listNames(offenders))
}

// providerIDProblem says what is wrong with a Node's providerID, "" if
// nothing (providerid.ParseCanonicalOrZoneless: canonical, or without the
// zone).
func providerIDProblem(pid string) string {
	if pid == "" {
		return "no providerID"
	}
	_, err := providerid.ParseCanonicalOrZoneless(pid)
	switch {
	case errors.Is(err, providerid.ErrNotCanonical):
		return pid + " is not aws:///<zone>/<instance-id>"
	case err != nil:
		return fmt.Sprintf("%s: %v", pid, err)
	}
	return ""
}

func (r *runner) providerID(ctx context.Context) preflight.Result {
	nodes, res := r.nodesOrSkip(ctx)
	if res != nil {
		return *res
	}
	var offenders, fixes []string
	for i := range nodes {
		n := &nodes[i]
		p := providerIDProblem(n.Spec.ProviderID)
		if p == "" {
			continue
		}
		offenders = append(offenders, fmt.Sprintf("%s (%s)", n.Name, p))
		if n.Spec.ProviderID == "" {
			fixes = addOnce(fixes, "give each kubelet --provider-id=aws:///$ZONE/$INSTANCE_ID (or providerID in its KubeletConfiguration; the bootstrap script reads both from IMDS) before it registers; "+
				"for Nodes already registered without one the CCM finds the instance only when the Node name is its private DNS name or instance ID")
		} else {
			fixes = addOnce(fixes, "spec.providerID cannot change once set: fix the kubelet's --provider-id (or providerID in its KubeletConfiguration), then `kubectl delete node <name>` and restart that kubelet so it registers again")
		}
	}
	if len(offenders) == 0 {
		return preflight.Pass("an aws:///<zone>/<instance-id> providerID on every Node (%s)", plural(len(nodes), "Node"))
	}
	sort.Strings(offenders)
	return preflight.Fail(strings.Join(fixes, "; "), "no AWS providerID the CCM can use on %d of %s: %s",
		len(offenders), plural(len(nodes), "Node"), listNames(offenders))
}

func (r *runner) uninitialized(ctx context.Context) preflight.Result {
	nodes, res := r.nodesOrSkip(ctx)
	if res != nil {
		return *res
	}
	now := r.in.Now()
	type waiting struct {
		name  string
		since time.Time
	}
	var ws []waiting
	for i := range nodes {
		n := &nodes[i]
		for _, t := range n.Spec.Taints {
			if t.Key != cloudproviderapi.TaintExternalCloudProvider {
				continue
			}
			since := n.CreationTimestamp.Time
			if t.TimeAdded != nil && !t.TimeAdded.IsZero() {
				since = t.TimeAdded.Time
			}
			ws = append(ws, waiting{n.Name, since})
			break
		}
	}
	if len(ws) == 0 {
		return preflight.Pass("no Node carries %s (%s)", cloudproviderapi.TaintExternalCloudProvider, plural(len(nodes), "Node"))
	}
	sort.Slice(ws, func(i, j int) bool {
		if !ws[i].since.Equal(ws[j].since) {
			return ws[i].since.Before(ws[j].since)
		}
		return ws[i].name < ws[j].name
	})
	// After install, a Node that has only just joined is being initialised,
	// not stuck: the CCM needs a sync (and EC2 a moment to list a new
	// instance). Before install every tainted Node waits for a CCM that
	// does not exist yet, so all count.
	joining := 0
	if r.in.Mode == preflight.ModePostInstall {
		stuck := ws[:0]
		for _, w := range ws {
			if now.Sub(w.since) < UninitializedGrace {
				joining++
				continue
			}
			stuck = append(stuck, w)
		}
		ws = stuck
	}
	joiningNote := ""
	if joining > 0 {
		joiningNote = fmt.Sprintf("; %s joined in the last %s and %s being initialised", plural(joining, "Node"), duration.HumanDuration(UninitializedGrace), map[bool]string{true: "is", false: "are"}[joining == 1])
	}
	if len(ws) == 0 {
		return preflight.Pass("no Node has waited longer than %s for the CCM (%s)%s", duration.HumanDuration(UninitializedGrace), plural(len(nodes), "Node"), joiningNote)
	}
	names := make([]string, len(ws))
	for i, w := range ws {
		names[i] = fmt.Sprintf("%s (for %s)", w.name, duration.HumanDuration(now.Sub(w.since)))
	}
	var fix string
	switch r.in.Mode {
	case preflight.ModePostInstall:
		fix = "the CCM has not initialised them: check that it runs (conflicts-ccm-lease) and read its log for these Node names; it must find each instance by providerID or private DNS name and be allowed ec2:DescribeInstances"
	default:
		fix = "these kubelets already run with --cloud-provider=external and wait for a cloud-controller-manager; Pods without a toleration do not schedule there until `awsccmctl install` (or migrate-from-intree) runs one"
	}
	return preflight.Fail(fix, "%s still on %d of %s, oldest first: %s%s",
		cloudproviderapi.TaintExternalCloudProvider, len(ws), plural(len(nodes), "Node"), listNames(names), joiningNote)
}

func (r *runner) hostnameLabel(ctx context.Context) preflight.Result {
	nodes, res := r.nodesOrSkip(ctx)
	if res != nil {
		return *res
	}
	var offenders []string
	for i := range nodes {
		n := &nodes[i]
		if h, ok := n.Labels[labelHostname]; ok && h != n.Name {
			offenders = append(offenders, fmt.Sprintf("%s (hostname %s)", n.Name, h))
		}
	}
	if len(offenders) == 0 {
		return preflight.Pass("every Node's %s label equals its name (%s)", labelHostname, plural(len(nodes), "Node"))
	}
	sort.Strings(offenders)
	return preflight.Fail("pin --hostname-override=<Node name> on these kubelets before switching them to --cloud-provider=external (kubeadm: KUBELET_KUBEADM_ARGS in /var/lib/kubelet/kubeadm-flags.env; kops: spec.kubelet.hostnameOverride: '@aws')",
		"%s label differs from the Node name on %d of %s: %s; an external kubelet without --hostname-override names itself after its hostname, so it would register a new Node that its client certificate (CN system:node:<name>) does not allow and the CCM cannot match",
		labelHostname, len(offenders), plural(len(nodes), "Node"), listNames(offenders))
}

// cloudLabels are the labels the CCM sets on every Node it initialises.
var cloudLabels = []string{corev1.LabelTopologyZone, corev1.LabelTopologyRegion, corev1.LabelInstanceTypeStable}

// cloudMetadata checks what the CCM writes when it initialises a Node: the
// zone, region and instance-type labels and an InternalIP address. Nodes
// still waiting for the CCM are nodes-uninitialized's finding.
func (r *runner) cloudMetadata(ctx context.Context) preflight.Result {
	nodes, res := r.nodesOrSkip(ctx)
	if res != nil {
		return *res
	}
	var offenders []string
	checked := 0
	for i := range nodes {
		n := &nodes[i]
		if n.Spec.ProviderID == "" || slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool {
			return t.Key == cloudproviderapi.TaintExternalCloudProvider
		}) {
			continue
		}
		checked++
		var missing []string
		for _, l := range cloudLabels {
			if n.Labels[l] == "" {
				missing = append(missing, l)
			}
		}
		if !slices.ContainsFunc(n.Status.Addresses, func(a corev1.NodeAddress) bool { return a.Type == corev1.NodeInternalIP }) {
			missing = append(missing, "an InternalIP address")
		}
		if len(missing) > 0 {
			offenders = append(offenders, fmt.Sprintf("%s (no %s)", n.Name, strings.Join(missing, ", ")))
		}
	}
	if checked == 0 {
		return preflight.Skip("no initialised Node (with a providerID and without the uninitialized taint) to look at")
	}
	if len(offenders) == 0 {
		return preflight.Pass("every initialised Node has its zone, region and instance-type labels and an InternalIP (%s)", plural(checked, "Node"))
	}
	sort.Strings(offenders)
	return preflight.Fail("the CCM sets these when it initialises a Node and refreshes addresses every --node-status-update-frequency; read its log for these Nodes (it must find their instances with ec2:DescribeInstances), and check that no other controller removes the labels",
		"%d of %d initialised Nodes lack what the CCM sets: %s", len(offenders), checked, listNames(offenders))
}
