package migrate

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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

// reportsFieldManager is the field manager of every node's report write.
const reportsFieldManager = "awsccmctl-node"

// reportKey is the node's key in the reports ConfigMap (a ConfigMap key
// allows the characters of a node name).
func reportKey(node string) string { return node + ".json" }

// reportShardName names the i-th ConfigMap of the reports.
func reportShardName(i int) string {
	if i == 0 {
		return ReportsName
	}
	return fmt.Sprintf("%s-%d", ReportsName, i)
}

// ReportConfigMaps are the names of every ConfigMap of the reports.
func ReportConfigMaps() []string {
	out := make([]string, ReportShards)
	for i := range out {
		out[i] = reportShardName(i)
	}
	return out
}

// reportShardOf is the ConfigMap that holds node's report: the node's name
// hashed (FNV-1a), so every node finds its own without reading anything.
func reportShardOf(node string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(node))
	return reportShardName(int(h.Sum32() % ReportShards))
}

// WriteNodeReport stores r in its node's reports ConfigMap, whose name it
// returns (reportShardOf; created by the migration-rbac step; nodes may
// patch them, not create them). Each node sets only its own key with a
// JSON merge patch, which the apiserver applies to the ConfigMap as it is
// (no resourceVersion), so a thousand nodes reporting at once never
// conflict, all under one field manager: server-side apply with a manager
// per node cost the apiserver more for each manager a ConfigMap held (on
// 2 cores, one write at a time took 8 ms with about 25 reports per
// ConfigMap and 246 ms with 225; with 32 writers at once, writes timed out
// past 1,000 nodes), where a merge patch grows only with the ConfigMap's
// size (26 ms with about 575, near 5,000 nodes; docs/benchmarks.md).
// Where the node may not write that ConfigMap or it does not exist (the
// migration-rbac step of a version before the shards made ReportsName
// alone) the report goes to ReportsName.
func WriteNodeReport(ctx context.Context, client kubernetes.Interface, r NodeReport) (string, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return "", err
	}
	patch, err := json.Marshal(map[string]any{"data": map[string]string{reportKey(r.Node): string(data)}})
	if err != nil {
		return "", err
	}
	write := func(name string) error {
		_, err := client.CoreV1().ConfigMaps(Namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: reportsFieldManager})
		return err
	}
	name := reportShardOf(r.Node)
	err = write(name)
	if (apierrors.IsNotFound(err) || apierrors.IsForbidden(err)) && name != ReportsName {
		// An apply of an earlier version made ReportsName alone, and the
		// nodes' Role names it alone.
		name = ReportsName
		err = write(name)
	}
	if apierrors.IsNotFound(err) {
		return "", fmt.Errorf("report to %s/%s: the ConfigMap does not exist; run `migrate-from-intree apply` first (its migration-rbac step creates it)", Namespace, name)
	}
	if err != nil {
		return "", fmt.Errorf("report to %s/%s: %w", Namespace, name, err)
	}
	return name, nil
}

// readNodeReportsFound reads every node's newest report, and whether ReportsName exists
// (finalize's gate deletes them all).
func readNodeReportsFound(ctx context.Context, client kubernetes.Interface) (map[string]NodeReport, bool, error) {
	return readReportsIn(ctx, client, ReportConfigMaps())
}

// ReadNodeReportsOf reads, by node name, the newest reports of nodes from
// only the ConfigMaps that can hold them: theirs (reportShardOf) and ReportsName (an earlier version's
// reports): a gate polling one node reads two ConfigMaps, not eight.
func ReadNodeReportsOf(ctx context.Context, client kubernetes.Interface, nodes []string) (map[string]NodeReport, error) {
	names := []string{ReportsName}
	for _, n := range nodes {
		if s := reportShardOf(n); !slices.Contains(names, s) {
			names = append(names, s)
		}
	}
	out, _, err := readReportsIn(ctx, client, names)
	return out, err
}

// readReportsIn reads the reports of the named ConfigMaps (names[0] is
// ReportsName, whose existence it reports), each node's newest.
func readReportsIn(ctx context.Context, client kubernetes.Interface, names []string) (map[string]NodeReport, bool, error) {
	out := map[string]NodeReport{}
	found := false
	for i, name := range names {
		cm, err := client.CoreV1().ConfigMaps(Namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, false, err
		}
		found = found || i == 0
		reports, err := parseNodeReports(cm)
		if err != nil {
			return nil, false, err
		}
		for n, r := range reports {
			if prev, ok := out[n]; !ok || prev.Time.Before(&r.Time) {
				out[n] = r
			}
		}
	}
	return out, found, nil
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
			return nil, fmt.Errorf("report %s in %s/%s: %w", k, Namespace, cm.Name, err)
		}
		out[r.Node] = r
	}
	return out, nil
}
