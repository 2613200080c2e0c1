package routes

import (
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// ReasonRouteLimitExceeded is the reason of the Warning event on a Node
// whose route does not fit in the full route table (stable: users alert on
// it).
const ReasonRouteLimitExceeded = "AWSRouteLimitExceeded"

// QuotaMax is the most routes AWS lets one route table hold once the
// "Routes per route table" quota is raised (the default is 50).
const QuotaMax = 1000

// TableFullError is the error of a create into a full route table: the
// one AWS gave, or the remembered one while the CCM refuses creates
// locally.
type TableFullError struct {
	Table string
	// Err is AWS's RouteLimitExceeded answer.
	Err error
}

func (e *TableFullError) Error() string {
	return fmt.Sprintf("route table %s is full: %v\n"+
		"fix: raise the VPC quota \"Routes per route table\" in Service Quotas (default 50, at most %d), "+
		"or use a CNI that needs no VPC routes (such as the Amazon VPC CNI) and start the CCM with --configure-cloud-routes=false",
		e.Table, e.Err, QuotaMax)
}

func (e *TableFullError) Unwrap() error { return e.Err }

// fullTable remembers a table AWS called full.
type fullTable struct {
	err *TableFullError
	// routes is how many counted routes the table held when it was full.
	routes int
}

// rememberFull records that t is full and returns the error to report.
func (m *Manager) rememberFull(t *table, awsErr error) *TableFullError {
	full := &TableFullError{Table: t.id, Err: awsErr}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.full = &fullTable{err: full, routes: t.counted()}
	m.fullSince = m.clock.Now()
	klog.InfoS("Route table is full; refusing further routes into it locally", "table", t.id, "routes", m.full.routes, "for", m.retry)
	return full
}

// refusedAsFull returns the remembered error while table is known full:
// for FullTableRetry after AWS said so, unless a route was deleted since.
func (m *Manager) refusedAsFull(table string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.full == nil || m.full.err.Table != table {
		return nil
	}
	if m.clock.Since(m.fullSince) >= m.retry {
		m.full = nil
		return nil
	}
	return m.full.err
}

// forgetFull ends the refusal after the controller deleted a route from
// table. Callers hold m.mu.
func (m *Manager) forgetFull(table string) {
	if m.full != nil && m.full.err.Table == table {
		m.full = nil
	}
}

// forgetFullIfShrunk ends the refusal when a reading of the table shows
// fewer routes than when it was full (someone else deleted one). Callers
// hold m.mu.
func (m *Manager) forgetFullIfShrunk(t *table) {
	if m.full != nil && m.full.err.Table == t.id && t.counted() < m.full.routes {
		m.full = nil
	}
}

// warnFull tells the Node why it has no route.
func (m *Manager) warnFull(n Node, dest netip.Prefix, err error) {
	if m.events == nil || n.Node == nil {
		return
	}
	m.events.Eventf(n.Node, corev1.EventTypeWarning, ReasonRouteLimitExceeded,
		"No route to pod CIDR %s of this Node: %v", dest, err)
	m.metrics.warned(ReasonRouteLimitExceeded)
}
