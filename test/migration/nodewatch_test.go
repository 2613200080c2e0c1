package migration

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// nodeChanges records, from the moment it starts, every Node write that
// changed the value of what the move must leave as it was: the labels, the
// addresses, the providerID and the taints; and every Node created or
// deleted. Conditions and heartbeats are the kubelets' and the route
// controller's ordinary traffic and are not counted.
type nodeChanges struct {
	mu      sync.Mutex
	last    map[string]*corev1.Node
	changes []string
	writes  int
	// notReady are the episodes in which a Node's Ready condition was not
	// True, as its versions showed them; notReadySince the open ones.
	notReady      []notReadyEpisode
	notReadySince map[string]notReadyEpisode
	cancel        context.CancelFunc
	done          chan struct{}
}

// notReadyEpisode is a time a Node was not Ready: from its Ready
// condition's transition to the first version Ready again (open: to the
// watch's end).
type notReadyEpisode struct {
	Node     string
	Why      string
	From, To time.Time
}

func (e notReadyEpisode) String() string {
	return fmt.Sprintf("%s not Ready for %s from %s (%s)", e.Node, e.To.Sub(e.From).Round(time.Millisecond), e.From.UTC().Format("15:04:05.000"), e.Why)
}

func watchNodeChanges(t *testing.T) *nodeChanges {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	list, err := env.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	w := &nodeChanges{last: map[string]*corev1.Node{}, notReadySince: map[string]notReadyEpisode{}, cancel: cancel, done: make(chan struct{})}
	for i := range list.Items {
		w.last[list.Items[i].Name] = &list.Items[i]
	}
	go w.run(ctx, list.ResourceVersion)
	t.Cleanup(func() { w.Stop() })
	return w
}

func (w *nodeChanges) run(ctx context.Context, rv string) {
	defer close(w.done)
	for ctx.Err() == nil {
		wi, err := env.kube.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
		if err != nil {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		for ev := range wi.ResultChan() {
			n, ok := ev.Object.(*corev1.Node)
			if !ok {
				continue
			}
			rv = n.ResourceVersion
			w.record(ev.Type, n)
		}
		wi.Stop()
	}
}

func (w *nodeChanges) record(typ watch.EventType, n *corev1.Node) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.readiness(n)
	prev := w.last[n.Name]
	switch typ {
	case watch.Added:
		if prev == nil {
			w.changes = append(w.changes, fmt.Sprintf("Node %s created (by %s)", n.Name, lastManager(n)))
		}
		w.last[n.Name] = n
	case watch.Deleted:
		w.changes = append(w.changes, fmt.Sprintf("Node %s deleted", n.Name))
		delete(w.last, n.Name)
	case watch.Modified:
		w.writes++
		if prev != nil {
			for _, d := range nodeDiff(prev, n) {
				w.changes = append(w.changes, fmt.Sprintf("Node %s %s (by %s)", n.Name, d, lastManager(n)))
			}
		}
		w.last[n.Name] = n
	case watch.Bookmark, watch.Error:
		// Progress marks and a closed watch, which run starts again.
	}
}

// readiness opens a not-Ready episode at a version whose Ready condition is
// not True, and closes it at the first one Ready again.
func (w *nodeChanges) readiness(n *corev1.Node) {
	open, isOpen := w.notReadySince[n.Name]
	for _, c := range n.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		switch {
		case c.Status != corev1.ConditionTrue && !isOpen:
			w.notReadySince[n.Name] = notReadyEpisode{Node: n.Name, Why: fmt.Sprintf("Ready=%s %s: %s", c.Status, c.Reason, c.Message), From: c.LastTransitionTime.Time}
		case c.Status == corev1.ConditionTrue && isOpen:
			open.To = c.LastTransitionTime.Time
			w.notReady = append(w.notReady, open)
			delete(w.notReadySince, n.Name)
		}
	}
}

// nodeDiff names what changed value between two versions of a Node.
func nodeDiff(a, b *corev1.Node) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(mergeKeys(a.Labels, b.Labels))) {
		va, ina := a.Labels[k]
		vb, inb := b.Labels[k]
		if va != vb || ina != inb {
			out = append(out, fmt.Sprintf("label %s: %q -> %q", k, va, vb))
		}
	}
	if !equality.Semantic.DeepEqual(a.Status.Addresses, b.Status.Addresses) {
		out = append(out, fmt.Sprintf("addresses: %v -> %v", a.Status.Addresses, b.Status.Addresses))
	}
	if a.Spec.ProviderID != b.Spec.ProviderID {
		out = append(out, fmt.Sprintf("providerID: %q -> %q", a.Spec.ProviderID, b.Spec.ProviderID))
	}
	if !equality.Semantic.DeepEqual(a.Spec.Taints, b.Spec.Taints) {
		out = append(out, fmt.Sprintf("taints: %v -> %v", a.Spec.Taints, b.Spec.Taints))
	}
	return out
}

func mergeKeys(a, b map[string]string) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// lastManager is the field manager of a Node's newest managedFields entry.
func lastManager(n *corev1.Node) string {
	var who string
	var when time.Time
	for _, m := range n.ManagedFields {
		if m.Time != nil && !m.Time.Time.Before(when) {
			who, when = m.Manager+" "+string(m.Operation)+" "+m.Subresource, m.Time.Time
		}
	}
	return who
}

// Stop ends the watch and returns the changes and the count of Node
// writes seen (heartbeats included).
func (w *nodeChanges) Stop() ([]string, int) {
	w.cancel()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.changes), w.writes
}

// NotReady returns the not-Ready episodes seen, the open ones ending now;
// call it after Stop.
func (w *nodeChanges) NotReady() []notReadyEpisode {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := slices.Clone(w.notReady)
	for _, e := range w.notReadySince {
		e.To = time.Now()
		out = append(out, e)
	}
	return out
}
