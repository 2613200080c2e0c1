package migrate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// guardedLabels are the Node labels the in-tree provider, the kubelet and
// the CCM set from the cloud and the host: the move must leave each value
// as it was (a scheduler constraint or a topology-aware route reads them).
var guardedLabels = []string{
	corev1.LabelTopologyZone, corev1.LabelTopologyRegion, corev1.LabelInstanceTypeStable,
	corev1.LabelFailureDomainBetaZone, corev1.LabelFailureDomainBetaRegion, corev1.LabelInstanceType,
	corev1.LabelHostname,
}

// nodeFields is the readable form of what the node-fields guard compares:
// the addresses as a set, the first address of each type (clients take a
// Node's first InternalIP as its IP), and guardedLabels. The order of
// addresses of different types is left out: a kubelet and the CCM list
// Hostname and InternalDNS in another order, which no client reads.
func nodeFields(n *corev1.Node) string {
	var set []string
	first := map[corev1.NodeAddressType]string{}
	for _, a := range n.Status.Addresses {
		set = append(set, string(a.Type)+"="+a.Address)
		if _, ok := first[a.Type]; !ok {
			first[a.Type] = a.Address
		}
	}
	slices.Sort(set)
	var b strings.Builder
	fmt.Fprintf(&b, "addresses [%s]", strings.Join(set, " "))
	var firsts []string
	for _, t := range slices.Sorted(maps.Keys(first)) {
		firsts = append(firsts, string(t)+"="+first[t])
	}
	fmt.Fprintf(&b, ", first of each type [%s], labels [", strings.Join(firsts, " "))
	for i, k := range guardedLabels {
		if i > 0 {
			b.WriteByte(' ')
		}
		v, ok := n.Labels[k]
		if !ok {
			v = "(absent)"
		}
		b.WriteString(k + "=" + v)
	}
	b.WriteByte(']')
	return b.String()
}

// nodeFieldsDigest is the baseline's form of nodeFields: 96 bits of its
// SHA-256, enough to tell any change.
func nodeFieldsDigest(n *corev1.Node) string {
	sum := sha256.Sum256([]byte(nodeFields(n)))
	return hex.EncodeToString(sum[:12])
}

// notReadyBound is how long a Node whose kubelet the run restarts may be
// not Ready before the Ready guard stops the run. A kubelet restart takes
// seconds (the v1.26 kubelet answers /healthz 0.4 s after exec and posts
// its status within a second), and the node lifecycle controller marks a
// silent kubelet Unknown only after its 40 s grace period: 90 s not Ready
// means the kubelet did not come back.
const notReadyBound = 90 * time.Second

// notReadyFor returns how long n has been not Ready at now (its Ready
// condition's last transition), and why; 0 when it is Ready.
func notReadyFor(n *corev1.Node, now time.Time) (time.Duration, string) {
	for _, c := range n.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		if c.Status == corev1.ConditionTrue {
			return 0, ""
		}
		return now.Sub(c.LastTransitionTime.Time), fmt.Sprintf("Ready=%s (%s: %s)", c.Status, c.Reason, c.Message)
	}
	return 0, ""
}

// isReady reports whether n's Ready condition is True (a Node without one
// has not posted its status yet).
func isReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
