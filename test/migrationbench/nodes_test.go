//go:build linux

package migrationbench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/awsccmctl/awsccmctl/internal/kubeletrun"
	"github.com/awsccmctl/awsccmctl/internal/migrate"
)

// reportRate is how many nodes finish their kubelet-external phase per
// second: BENCH_MIGRATION_REPORT_RATE, default 30 (a node runner with a
// max-unavailable of 60 whose nodes take about 2 s each: 5,000 nodes in
// under 3 minutes).
func reportRate() (float64, error) {
	v := os.Getenv("BENCH_MIGRATION_REPORT_RATE")
	if v == "" {
		return 30, nil
	}
	r, err := strconv.ParseFloat(v, 64)
	if err != nil || r <= 0 {
		return 0, fmt.Errorf("BENCH_MIGRATION_REPORT_RATE=%q: want a positive number of reports per second", v)
	}
	return r, nil
}

// kubeletReport is the report `migrate-from-intree node --phase
// kubelet-external` writes on a node whose kubelet it restarted: the
// flags file says external, the running kubelet (a new process, started
// after the edit) runs external under the Node's name and answers
// /healthz ok. What decideKubelets requires of every node.
func kubeletReport(node string, pid int) migrate.NodeReport {
	now := time.Now()
	edited := metav1.NewMicroTime(now.Add(-1500 * time.Millisecond))
	return migrate.NodeReport{
		Node: node, Phase: migrate.PhaseKubeletExternal, Time: metav1.NewMicroTime(now),
		Changed: []string{"/var/lib/kubelet/kubeadm-flags.env"},
		Kubelet: &kubeletrun.Running{PID: pid, StartTime: uint64(pid) * 977, Started: now.Add(-time.Second),
			CloudProvider: "external", HostnameOverride: node, Healthz: "ok"},
		KubeletRestarted: true, KubeletFilesCloudProvider: "external", KubeletFilesModified: &edited,
		KubeletNodeName: node,
	}
}

// playNodes writes the nodes' reports at rate per second (workers send
// them, so a slow apiserver slows the pace rather than queueing writes),
// and returns when the last was written and how long each write took.
func playNodes(ctx context.Context, nodes []string, rate float64) (time.Time, []time.Duration, error) {
	took := make([]time.Duration, len(nodes))
	start := time.Now()
	err := parallel(len(nodes), func(i int) error {
		// Node i may start at start + i/rate.
		if d := time.Until(start.Add(time.Duration(float64(i) / rate * float64(time.Second)))); d > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(d):
			}
		}
		began := time.Now()
		if _, err := migrate.WriteNodeReport(ctx, env.kube, kubeletReport(nodes[i], 20000+i)); err != nil {
			return fmt.Errorf("report of %s: %w", nodes[i], err)
		}
		took[i] = time.Since(began)
		return nil
	})
	return time.Now(), took, err
}

// latencies says the median, 99th percentile and longest of ds.
func latencies(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(p float64) time.Duration { return s[min(len(s)-1, int(p*float64(len(s))))].Round(time.Millisecond) }
	return fmt.Sprintf("p50 %s, p99 %s, max %s", at(0.5), at(0.99), s[len(s)-1].Round(time.Millisecond))
}

// heartbeats patches the Ready condition's heartbeat of perSecond Nodes
// a second, round-robin, until ctx ends: a v1.26 kubelet posts its Node's
// status every nodeStatusReportFrequency (5 minutes) when nothing
// changed, so a cluster of N Nodes sees N/300 Node writes a second,
// which a watch on Nodes receives. It returns how many it wrote.
func heartbeats(ctx context.Context, names []string, perSecond float64) int64 {
	var n int64
	if perSecond <= 0 {
		return 0
	}
	t := time.NewTicker(time.Duration(float64(time.Second) / perSecond))
	defer t.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return n
		case <-t.C:
		}
		now := time.Now().UTC().Format(time.RFC3339)
		patch := fmt.Sprintf(`{"status":{"conditions":[{"type":"Ready","lastHeartbeatTime":%q}]}}`, now)
		if _, err := env.kube.CoreV1().Nodes().Patch(ctx, names[i%len(names)], types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err == nil {
			n++
		}
	}
}

// waitStepStarted waits until the journal shows step running (the CLI
// began it) and returns when it started.
func waitStepStarted(ctx context.Context, step string) (time.Time, error) {
	store := &migrate.Store{Client: env.kube}
	for {
		j, err := store.Load(ctx)
		if err == nil {
			if r := j.Record(step); r != nil && r.State == migrate.StateRunning && r.Started != nil {
				return r.Started.Time, nil
			}
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
