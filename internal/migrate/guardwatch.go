package migrate

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// guardSyncTimeout bounds the wait for the guards' first list of Nodes
// and Services (a watch that cannot list retries on its own, so without
// a bound a forbidden or broken list would stall the run silently).
const guardSyncTimeout = 2 * time.Minute

// guardWatch keeps every Node and Service for the guards from one list
// and one watch of each for the whole run, rather than a list of each at
// every check: at 5,000 Nodes a list of every Node is about 32 MB of
// JSON, and a check every guardEvery listed 380 MB a minute
// (docs/benchmarks.md); the watch then carries only what changes. It
// keeps of each object only what decideGuards reads, so that its cache
// stays small.
type guardWatch struct {
	nodes, services cache.SharedIndexInformer
	synced          bool
}

// startGuardWatch lists and watches Nodes and Services until ctx ends.
func startGuardWatch(ctx context.Context, client kubernetes.Interface) (*guardWatch, error) {
	f := informers.NewSharedInformerFactory(client, 0)
	w := &guardWatch{nodes: f.Core().V1().Nodes().Informer(), services: f.Core().V1().Services().Informer()}
	if err := w.nodes.SetTransform(guardedNodeFields); err != nil {
		return nil, err
	}
	if err := w.services.SetTransform(guardedServiceFields); err != nil {
		return nil, err
	}
	f.Start(ctx.Done())
	return w, nil
}

// checkGuards compares the cluster, as the run's watch holds it, with the
// baseline (decideGuards). The watch starts at the run's first check with
// a baseline and lasts as long as the run (ctx). Its view is as fresh as
// a list from the apiserver's watch cache: an event a moment late only
// delays a finding to the next check.
func (e *env) checkGuards(ctx context.Context, now time.Time) error {
	b, err := e.baseline(ctx)
	if b == nil || err != nil {
		return err
	}
	if e.guards == nil {
		w, err := startGuardWatch(ctx, e.client)
		if err != nil {
			return fmt.Errorf("guards: watch Nodes and Services: %w", err)
		}
		e.guards = w
	}
	return e.guards.check(ctx, b, e.kubeletNodesBegun(), now)
}

// check waits for the first list (at most guardSyncTimeout), then decides
// on what the watch holds.
func (w *guardWatch) check(ctx context.Context, b *Baseline, restarting map[string]bool, now time.Time) error {
	if !w.synced {
		sctx, cancel := context.WithTimeout(ctx, guardSyncTimeout)
		defer cancel()
		if !cache.WaitForCacheSync(sctx.Done(), w.nodes.HasSynced, w.services.HasSynced) {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("node and load-balancer guards: no list of Nodes and Services within %s (can this identity list and watch them?)", guardSyncTimeout)
		}
		w.synced = true
	}
	o := guardObservation{Nodes: map[string]*corev1.Node{}, Hostnames: map[string]string{}, Restarting: restarting, Now: now}
	for _, obj := range w.nodes.GetStore().List() {
		if n, ok := obj.(*corev1.Node); ok {
			o.Nodes[n.Name] = n
		}
	}
	for _, obj := range w.services.GetStore().List() {
		if s, ok := obj.(*corev1.Service); ok {
			o.Hostnames[s.Namespace+"/"+s.Name] = lbHostname(s)
		}
	}
	return decideGuards(o, b)
}

// guardedNodeFields keeps of a Node what the node guards compare: its
// providerID and taints, its addresses and guardedLabels, its Ready
// condition. A Node with its images and conditions is several KB; this
// is a few hundred bytes.
func guardedNodeFields(obj any) (any, error) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil // a tombstone: nothing to keep
	}
	out := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, UID: n.UID, ResourceVersion: n.ResourceVersion}}
	for _, k := range guardedLabels {
		if v, ok := n.Labels[k]; ok {
			if out.Labels == nil {
				out.Labels = map[string]string{}
			}
			out.Labels[k] = v
		}
	}
	out.Spec.ProviderID, out.Spec.Taints = n.Spec.ProviderID, n.Spec.Taints
	out.Status.Addresses = n.Status.Addresses
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			out.Status.Conditions = []corev1.NodeCondition{c}
		}
	}
	return out, nil
}

// guardedServiceFields keeps of a Service what the load-balancer guard
// compares: its load balancer's status.
func guardedServiceFields(obj any) (any, error) {
	s, ok := obj.(*corev1.Service)
	if !ok {
		return obj, nil
	}
	out := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace, UID: s.UID, ResourceVersion: s.ResourceVersion}}
	out.Spec.Type = s.Spec.Type
	out.Status.LoadBalancer = s.Status.LoadBalancer
	return out, nil
}
