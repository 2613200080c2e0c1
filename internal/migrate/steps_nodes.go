package migrate

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/internal/kubeadmapi"
	"github.com/awsccmctl/awsccmctl/internal/leadermigration"
	"github.com/awsccmctl/awsccmctl/internal/migrate/nodephase"
)

// nodeReportsFor waits for a report of phase from every node of the step,
// written since the step started. It returns the reports and what is
// missing.
func (e *env) nodeReportsFor(ctx context.Context, nodes []string, phase string) (map[string]NodeReport, []string, error) {
	all, err := readNodeReports(ctx, e.client)
	if err != nil {
		return nil, nil, err
	}
	got := map[string]NodeReport{}
	var missing []string
	for _, n := range nodes {
		r, ok := all[n]
		if !ok || r.Phase != phase || r.InProgress || r.Time.Time.Before(e.stepStarted.Add(-time.Second)) {
			missing = append(missing, n)
			continue
		}
		got[n] = r
	}
	return got, missing, nil
}

// apiserverExternal: no kube-apiserver mirror Pod keeps the in-tree
// provider's flags or admission plugin.
func (e *env) apiserverExternal(ctx context.Context) (bool, []string, error) {
	pods, err := mirrorPodFlags(ctx, e.client, "kube-apiserver")
	if err != nil {
		return false, nil, err
	}
	ok := true
	var ev []string
	for _, p := range pods {
		var left []string
		for _, f := range []string{"cloud-provider", "cloud-config"} {
			if p.Flags.Has(f) {
				left = append(left, "--"+f)
			}
		}
		for _, v := range p.Flags.Values("enable-admission-plugins") {
			if slices.Contains(strings.Split(v, ","), "PersistentVolumeLabel") {
				left = append(left, "PersistentVolumeLabel")
			}
		}
		if len(left) > 0 {
			ok = false
			ev = append(ev, fmt.Sprintf("%s: kube-apiserver still has %s", p.Node, strings.Join(left, ", ")))
		} else {
			ev = append(ev, p.Node+": kube-apiserver without the in-tree provider")
		}
	}
	return ok, ev, nil
}

// kcmReportsQuiet waits for every control-plane node's report of phase,
// and fails the split-brain guard if a kube-controller-manager still runs
// a migrated loop.
func (e *env) kcmReportsQuiet(ctx context.Context, s *Step) (bool, []string, error) {
	reports, missing, err := e.nodeReportsFor(ctx, s.Nodes, s.Phase)
	if err != nil {
		return false, nil, err
	}
	var ev []string
	for _, n := range missing {
		ev = append(ev, fmt.Sprintf("%s: no report of phase %s yet (`migrate-from-intree node --phase %s --kubeconfig ...` writes it)", n, s.Phase, s.Phase))
	}
	ok := len(missing) == 0
	for _, n := range slices.Sorted(maps.Keys(reports)) {
		r := reports[n]
		if r.KCMHealthzError != "" {
			ok = false
			ev = append(ev, fmt.Sprintf("%s: kube-controller-manager /healthz?verbose: %s", n, r.KCMHealthzError))
			continue
		}
		if running := leadermigration.Running(r.KCMHealthz, leadermigration.KCMNames()); len(running) > 0 {
			return false, nil, &GuardError{Problems: []string{fmt.Sprintf("split brain: kube-controller-manager on %s still runs %v after the cut-over", n, running)}}
		}
		ev = append(ev, fmt.Sprintf("%s: kube-controller-manager runs none of %v", n, leadermigration.KCMNames()))
	}
	return ok, ev, nil
}

// kcmExternalGate (restart mode): every kube-controller-manager runs
// external and none runs a migrated loop.
func kcmExternalGate(ctx context.Context, e *env, s *Step) (gateResult, error) {
	ok, ev, err := e.kcmAllIn(ctx, "external")
	if err != nil || !ok {
		return waiting(ev...), err
	}
	quiet, qEv, err := e.kcmReportsQuiet(ctx, s)
	if err != nil {
		return gateResult{}, err
	}
	return gateResult{ok: quiet, evidence: append(ev, qEv...)}, nil
}

// --- kubelet-external/<group> ----------------------------------------------

func kubeletGate(ctx context.Context, e *env, s *Step) (gateResult, error) {
	return e.reportedGate(ctx, s, PhaseKubeletExternal)
}

