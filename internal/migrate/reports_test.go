package migrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/awsccmctl/awsccmctl/internal/kubeletrun"
)

// configMapDataLimit is the apiserver's bound on a ConfigMap's data.
const configMapDataLimit = 1 << 20

// TestReportShardsHoldLargeClusters: a kubelet-external report as the node
// step writes it, for every node of 5,000 (Kubernetes' largest supported
// cluster) and 12,000 nodes named as EC2 names them, fills no ConfigMap of
// the reports past the apiserver's 1 MiB (at 5,000, not past half of it);
// one ConfigMap alone overflows at 5,000.
func TestReportShardsHoldLargeClusters(t *testing.T) {
	for _, nodes := range []int{5000, 12000} {
		perShard := map[string]int{}
		total := 0
		for i := range nodes {
			name := fmt.Sprintf("ip-10-%d-%d-%d.ec2.internal", i/65536, (i/256)%256, i%256)
			b, err := json.Marshal(fullReport(name))
			if err != nil {
				t.Fatal(err)
			}
			size := len(reportKey(name)) + len(b)
			perShard[reportShardOf(name)] += size
			total += size
		}
		largest := 0
		for _, n := range perShard {
			largest = max(largest, n)
		}
		t.Logf("%d nodes: %d bytes of reports; the largest of %d ConfigMaps holds %d", nodes, total, len(perShard), largest)
		if nodes == 5000 && largest >= configMapDataLimit/2 {
			t.Errorf("5,000 nodes: a reports ConfigMap holds %d bytes, over half the apiserver's %d", largest, configMapDataLimit)
		}
		if largest >= configMapDataLimit {
			t.Errorf("%d nodes: a reports ConfigMap holds %d bytes, over the apiserver's %d", nodes, largest, configMapDataLimit)
		}
		if nodes == 5000 && total < configMapDataLimit {
			t.Errorf("5,000 reports take %d bytes: the case no longer needs shards, revisit", total)
		}
	}
}

// fullReport is a kubelet-external report with every field the node step
// fills.
func fullReport(node string) NodeReport {
	now := time.Date(2026, 11, 28, 2, 0, 0, 123456000, time.UTC)
	m := metav1.NewMicroTime(now)
	return NodeReport{Node: node, Phase: PhaseKubeletExternal, Time: m, Changed: []string{"/var/lib/kubelet/kubeadm-flags.env"},
		Kubelet:          &kubeletrun.Running{PID: 123456, StartTime: 1234567890, Started: now, CloudProvider: providerExternal, HostnameOverride: node, Healthz: "ok"},
		KubeletRestarted: true, KubeletFilesCloudProvider: providerExternal, KubeletFilesModified: &m, KubeletNodeName: node}
}

// TestReportsOfAnOlderLayout: where only ReportsName exists (made by a
// version before the shards), a node's report goes there; a node with a
// report in both is read at its newest.
func TestReportsOfAnOlderLayout(t *testing.T) {
	ctx := context.Background()
	node := "ip-10-0-1-10.ec2.internal"
	for i := 11; reportShardOf(node) == ReportsName; i++ {
		node = fmt.Sprintf("ip-10-0-1-%d.ec2.internal", i)
	}
	cs := fake.NewClientset(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ReportsName, Namespace: Namespace}})
	// The nodes' Role of that version names ReportsName alone.
	oldRole := true
	cs.PrependReactor("patch", "configmaps", func(a k8stesting.Action) (bool, runtime.Object, error) {
		name := a.(k8stesting.PatchAction).GetName()
		if oldRole && name != ReportsName {
			return true, nil, apierrors.NewForbidden(corev1.Resource("configmaps"), name, errors.New("not in the Role's resourceNames"))
		}
		return false, nil, nil
	})
	old := fullReport(node)
	old.Phase = PhaseRestore
	if _, err := WriteNodeReport(ctx, cs, old); err != nil {
		t.Fatalf("write with ReportsName alone: %v", err)
	}
	cm, err := cs.CoreV1().ConfigMaps(Namespace).Get(ctx, ReportsName, metav1.GetOptions{})
	if err != nil || cm.Data[reportKey(node)] == "" {
		t.Fatalf("the report is not in %s: %v", ReportsName, err)
	}
	// The shards appear (apply of this version); a newer report goes to
	// the node's own and wins over the old one.
	oldRole = false
	for _, name := range ReportConfigMaps()[1:] {
		if _, err := cs.CoreV1().ConfigMaps(Namespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	newer := fullReport(node)
	newer.Time = metav1.NewMicroTime(old.Time.Add(time.Minute))
	if _, err := WriteNodeReport(ctx, cs, newer); err != nil {
		t.Fatal(err)
	}
	got, found, err := readNodeReportsFound(ctx, cs)
	if err != nil || !found || got[node].Phase != PhaseKubeletExternal {
		t.Errorf("read %+v (found %v, %v), want the newer kubelet-external report", got[node], found, err)
	}
	if err := cs.CoreV1().ConfigMaps(Namespace).Delete(ctx, ReportsName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, found, err := readNodeReportsFound(ctx, cs); err != nil || found {
		t.Errorf("without %s: found %v (%v), want not found (finalize removed them)", ReportsName, found, err)
	}
}

// TestGatesReadTheirNodesShards: a gate over one node reads its node's
// ConfigMap and ReportsName, not all eight, and finds its report.
func TestGatesReadTheirNodesShards(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset()
	for _, name := range ReportConfigMaps() {
		if _, err := cs.CoreV1().ConfigMaps(Namespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	node := "ip-10-0-1-10.ec2.internal"
	if _, err := WriteNodeReport(ctx, cs, fullReport(node)); err != nil {
		t.Fatal(err)
	}
	cs.ClearActions()
	got, err := ReadNodeReportsOf(ctx, cs, []string{node})
	if err != nil || got[node].Phase != PhaseKubeletExternal {
		t.Fatalf("read %v (%v), want the node's report", got, err)
	}
	if n := len(cs.Actions()); n > 2 {
		t.Errorf("%d reads for one node's report, want at most 2 (its ConfigMap and %s)", n, ReportsName)
	}
}
