package migrate

import (
	"context"
	"errors"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"

	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/install/apply"
	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
)

// gateResult is one look at a gate: passed, and what was seen.
type gateResult struct {
	ok       bool
	evidence []string
}

func passed(evidence ...string) gateResult  { return gateResult{ok: true, evidence: evidence} }
func waiting(evidence ...string) gateResult { return gateResult{evidence: evidence} }

// stepImpl is what a step kind does. action and undo are idempotent: resume
// runs them again after a crash. A nil action means the step runs on the
// nodes (the node step) and apply only waits at the gate.
type stepImpl struct {
	action   func(context.Context, *env, *Step) error
	gate     func(context.Context, *env, *Step) (gateResult, error)
	undo     func(context.Context, *env, *Step) error
	undoGate func(context.Context, *env, *Step) (gateResult, error)
	// undoPhase is the node phase that undoes a node step, and undoScope
	// the files a restore puts back (control-plane or kubelet).
	undoPhase string
	undoScope string
}

// stepImpls maps a step kind to its implementation.
var stepImpls = map[string]stepImpl{
	StepVerifyCluster: {action: verifyCluster, gate: verifyClusterGate,
		undo: noop, undoGate: always},
	StepMigrationRBAC: {action: applyRBAC, gate: rbacGate,
		undo: deleteRBAC, undoGate: always},
	StepKCMLeaderMigration: {gate: kcmLeaderMigrationGate,
		undoPhase: PhaseRestore, undoScope: ScopeControlPlane, undoGate: kcmInTreeGate},
	StepInstallCCM: {action: installCCM, gate: installCCMGate,
		undo: uninstallCCM, undoGate: uninstallCCMGate},
	StepCutOver: {gate: cutOverGate,
		undoPhase: PhaseControlPlaneLeaderMigration, undoGate: kcmLeaderMigrationMirrorGate},
	StepKCMExternal: {gate: kcmExternalGate,
		undoPhase: PhaseRestore, undoScope: ScopeControlPlane, undoGate: kcmInTreeGate},
	StepKubeadmConfig: {action: editKubeadmConfig, gate: kubeadmConfigGate,
		undo: restoreKubeadmConfig, undoGate: always},
	StepFinalize: {action: finalize, gate: finalizeGate,
		undo: unfinalize, undoGate: unfinalizeGate},
	StepKubeletExternal: {gate: kubeletGate,
		undoPhase: PhaseRestore, undoScope: ScopeKubelet, undoGate: kubeletRestoreGate},
}

// NodePhase returns the node phase (and, for restore, the scope) that runs
// the named step, or undoes it, and the nodes it runs on; ok is false for a
// step that runs in the cluster. What a node-step helper needs.
func (p *MigrationPlan) NodePhase(step string, undo bool) (phase, scope string, nodes []string, ok bool) {
	_, s, found := p.Step(step)
	if !found || s.Runs != RunsNodes {
		return "", "", nil, false
	}
	if !undo {
		return s.Phase, "", s.Nodes, true
	}
	impl := implOf(s)
	return impl.undoPhase, impl.undoScope, s.Nodes, impl.undoPhase != ""
}

func implOf(s *Step) stepImpl {
	base, _, _ := strings.Cut(s.Name, "/")
	return stepImpls[base]
}

func noop(context.Context, *env, *Step) error { return nil }
func always(context.Context, *env, *Step) (gateResult, error) {
	return passed("nothing to wait for"), nil
}

// --- verify-cluster ---------------------------------------------------------

func serverMinor(v *version.Info) (int, error) {
	var minor int
	if _, err := fmt.Sscanf(strings.TrimRight(v.Minor, "+"), "%d", &minor); err != nil {
		return 0, fmt.Errorf("apiserver minor version %q: %w", v.Minor, err)
	}
	return minor, nil
}

// verifyCluster checks that the cluster is still the one planned, and takes
// the guards' baseline once (a resumed run keeps the first).
func verifyCluster(ctx context.Context, e *env, _ *Step) error {
	v, err := e.client.Discovery().ServerVersion()
	if err != nil {
		return fmt.Errorf("read the apiserver version: %w", err)
	}
	if v.GitVersion != e.plan.Spec.Cluster.KubernetesVersion {
		return fmt.Errorf("the apiserver is %s, the plan was made for %s: make a new plan", v.GitVersion, e.plan.Spec.Cluster.KubernetesVersion)
	}
	if b, err := e.baseline(ctx); err != nil || b != nil {
		return err
	}
	b, err := takeBaseline(ctx, e.client)
	if err != nil {
		return err
	}
	ref, err := writeBaseline(ctx, e.client, b)
	if err != nil {
		return err
	}
	if _, err := e.update(ctx, func(j *Journal) error { j.BaselineRef = ref; return nil }); err != nil {
		return err
	}
	e.base = b
	return nil
}

// --- migration-rbac ---------------------------------------------------------

