package routes

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/awsccmctl/awsccmctl/internal/clustertag"
)

// strangerTTL is how long an instance found to be outside the cluster is
// not asked about again: a foreign route into the cluster CIDRs then costs
// one instance lookup per strangerTTL, not one per sync. An instance's
// cluster tag hardly ever changes.
const strangerTTL = 15 * time.Minute

// ViewTagKeys are the tag keys the shared instance view must keep
// (instances.Options.TagKeys) for the routes to tell cluster instances
// from others: the cluster tag in both forms.
func ViewTagKeys(clusterID string) []string {
	return []string{clustertag.Key(clusterID), clustertag.LegacyKey}
}

// orphans returns the instances behind active routes into the cluster
// CIDRs that are no Node's but carry the cluster tag: their Node was
// deleted while the instance lives on (or the CCM was down when it went),
// so the routes are the controller's to delete. Only instances no Node
// names are looked up, in one batch through the instance view, so a steady
// sync asks nothing. When some Node names its instance only by private DNS
// name, no instance can be called an orphan (it may be that Node's).
func (m *Manager) orphans(ctx context.Context, t *table, byInstance map[string]types.NodeName, byENI map[string]string, unresolved bool) (map[string]bool, error) {
	if unresolved {
		return nil, nil
	}
	now := m.clock.Now()
	var ask []string
	m.mu.Lock()
	for _, r := range t.routes {
		if !r.mayBeOurs() || r.blackhole || !m.inClusterCIDRs(r.dest) {
			continue
		}
		id := r.instanceID
		if id == "" {
			id = byENI[r.eniID]
		}
		if _, node := byInstance[id]; id == "" || node {
			continue
		}
		if seen, ok := m.strangers[id]; ok && now.Sub(seen) < strangerTTL {
			continue
		}
		ask = append(ask, id)
	}
	m.mu.Unlock()
	if len(ask) == 0 {
		return nil, nil
	}
	found, err := m.instances.ByIDs(ctx, ask)
	if err != nil {
		return nil, fmt.Errorf("find the instances of routes in %s that lead to no Node: %w", t.id, err)
	}
	out := map[string]bool{}
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, seen := range m.strangers {
		if now.Sub(seen) >= strangerTTL {
			delete(m.strangers, id)
		}
	}
	for _, id := range ask {
		if inst := found[id]; inst != nil && clustertag.Has(inst.Tags, m.env.ClusterID) {
			out[id] = true
		} else {
			m.strangers[id] = now
		}
	}
	return out, nil
}
