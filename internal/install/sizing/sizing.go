package sizing

import "strconv"

// Names of the flags ForNodes sizes, without dashes (as install's extraArgs
// take them).
const (
	FlagConcurrentNodeSyncs          = "concurrent-node-syncs"
	FlagConcurrentNodeLifecycleSyncs = "concurrent-node-lifecycle-syncs"
	FlagKubeAPIQPS                   = "kube-api-qps"
	FlagKubeAPIBurst                 = "kube-api-burst"
)

// The model behind ForNodes (the package documentation derives it).
const (
	// RequestsPerNode is what the cloud-node controller sends to initialize
	// one Node: the Node's update, its status patch and its Synced Event.
	RequestsPerNode = 3
	// JoinSeconds is the time within which the client-side limit lets N
	// Nodes registered at once be initialized.
	JoinSeconds = 4
	// BurstSeconds is the burst, in seconds of the QPS.
	BurstSeconds = 2
	// RequestsPerWorker is the share of the QPS one node worker serves.
	RequestsPerWorker = 10
	// NodesPerLifecycleWorker is the Nodes per lifecycle worker.
	NodesPerLifecycleWorker = 1000
)

// Floors: k8s.io/cloud-provider's defaults for these flags.
const (
	DefaultQPS              = 20
	DefaultBurst            = 30
	DefaultWorkers          = 1
	DefaultLifecycleWorkers = 1
)

// Caps that protect the API server (the package documentation says why).
const (
	MaxQPS              = 1000
	MaxBurst            = 2000
	MaxWorkers          = 50
	MaxLifecycleWorkers = 5
)

// Flags are the CCM's flags sized for a cluster of Nodes.
type Flags struct {
	// Nodes is the cluster size the flags are sized for (at least 1).
	Nodes int
	// ConcurrentNodeSyncs is --concurrent-node-syncs: the cloud-node
	// controller's workers (--concurrent-node-status-updates, left unset,
	// follows it).
	ConcurrentNodeSyncs int
	// ConcurrentNodeLifecycleSyncs is --concurrent-node-lifecycle-syncs.
	ConcurrentNodeLifecycleSyncs int
	// KubeAPIQPS and KubeAPIBurst are --kube-api-qps and --kube-api-burst:
	// each controller's client-side token bucket.
	KubeAPIQPS   int
	KubeAPIBurst int
}

// ForNodes sizes the flags for a cluster of n Nodes, all of which may join
// at once; n below 1 counts as 1. The result never decreases as n grows.
func ForNodes(n int) Flags {
	n = max(n, 1)
	// Past this size every value is at its cap; clamping first keeps the
	// arithmetic from overflowing.
	const capped = MaxLifecycleWorkers * NodesPerLifecycleWorker
	m := min(n, capped)
	qps := clamp(ceilDiv(RequestsPerNode*m, BurstSeconds+JoinSeconds), DefaultQPS, MaxQPS)
	return Flags{
		Nodes:                        n,
		ConcurrentNodeSyncs:          clamp(ceilDiv(qps, RequestsPerWorker), DefaultWorkers, MaxWorkers),
		ConcurrentNodeLifecycleSyncs: clamp(ceilDiv(m, NodesPerLifecycleWorker), DefaultLifecycleWorkers, MaxLifecycleWorkers),
		KubeAPIQPS:                   qps,
		KubeAPIBurst:                 clamp(BurstSeconds*qps, DefaultBurst, MaxBurst),
	}
}

// Values returns the flags by name without dashes.
func (f Flags) Values() map[string]string {
	return map[string]string{
		FlagConcurrentNodeSyncs:          strconv.Itoa(f.ConcurrentNodeSyncs),
		FlagConcurrentNodeLifecycleSyncs: strconv.Itoa(f.ConcurrentNodeLifecycleSyncs),
		FlagKubeAPIQPS:                   strconv.Itoa(f.KubeAPIQPS),
		FlagKubeAPIBurst:                 strconv.Itoa(f.KubeAPIBurst),
	}
}

// Args returns the flags as command-line arguments, in FlagNames order:
// --concurrent-node-syncs=50 and so on.
func (f Flags) Args() []string {
	vals := f.Values()
	args := make([]string, 0, len(vals))
	for _, name := range FlagNames() {
		args = append(args, "--"+name+"="+vals[name])
	}
	return args
}

// FlagNames lists the flags ForNodes sizes, in the order Args renders them.
func FlagNames() []string {
	return []string{FlagConcurrentNodeSyncs, FlagConcurrentNodeLifecycleSyncs, FlagKubeAPIQPS, FlagKubeAPIBurst}
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func clamp(v, lo, hi int) int { return min(max(v, lo), hi) }
