// Package migrate moves a live cluster from the in-tree AWS provider of
// kube-controller-manager (Kubernetes 1.26 and older) to this project's
// cloud controller manager.
//
// A migration is a MigrationPlan (plan.go): the ordered steps, each with its
// precondition, action, gate, timeout and undo. Planner builds one from what
// Discover reads in the cluster and what the pre-migrate preflight found,
// refusing with the reason and the way out when the move would not be safe.
// Runner executes a plan step by step, stopping at each gate, and keeps a
// journal in the cluster (journal.go) so that a run can be resumed after a
// crash, followed with `status`, or rolled back.
//
// Node-local work (static Pod manifests and kubelet flags) is done by
// internal/migrate/nodephase on each node; the Runner never touches nodes:
// it observes the result through the API (mirror Pods, Leases, the CCM's
// /healthz through the apiserver's pods proxy, reports the node step writes),
// so it works whoever runs the node step.
package migrate
