package migrate

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/internal/migrate/nodephase"
)

const (
	kubeadmConfigName = "kubeadm-config"
	kubeadmConfigKey  = "ClusterConfiguration"
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