func applyRBAC(ctx context.Context, e *env, _ *Step) error {
	objs, err := migrationRBAC(e.plan)
	if err != nil {
		return err
	}
	_, err = e.applier.Apply(ctx, objs, apply.Options{Progress: e.out})
	return err
}

// deleteRBAC removes the migration's Roles, RoleBindings and the reports
// ConfigMap (by name: install's uninstall removes only install's objects).
func deleteRBAC(ctx context.Context, e *env, _ *Step) error {
	var errs []error
	del := func(kind, name string, f func() error) {
		err := f()
		switch {
		case err == nil:
			fmt.Fprintf(e.out, "%s/%s/%s deleted\n", kind, Namespace, name)
		case !apierrors.IsNotFound(err):
			errs = append(errs, fmt.Errorf("delete %s %s/%s: %w", kind, Namespace, name, err))
		}
	}
	opts := metav1.DeleteOptions{}
	rbac := e.client.RbacV1()
	for _, name := range []string{MigrationRoleName, ReportsRoleName} {
		del("RoleBinding", name, func() error { return rbac.RoleBindings(Namespace).Delete(ctx, name, opts) })
		del("Role", name, func() error { return rbac.Roles(Namespace).Delete(ctx, name, opts) })
	}
	for _, name := range ReportConfigMaps() {
		del("ConfigMap", name, func() error { return e.client.CoreV1().ConfigMaps(Namespace).Delete(ctx, name, opts) })
	}
	return errors.Join(errs...)
}

// --- control-plane node steps ----------------------------------------------

// kcmMode classifies one kube-controller-manager's flags.
func kcmMode(f nodefiles.Flags) string {
	provider, _ := f.Get("cloud-provider")
	lm := flagTrue(f, "enable-leader-migration")
	switch {
	case provider == "aws" && lm:
		return "in-tree with leader migration"
	case provider == "aws":
		return "in-tree"
	case provider == "external" && lm:
		return "external with leader migration"
	case provider == "external":
		return "external"
	}
	return fmt.Sprintf("--cloud-provider=%q", provider)
}

// flagTrue reads a boolean flag by the kube-controller-manager's own rule
// (nodefiles.ParseBool); a value it refuses is not true.
func flagTrue(f nodefiles.Flags, name string) bool {
	b, err := f.Bool(name, false)
	return err == nil && b
}

// --- install-ccm ------------------------------------------------------------

func (e *env) leaderMigration() bool { return e.plan.Spec.Mode == ModeLeaderMigration }

// kops runs its own CCM addon (spec.cloudControllerManager): the steps that
// would apply install's objects only wait at their gates there.
func (e *env) kops() bool { return e.plan.Spec.Cluster.Distribution == DistributionKops }

func installCCM(ctx context.Context, e *env, _ *Step) error {
	return e.writeCCM(ctx, e.leaderMigration(), false,
		"apply the cluster-spec edit for spec.cloudControllerManager (spec.kops of the plan) and `kops update cluster --yes`")
}

// writeCCM applies (or, with remove, deletes) install's objects, with the
// leader-migration file and flags when leaderMigration. On kops it prints
// the kops step instead: kops runs its own CCM addon.
func (e *env) writeCCM(ctx context.Context, leaderMigration, remove bool, kopsStep string) error {
	if e.kops() {
		fmt.Fprintln(e.out, "  kops: "+kopsStep)
		return nil
	}
	objs, err := ccmObjects(e.plan, leaderMigration)
	if err != nil {
		return err
	}
	if remove {
		_, err = e.applier.Uninstall(ctx, objs, apply.Options{Progress: e.out})
	} else {
		_, err = e.applier.Apply(ctx, objs, apply.Options{Progress: e.out})
	}
	return err
}

func uninstallCCM(ctx context.Context, e *env, _ *Step) error {
	return e.writeCCM(ctx, e.leaderMigration(), true,
		"`kops edit cluster --unset=cluster.spec.cloudControllerManager` and `kops update cluster --yes`")
}

// ccmWorkloadArgs returns the CCM container's args of the installed
// workload.
func (e *env) ccmWorkloadArgs(ctx context.Context) ([]string, bool, error) {
	var tmplArgs []string
	ds, err := e.client.AppsV1().DaemonSets(e.ns).Get(ctx, install.AppName, metav1.GetOptions{})
	switch {
	case err == nil:
		tmplArgs = containerArgs(ds.Spec.Template.Spec.Containers)
	case apierrors.IsNotFound(err):
		var d *appsv1.Deployment
		d, err = e.client.AppsV1().Deployments(e.ns).Get(ctx, install.AppName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		tmplArgs = containerArgs(d.Spec.Template.Spec.Containers)
	default:
		return nil, false, err
	}
	return tmplArgs, true, nil
}

func containerArgs(cs []corev1.Container) []string {
	for _, c := range cs {
		if c.Name == install.AppName {
			return c.Args
		}
	}
	return nil
}
