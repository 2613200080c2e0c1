package clusterchecks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/internal/preflight"
)

// How the live kubelet configuration is read: through the apiserver's
// nodes/proxy to each kubelet's /configz, a few at a time, each bounded.
// When none of the first configzProbe kubelets answers, the rest are not
// tried: the kubelets are not reachable from the apiserver (firewalls,
// Konnectivity), and 1,000 timeouts would only make preflight slow.
const (
	configzConcurrency = 16
	configzTimeout     = 5 * time.Second
	configzProbe       = 16
)

// configz is the part of the kubelet's /configz answer the check reads: the
// kubelet serves its KubeletConfiguration (v1beta1 field names) under
// "kubeletconfig".
type configz struct {
	KubeletConfig *struct {
		ProviderID string `json:"providerID"`
	} `json:"kubeletconfig"`
}

// kubeletConfig reads every kubelet's live configuration and compares the
// providerID it registers with against its Node: the kubelet sets
// spec.providerID only when it registers the Node, so a providerID added to
// the kubelet later never reaches an existing Node, and a malformed one
// makes the CCM unable to find the instance.
func (r *runner) kubeletConfig(ctx context.Context) preflight.Result {
	nodes, res := r.nodesOrSkip(ctx)
	if res != nil {
		return *res
	}
	allowed, err := r.canProxyToNodes(ctx)
	if err != nil {
		return preflight.Fail(readFix(err), "%v", err)
	}
	if !allowed {
		return preflight.Skip("RBAC does not let this identity get nodes/proxy, so the kubelets' live configuration (/configz) was not read; run `awsccmctl preflight --node` on the nodes, or grant get on nodes/proxy")
	}
	answers := r.readConfigz(ctx, nodes)

	var unreadable, malformed, differ, unset []string
	read := 0
	var firstErr error
	for i := range nodes {
		n, a := &nodes[i], answers[i]
		switch {
		case a.skipped:
			continue
		case a.err != nil:
			unreadable = append(unreadable, n.Name)
			if firstErr == nil {
				firstErr = a.err
			}
			continue
		}
		read++
		want := a.providerID
		switch {
		case want == "":
			// The kubelet does not pin a providerID; the CCM sets it.
		case want == n.Spec.ProviderID:
			// Agreed; whether the CCM can use it is nodes-provider-id's
			// finding.
		case providerIDProblem(want) != "":
			malformed = append(malformed, fmt.Sprintf("%s (%s)", n.Name, providerIDProblem(want)))
		case n.Spec.ProviderID == "":
			unset = append(unset, fmt.Sprintf("%s (kubelet has %s)", n.Name, want))
		case n.Spec.ProviderID != want:
			differ = append(differ, fmt.Sprintf("%s (Node %s, kubelet %s)", n.Name, n.Spec.ProviderID, want))
		}
	}
	for _, l := range [][]string{unreadable, malformed, differ, unset} {
		sort.Strings(l)
	}

	if read == 0 {
		return preflight.Warn("make the kubelets reachable from the API server on their port (security groups, or the Konnectivity agent), or run `awsccmctl preflight --node` on the nodes",
			"no kubelet's /configz could be read through the API server (tried %s of %s): %v",
			plural(len(nodes)-skippedCount(answers), "Node"), plural(len(nodes), "Node"), firstErr)
	}
	var problems []string
	if len(malformed) > 0 {
		problems = append(problems, fmt.Sprintf("providerID not of the form aws:///<zone>/<instance-id> on %s: %s", plural(len(malformed), "kubelet"), listNames(malformed)))
	}
	if len(differ) > 0 {
		problems = append(problems, fmt.Sprintf("kubelet's providerID differs from the Node's on %s: %s", plural(len(differ), "Node"), listNames(differ)))
	}
	if len(unset) > 0 {
		problems = append(problems, fmt.Sprintf("kubelet has a providerID its Node lacks (it is set only when the Node registers) on %s: %s", plural(len(unset), "Node"), listNames(unset)))
	}
	unreadableNote := ""
	if len(unreadable) > 0 {
		unreadableNote = fmt.Sprintf("; /configz unreadable on %s: %s (%v)", plural(len(unreadable), "Node"), listNames(unreadable), firstErr)
	}
	if len(problems) == 0 {
		if len(unreadable) > 0 {
			return preflight.Warn("make these kubelets reachable from the API server, or run `awsccmctl preflight --node` on them",
				"read the live configuration of %s; the providerIDs agree with the Nodes%s", plural(read, "kubelet"), unreadableNote)
		}
		return preflight.Pass("read the live configuration of %s; the providerIDs agree with the Nodes", plural(read, "kubelet"))
	}
	return preflight.Warn("set the kubelet's providerID (KubeletConfiguration providerID or --provider-id) to aws:///<zone>/<instance-id>, exactly the Node's spec.providerID; a Node whose providerID must change has to be deleted and re-registered (`kubectl drain`, `kubectl delete node`, restart the kubelet)",
		"%s%s", strings.Join(problems, "; "), unreadableNote)
}

