package migrate

// refuseKopsRun refuses to run a kops plan. kops takes a step to the
// nodes by `kops rolling-update`, which replaces each instance: the node
// comes back as a new Node under a new name. The guards hold every Node of
// the baseline (a deleted one stops the run) and the node gates wait for
// the Nodes the plan names, so a run would stop at the first rolling
// update, with the control plane half rolled. Until the gates follow kops'
// instance groups, the kops plan is a runbook, not a run.
func refuseKopsRun(p *MigrationPlan) error {
	if p.Spec.Cluster.Distribution != DistributionKops {
		return nil
	}
	return &RefusedError{Refusals: []Refusal{{
		Reason: "this is a kops plan, and apply cannot run it yet: kops takes each step to the nodes with `kops rolling-update`, which replaces every instance (a new Node, under a new name), while the guards stop the run on a deleted Node and the node steps' gates wait for the Nodes the plan names; the run would stop at the first rolling update",
		WayOut: "run the plan's kops instructions by hand, in order (spec.kops.commands; each step's cluster-spec edit in spec.kops.edits, validated with kops' own code), checking each step's gate as docs/migrate-from-intree.md (kops) describes",
	}}}
}
