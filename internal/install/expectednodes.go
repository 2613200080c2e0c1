package install

import (
	"math"

	"github.com/awsccmctl/awsccmctl/internal/install/sizing"
)

// SizedFor returns the Node count the CCM's sizing flags are computed for:
// ExpectedNodes, or DefaultExpectedNodes when it is unset.
func (v *Values) SizedFor() int {
	if v.ExpectedNodes != nil {
		return *v.ExpectedNodes
	}
	return DefaultExpectedNodes
}

// Sizing returns the sizing flags computed for SizedFor; args renders those
// that ExtraArgs does not set.
func (v *Values) Sizing() sizing.Flags { return sizing.ForNodes(v.SizedFor()) }

// sizingArgs returns the sizing flags as arguments, leaving out each one
// ExtraArgs sets: the user's value wins over the computed one.
func (v *Values) sizingArgs() []string {
	vals := v.Sizing().Values()
	var a []string
	for _, name := range sizing.FlagNames() {
		if _, user := v.ExtraArgs[name]; !user {
			a = append(a, "--"+name+"="+vals[name])
		}
	}
	return a
}

// ExpectedNodesForCount is the size install apply sizes the CCM for when it
// counts counted Nodes in the cluster: the count rounded up to the next 1, 2
// or 5 times a power of ten, and at least DefaultExpectedNodes.
//
// The Nodes there now are the least the cluster will have, not what it is
// expected to have: right after kubeadm init there is one, and the Nodes that
// join next are the burst the CCM is sized for; hence the floor. Rounding up
// leaves room to grow, and keeps the flags (and so the CCM's Pods) unchanged
// while the cluster grows or shrinks by a few Nodes between two applies.
func ExpectedNodesForCount(counted int) int {
	return max(roundUp125(counted), DefaultExpectedNodes)
}

// roundUp125 rounds n up to the next of 1, 2, 5, 10, 20, 50, ...; n itself
// when no such number fits in an int.
func roundUp125(n int) int {
	for base := 1; base <= math.MaxInt/10; base *= 10 {
		for _, m := range []int{1, 2, 5} {
			if m*base >= n {
				return m * base
			}
		}
	}
	return n
}