func kubeletRestoreGate(ctx context.Context, e *env, s *Step) (gateResult, error) {
	return e.reportedGate(ctx, s, PhaseRestore)
}

func (e *env) reportedGate(ctx context.Context, s *Step, phase string) (gateResult, error) {
	reports, missing, err := e.nodeReportsFor(ctx, s.Nodes, phase)
	if err != nil {
		return gateResult{}, err
	}
	ev := []string{fmt.Sprintf("%d of %d nodes reported phase %s", len(reports), len(s.Nodes), phase)}
	if len(missing) > 0 {
		if len(missing) > 5 {
			missing = append(missing[:5], "...")
		}
		return waiting(append(ev, "waiting for "+strings.Join(missing, ", "))...), nil
	}
	return passed(ev...), nil
}

// --- kubeadm-config ---------------------------------------------------------

const (
	kubeadmConfigName = "kubeadm-config"
	kubeadmConfigKey  = kubeadmapi.KindClusterConfiguration
)

// editKubeadmConfig makes kube-system/kubeadm-config's ClusterConfiguration
// say what the nodes now run, so `kubeadm upgrade` does not bring the
// in-tree flags back. The original is kept in the journal for the undo.
func editKubeadmConfig(ctx context.Context, e *env, _ *Step) error {
	cm, err := e.client.CoreV1().ConfigMaps(Namespace).Get(ctx, kubeadmConfigName, metav1.GetOptions{})
	if err != nil {
		if e.plan.Spec.Cluster.Distribution != DistributionKubeadm {
			return nil
		}
		return fmt.Errorf("read %s/%s: %w", Namespace, kubeadmConfigName, err)
	}
	original := e.journal.KubeadmConfigOriginal
	if original == "" {
		original = cm.Data[kubeadmConfigKey]
		if _, err := e.update(ctx, func(j *Journal) error { j.KubeadmConfigOriginal = original; return nil }); err != nil {
			return err
		}
	}
	edited, err := nodephase.EditClusterConfiguration([]byte(original), nodephase.Phase(PhaseControlPlaneExternal), nodephase.LeaderMigrationConfigPath)
	if err != nil {
		return fmt.Errorf("edit %s/%s: %w", Namespace, kubeadmConfigName, err)
	}
	if cm.Data[kubeadmConfigKey] == string(edited) {
		return nil
	}
	cm = cm.DeepCopy()
	cm.Data[kubeadmConfigKey] = string(edited)
	_, err = e.client.CoreV1().ConfigMaps(Namespace).Update(ctx, cm, metav1.UpdateOptions{})
	return err
}

func kubeadmConfigGate(ctx context.Context, e *env, _ *Step) (gateResult, error) {
	cm, err := e.client.CoreV1().ConfigMaps(Namespace).Get(ctx, kubeadmConfigName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return passed("no kubeadm-config: nothing to change (" + string(e.plan.Spec.Cluster.Distribution) + ")"), nil
	}
	if err != nil {
		// Not a verdict: an apiserver that did not answer is asked again.
		return waiting(fmt.Sprintf("ConfigMap %s/%s: %v", Namespace, kubeadmConfigName, err)), nil
	}
	want, err := nodephase.EditClusterConfiguration([]byte(e.journal.KubeadmConfigOriginal), nodephase.Phase(PhaseControlPlaneExternal), nodephase.LeaderMigrationConfigPath)
	if err != nil {
		return gateResult{}, err
	}
	if cm.Data[kubeadmConfigKey] != string(want) {
		return waiting("kubeadm-config's ClusterConfiguration is not the edited one"), nil
	}
	return passed("kubeadm-config's ClusterConfiguration: kube-controller-manager --cloud-provider=external, kube-apiserver without the in-tree flags"), nil
}

func restoreKubeadmConfig(ctx context.Context, e *env, _ *Step) error {
	if e.journal.KubeadmConfigOriginal == "" {
		return nil
	}
	cm, err := e.client.CoreV1().ConfigMaps(Namespace).Get(ctx, kubeadmConfigName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("read %s/%s: %w", Namespace, kubeadmConfigName, err)
	}
	cm = cm.DeepCopy()
	cm.Data[kubeadmConfigKey] = e.journal.KubeadmConfigOriginal
	_, err = e.client.CoreV1().ConfigMaps(Namespace).Update(ctx, cm, metav1.UpdateOptions{})
	return err
}