// canProxyToNodes asks the apiserver whether this identity may get
// nodes/proxy, which is what reading /configz needs.
func (r *runner) canProxyToNodes(ctx context.Context) (bool, error) {
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Resource: "nodes", Subresource: "proxy"},
	}}
	got, err := r.in.Client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("ask whether nodes/proxy is allowed (SelfSubjectAccessReview): %w", err)
	}
	return got.Status.Allowed, nil
}

// configzAnswer is one kubelet's answer, or why there is none.
type configzAnswer struct {
	providerID string
	err        error
	skipped    bool // not tried: the first kubelets did not answer
}

func skippedCount(answers []configzAnswer) int {
	n := 0
	for _, a := range answers {
		if a.skipped {
			n++
		}
	}
	return n
}

// readConfigz reads /configz of every Node, answers[i] for nodes[i].
func (r *runner) readConfigz(ctx context.Context, nodes []corev1.Node) []configzAnswer {
	answers := make([]configzAnswer, len(nodes))
	probe := min(configzProbe, len(nodes))
	r.configzRange(ctx, nodes[:probe], answers[:probe])
	for _, a := range answers[:probe] {
		if a.err == nil {
			r.configzRange(ctx, nodes[probe:], answers[probe:])
			return answers
		}
	}
	for i := probe; i < len(nodes); i++ {
		answers[i].skipped = true
	}
	return answers
}

// configzRange reads the nodes' /configz concurrently into answers.
func (r *runner) configzRange(ctx context.Context, nodes []corev1.Node, answers []configzAnswer) {
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(configzConcurrency, len(nodes)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				answers[i] = r.getConfigz(ctx, nodes[i].Name)
			}
		}()
	}
	for i := range nodes {
		work <- i
	}
	close(work)
	wg.Wait()
}

func (r *runner) getConfigz(ctx context.Context, node string) configzAnswer {
	ctx, cancel := context.WithTimeout(ctx, configzTimeout)
	defer cancel()
	raw, err := r.in.Client.CoreV1().RESTClient().Get().
		Resource("nodes").Name(node).SubResource("proxy").Suffix("configz").
		// The kubelet answers JSON; the API server's own errors, which
		// statusMessage reads, are JSON only when asked for JSON, and a
		// client configured for protobuf would ask for that.
		SetHeader("Accept", "application/json").
		DoRaw(ctx)
	if err != nil {
		return configzAnswer{err: fmt.Errorf("get /api/v1/nodes/%s/proxy/configz: %w", node, statusMessage(err, raw))}
	}
	var c configz
	if err := json.Unmarshal(raw, &c); err != nil {
		return configzAnswer{err: fmt.Errorf("node %s /configz: %w", node, err)}
	}
	if c.KubeletConfig == nil {
		return configzAnswer{err: fmt.Errorf("node %s /configz has no kubeletconfig", node)}
	}
	return configzAnswer{providerID: c.KubeletConfig.ProviderID}
}

// statusMessage prefers the apiserver's own words ("error trying to reach
// service: dial tcp ...") over client-go's generic text for proxy errors.
func statusMessage(err error, raw []byte) error {
	var st metav1.Status
	if json.Unmarshal(raw, &st) == nil && st.Message != "" {
		return errors.New(st.Message)
	}
	return err
}
