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
// Every gate is an observation and a decision: gates.go reads what a gate
// needs from the cluster into a plain struct (Leases with holder and renew
// time, the kube-controller-manager mirror Pods' modes, the node reports
// written since the step started, the CCM's workload, rollout and
// /healthz), and gates_decide.go judges it without reading anything
// (decideKCMLeaderMigration, decideInstallCCM, decideFinalize, ...:
// passed, waiting with what for, or a GuardError), table-tested in
// gates_decide_test.go. The cut-over's gate, which keeps memory between
// looks, is cutover.go (decideCutOver); the guards are guards.go
// (decideGuards, over the run's watch of Nodes and Services in
// guardwatch.go), a step's timeout runner.go (decideTimeout), and the
// Leases released on a node's proof of exit release.go (departedHolders).
// steps.go maps each step to its action, gate and undo.
//
// Node-local work (static Pod manifests and kubelet flags) is done by
// internal/migrate/nodephase on each node; the Runner never touches nodes:
// it observes the result through the API (mirror Pods, Leases, the CCM's
// /healthz through the apiserver's pods proxy, reports the node step writes),
// so it works whoever runs the node step.
package migrate
