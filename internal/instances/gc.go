package instances

import (
	"math"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// refreshGCPercent is the garbage collector's target while the view lists
// the cluster's instances.
//
// Why: a list decodes pages of 1,000 instances. The SDK holds a whole page
// in its own types (several KiB an instance) while encoding/xml allocates
// about 16 MiB of short-lived tokens per page, so the live heap jumps by
// the page and, with Go's default GOGC=100, the heap goal by twice that;
// the CCM's peak RSS is set at such moments (with 1,000 Nodes joining over
// 149 s, the heap goal went from 19-21 MiB between lists to 25-30 MiB at
// each list, GODEBUG=gctrace=1). A lower target for the few hundred
// milliseconds of a list keeps the goal near the live heap and costs a few
// short collections; the rest of the time the runtime's own setting (GOGC)
// applies. docs/design.md (Memory) has the measurements.
const refreshGCPercent = 25

// gcHold lowers the GC target while at least one list runs.
var gcHold struct {
	mu   sync.Mutex
	n    int
	prev int
}

// gcPercent reads the runtime's GC target without changing it (negative:
// the collector is off, or the target cannot be read: either way a hold
// leaves it alone).
func gcPercent() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return -1 // unknown (the metric exists since Go 1.21): not guessed
	}
	v := s[0].Value.Uint64()
	if v > math.MaxInt32 { // GOGC=off: the runtime's -1, as an unsigned value
		return -1
	}
	return int(v)
}

// holdLowGC lowers the GC target to refreshGCPercent until the returned
// func is called; holds nest and overlap. A target already as low, or the
// collector off (GOGC=off), is the operator's choice and stands.
func holdLowGC() (release func()) {
	gcHold.mu.Lock()
	defer gcHold.mu.Unlock()
	if gcHold.n == 0 {
		gcHold.prev = gcPercent()
	}
	gcHold.n++
	if gcHold.n == 1 && gcHold.prev > refreshGCPercent {
		debug.SetGCPercent(refreshGCPercent)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			gcHold.mu.Lock()
			defer gcHold.mu.Unlock()
			gcHold.n--
			if gcHold.n == 0 && gcHold.prev > refreshGCPercent {
				debug.SetGCPercent(gcHold.prev)
			}
		})
	}
}
