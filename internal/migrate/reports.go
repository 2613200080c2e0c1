package migrate

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/kubeletrun"
)

// NodeReport is what `migrate-from-intree node` tells apply about one node:
// the phase it applied and what only the node can see, the local
// kube-controller-manager's /healthz?verbose (kubeadm binds it to
// 127.0.0.1).
type NodeReport struct {
	Node  string           `json:"node"`
	Phase string           `json:"phase"`
	Time  metav1.MicroTime `json:"time"`
	// Changed lists the node files the phase changed (empty on a re-run).
	Changed []string `json:"changed"`
	// KCMHealthz lists the checks kube-controller-manager's /healthz?verbose
	// answered ok with, when it runs on this node; KCMHealthzError says why
	// it could not be read.
	KCMHealthz      []string `json:"kcmHealthz,omitempty"`
	KCMHealthzError string   `json:"kcmHealthzError,omitempty"`
	// InProgress marks the report the node writes as soon as the local
	// kube-controller-manager it replaced has exited, before the new one
	// answers: it carries Departed, and no gate counts it as the phase done.
	InProgress bool `json:"inProgress,omitempty"`
	// Kubelet is the running kubelet as the node saw it after a phase that
	// changes the kubelet's flags (kubelet-external, restore): what the
	// process runs, not what its files say; KubeletError says why it could
	// not be read.
	Kubelet      *kubeletrun.Running `json:"kubelet,omitempty"`
	KubeletError string              `json:"kubeletError,omitempty"`
	// KubeletRestarted says the node step restarted the kubelet (Kubelet
	// is then the new process).
	KubeletRestarted bool `json:"kubeletRestarted,omitempty"`
	// KubeletFilesCloudProvider is the --cloud-provider the kubelet's files
	// say ("" for none), and KubeletFilesModified the newest modification
	// of those files: the running kubelet runs them only if it started
	// after it and runs the same provider.
	KubeletFilesCloudProvider string            `json:"kubeletFilesCloudProvider,omitempty"`
	KubeletFilesModified      *metav1.MicroTime `json:"kubeletFilesModified,omitempty"`
	// KubeletNodeName is the Node name the running kubelet registers as
	// when it runs no cloud provider or an external one: its
	// --hostname-override or the node's host name (this host's with --root
	// /, else <root>/etc/hostname's), lower-cased as the kubelet does; ""
	// when the node step cannot tell.
	KubeletNodeName string `json:"kubeletNodeName,omitempty"`
	// Departed is the kube-controller-manager process the phase replaced,
	// when it held a leader-election Lease: proof that its holder is gone,
	// on which apply releases the Lease instead of waiting for it to
	// expire.
	Departed *Departure `json:"departed,omitempty"`
}

// Departure is a lease holder the node saw exit.
type Departure struct {
	// Identity is the holder identity the process held Leases under
	// (<hostname>_<uuid>).
	Identity string `json:"identity"`
	// Leases are the names (in kube-system) it held when the node step
	// looked, before it changed the manifest.
	Leases []string `json:"leases"`
	// PID and StartTime identified the process (/proc) across PID reuse.
	PID       int    `json:"pid"`
	StartTime uint64 `json:"startTime"`
	// ExitedAt is when the node first saw the process gone: not running,
	// or a zombie. A stopped (SIGSTOP) process is not gone.
	ExitedAt metav1.MicroTime `json:"exitedAt"`
}

// reportKey is the node's key in the reports ConfigMap (a ConfigMap key
// allows the characters of a node name).
func reportKey(node string) string { return node + ".json" }

// WriteNodeReport stores r in the reports ConfigMap (created by the
// migration-rbac step; nodes may patch it, not create it). Each node applies
// only its own key with a field manager of its own, so a thousand nodes
// reporting at once never conflict (server-side apply merges the data map
// key by key).
func WriteNodeReport(ctx context.Context, client kubernetes.Interface, r NodeReport) error {
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	cm := corev1ac.ConfigMap(ReportsName, Namespace).WithData(map[string]string{reportKey(r.Node): string(data)})
	_, err = client.CoreV1().ConfigMaps(Namespace).Apply(ctx, cm, metav1.ApplyOptions{FieldManager: "awsccmctl-node-" + r.Node, Force: true})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("report to %s/%s: the ConfigMap does not exist; run `migrate-from-intree apply` first (its migration-rbac step creates it)", Namespace, ReportsName)
	}
	if err != nil {
		return fmt.Errorf("report to %s/%s: %w", Namespace, ReportsName, err)
	}
	return nil
}

// readNodeReports returns the reports by node name.
func readNodeReports(ctx context.Context, client kubernetes.Interface) (map[string]NodeReport, error) {
	cm, err := client.CoreV1().ConfigMaps(Namespace).Get(ctx, ReportsName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return map[string]NodeReport{}, nil
	}
	if err != nil {
		return nil, err
	}
	return parseNodeReports(cm)
}

// parseNodeReports decodes the reports ConfigMap's keys by node name.
func parseNodeReports(cm *corev1.ConfigMap) (map[string]NodeReport, error) {
	out := map[string]NodeReport{}
	for k, v := range cm.Data {
		if !strings.HasSuffix(k, ".json") {
			continue
		}
		var r NodeReport
		if err := json.Unmarshal([]byte(v), &r); err != nil {
			return nil, fmt.Errorf("report %s in %s/%s: %w", k, Namespace, ReportsName, err)
		}
		out[r.Node] = r
	}
	return out, nil
}
