package migrate

import (
	"fmt"
	"strings"
	"time"

	"github.com/awsccmctl/awsccmctl/internal/leadermigration"
)

// planSteps writes the steps of p's mode, each with what must hold before,
// what it does, the gate that proves it worked, its timeout and its undo.
func planSteps(p *MigrationPlan, o PlanOptions) []Step {
	nodeTimeout := o.NodeStepTimeout
	if nodeTimeout <= 0 {
		nodeTimeout = 30 * time.Minute
	}
	cp := p.Spec.Cluster.ControlPlaneNodes
	kops := p.Spec.Cluster.Distribution == DistributionKops
	nodeAction := func(phase, what string) string {
		if kops {
			return what + " (kops: this step's cluster-spec edit and commands in spec.kops.edits; nodeup rewrites the node files)"
		}
		return fmt.Sprintf("%s: on each node run `awsccmctl migrate-from-intree node --phase %s --kubeconfig <a kubeconfig allowed to write kube-system/%s>`%s", what, phase, ReportsName, orderNote(phase))
	}
	lm := leadermigration.LeaseName
	steps := []Step{{
		Name: StepVerifyCluster, Runs: RunsCluster,
		Description:  "check the cluster is the one planned and record the guards' baseline",
		Precondition: "the plan's apiserver version and control-plane nodes",
		Action:       "read the apiserver version, the control-plane mirror Pods, every Node's providerID and every LoadBalancer Service's hostname",
		Gate:         "kube-controller-manager runs on exactly the planned control-plane nodes",
		Timeout:      durationOf(time.Minute),
		Undo:         "nothing",
	}}
	if p.Spec.Mode == ModeLeaderMigration {
		steps = append(steps,
			Step{
				Name: StepMigrationRBAC, Runs: RunsCluster, Mutating: true,
				Description:  "let both managers take the migration lease, and nodes report their phases",
				Precondition: "verify-cluster passed",
				Action: fmt.Sprintf("server-side apply Role/RoleBinding %s (get, update on Lease %s/%s for %s and the CCM's ServiceAccount) and the reports ConfigMaps %s and -1 to -7 with Role/RoleBinding %s (get, patch on it, and get on Leases %s and %s, for group %s: a node tells which Leases its kube-controller-manager holds before it restarts it)",
					MigrationRoleName, leadermigration.LeaseNamespace, lm, p.Spec.Cluster.KCMIdentity, ReportsName, ReportsRoleName, leadermigration.KCMLeaseName, lm, NodesGroup),
				Gate:    "SubjectAccessReview: both identities may get and update the migration lease",
				Timeout: durationOf(time.Minute),
				Undo:    "delete those objects",
			},
			Step{
				Name: StepKCMLeaderMigration, Runs: RunsNodes, Phase: PhaseControlPlaneLeaderMigration, Nodes: cp, Mutating: true,
				Description:  "kube-controller-manager keeps the in-tree provider and runs its cloud loops under the migration lease",
				Precondition: "migration-rbac passed",
				Action:       nodeAction(PhaseControlPlaneLeaderMigration, "kube-controller-manager gets --enable-leader-migration and --leader-migration-config (both controller spellings assigned to kube-controller-manager), with the file's hostPath volume"),
				Gate:         fmt.Sprintf("every kube-controller-manager mirror Pod shows --cloud-provider=aws with leader migration, and a kube-controller-manager holds Lease %s (its holder is the holder of Lease kube-controller-manager)", lm),
				Timeout:      durationOf(nodeTimeout),
				Undo:         nodeAction(PhaseRestore+" --scope "+ScopeControlPlane, "put the backed-up manifests back") + "; gate: every kube-controller-manager is plain in-tree again and a restored one leads (so runs the cloud loops)",
			},
			Step{
				Name: StepInstallCCM, Runs: RunsCluster, Mutating: true,
				Description:  "run the CCM (install's manifests) with leader migration: it initializes new Nodes at once and waits for the migration lease",
				Precondition: "a kube-controller-manager holds the migration lease, so the CCM cannot take it",
				Action:       ccmAction(kops, "server-side apply install's objects with the leader-migration file (both controller spellings assigned to cloud-controller-manager, no resourceLock) and --enable-leader-migration, electing in kube-system"),
				Gate:         "the CCM leads Lease cloud-controller-manager, its /healthz?verbose (pods proxy) lists cloud-node-controller and none of the migrated controllers, and kube-controller-manager still holds the migration lease",
				Timeout:      durationOf(5 * time.Minute),
				Undo:         "delete install's objects; gate: kube-controller-manager holds the migration lease again (one lease duration later)",
			},
			Step{
				Name: StepCutOver, Runs: RunsNodes, Phase: PhaseControlPlaneExternal, Nodes: cp, Mutating: true,
				Description:  "kube-controller-manager stops the cloud loops; the CCM takes the migration lease and runs them",
				Precondition: "the CCM waits on the migration lease",
				Action:       nodeAction(PhaseControlPlaneExternal, "kube-controller-manager gets --cloud-provider=external WITHOUT leader migration (with it, it can win the lease and run nothing, trap C); kube-apiserver loses --cloud-provider, --cloud-config and PersistentVolumeLabel"),
				Gate: fmt.Sprintf("mirror Pods show the new flags and every node reports its kube-controller-manager back, running none of the migrated controllers; the CCM holds Lease %s (at its next retry once the node that saw the holder exit reports it and apply releases the Lease; without that report, about %s after the last renewal; at most %s after every kube-controller-manager went external) and its /healthz?verbose lists the migrated controllers; refused at once: a kube-controller-manager external with leader migration or in-tree without it, and, from the last node's report on, any kube-controller-manager renewing the migration lease (trap C)",
					lm, p.Spec.Handover.ExpectedGap.Duration, p.Spec.Handover.GateBound.Duration),
				Timeout: durationOf(nodeTimeout),
				Undo:    nodeAction(PhaseControlPlaneLeaderMigration, "kube-controller-manager back to the in-tree provider with leader migration (it waits while the CCM holds the lease)"),
			},
		)
	} else {
		steps = append(steps, Step{
			Name: StepMigrationRBAC, Runs: RunsCluster, Mutating: true,
			Description:  "let nodes report their phases",
			Precondition: "verify-cluster passed",
			Action: fmt.Sprintf("server-side apply the reports ConfigMaps %s and -1 to -7 with Role/RoleBinding %s (get, patch on it, and get on Leases %s and %s, for group %s)",
				ReportsName, ReportsRoleName, leadermigration.KCMLeaseName, leadermigration.LeaseName, NodesGroup),
			Gate:    "the reports ConfigMap exists",
			Timeout: durationOf(time.Minute),
			Undo:    "delete those objects",
		}, Step{
			Name: StepKCMExternal, Runs: RunsNodes, Phase: PhaseControlPlaneExternal, Nodes: cp, Mutating: true,
			Description:  "turn the cloud loops off in kube-controller-manager (restart mode: no manager runs them until the CCM starts, typically under a minute; a Service or Node change in that gap waits)",
			Precondition: "verify-cluster passed",
			Action:       nodeAction(PhaseControlPlaneExternal, "kube-controller-manager gets --cloud-provider=external; kube-apiserver loses the in-tree flags"),
			Gate:         "mirror Pods show the new flags and every node reports its kube-controller-manager runs none of the migrated controllers",
			Timeout:      durationOf(nodeTimeout),
			Undo:         nodeAction(PhaseRestore+" --scope "+ScopeControlPlane, "put the backed-up manifests back"),
		}, Step{
			Name: StepInstallCCM, Runs: RunsCluster, Mutating: true,
			Description:  "run the CCM (install's manifests)",
			Precondition: "no kube-controller-manager runs a cloud loop",
			Action:       "server-side apply install's objects",
			Gate:         "the CCM leads Lease cloud-controller-manager and its /healthz?verbose lists the migrated controllers",
			Timeout:      durationOf(5 * time.Minute),
			Undo:         "delete install's objects",
		})
	}
	steps = append(steps, Step{
		Name: StepKubeadmConfig, Runs: RunsCluster, Mutating: !kops,
		Description:  "make kubeadm's record say what the nodes now run, so `kubeadm upgrade` keeps it",
		Precondition: "the control plane runs external",
		Action:       "kubeadm: edit kube-system/kubeadm-config's ClusterConfiguration (controllerManager cloud-provider external; apiServer without cloud-provider, cloud-config and PersistentVolumeLabel), keeping the original in the journal; kops: nothing (the cluster spec holds it)",
		Gate:         "the ConfigMap holds the edited ClusterConfiguration",
		Timeout:      durationOf(time.Minute),
		Undo:         "put the original ClusterConfiguration back",
	})
	for _, g := range p.Spec.NodeGroups {
		extra := ""
		if len(g.KubeletFlags) > 0 {
			extra = " and " + strings.Join(g.KubeletFlags, " ")
		}
		steps = append(steps, Step{
			Name: StepKubeletExternal + "/" + g.Name, Runs: RunsNodes, Phase: PhaseKubeletExternal, Nodes: g.Nodes, Mutating: true,
			Description:  fmt.Sprintf("switch the kubelets of %s (%d nodes) to the external provider", g.Name, len(g.Nodes)),
			Precondition: "the CCM runs every cloud loop; for Pods pulling from private ECR, a kubelet credential provider is configured (preflight images-ecr-credential-provider)",
			Action:       nodeAction(PhaseKubeletExternal, "kubelet --cloud-provider=external"+extra+", without --cloud-config (the in-tree ECR credentials go with it)"),
			Gate:         "every node of the group reports its running kubelet (found by its healthz port, read from /proc): --cloud-provider=external as its files say, started after they were edited, /healthz ok, registering under its Node's name (another name stops the run: it made a second Node); the guards hold, Ready included",
			Timeout:      durationOf(nodeTimeout),
			Undo:         nodeAction(PhaseRestore+" --scope "+ScopeKubelet, "put the kubelet's flag files back") + "; gate: every node's running kubelet runs what its restored files say, started after the restore, /healthz ok",
		})
	}
	if p.Spec.Mode == ModeRestart {
		steps = append(steps, Step{
			Name: StepFinalize, Runs: RunsCluster, Mutating: true,
			Description:  "remove what the migration added",
			Precondition: "the CCM runs the migrated controllers; every planned node's last report shows its kubelet running external and healthy (refused otherwise)",
			Action:       ccmAction(kops, "server-side apply install's objects (unchanged: the CCM has no leader migration in restart mode)"),
			Gate:         fmt.Sprintf("the CCM leads and its /healthz?verbose lists the migrated controllers; then the reports ConfigMaps %s and -1 to -7 and their Role/RoleBinding are deleted", ReportsName),
			Timeout:      durationOf(5 * time.Minute),
			Undo:         "apply the reports ConfigMap and its Role again",
		})
	}
	if p.Spec.Mode == ModeLeaderMigration {
		steps = append(steps, Step{
			Name: StepFinalize, Runs: RunsCluster, Mutating: true,
			Description:  "run the CCM without leader migration and remove what the migration added",
			Precondition: "the CCM runs the migrated controllers; every planned node's last report shows its kubelet running external and healthy (refused otherwise)",
			Action:       ccmAction(kops, "server-side apply install's objects without the leader-migration file and flags (a rolling update: a CCM with leader migration contends the migration lease only while it holds the main lease, so the loops never run twice)"),
			Gate:         fmt.Sprintf("a CCM Pod started since leads and its /healthz?verbose lists the migrated controllers, no kube-controller-manager holds the migration lease; then the migration RBAC, the reports ConfigMap and Lease %s are deleted", lm),
			Timeout:      durationOf(5 * time.Minute),
			Undo:         "apply the migration RBAC and the CCM with leader migration again",
		})
	}
	return steps
}

// ccmAction: kops runs its own CCM addon, from the cluster spec.
func ccmAction(kops bool, what string) string {
	if kops {
		return "kops: this step's spec.cloudControllerManager edit in spec.kops.edits and `kops update cluster --yes` (kops' own CCM addon); apply waits at the gate"
	}
	return what
}

// orderNote says how to roll a phase that restarts kube-controller-manager
// over several nodes (order.go says why).
func orderNote(phase string) string {
	if !touchesKCMPhase(phase, "") && phase != PhaseRestore+" --scope "+ScopeControlPlane {
		return ""
	}
	return ", one node at a time, the node whose kube-controller-manager leads last (apply prints the order when the step starts; `status -o json` has it as the step's order)"
}
