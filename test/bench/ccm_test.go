//go:build linux

package bench

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/awsccmctl/awsccmctl/internal/childproc"
)

// sizingFlags size the CCM for a 1,000-node cluster, as the rendered
// install must (targets.md): the defaults (1 sync worker, QPS 20 / burst 30)
// bound the join rate at two writes per initialized node.
var sizingFlags = []string{"--concurrent-node-syncs=50", "--kube-api-qps=500", "--kube-api-burst=1000"}

// ccm is one aws-cloud-controller-manager subprocess.
type ccm struct {
	scenario string
	cmd      *exec.Cmd
	metrics  string // https URL of /metrics
	logPath  string
	log      *logScan
	exited   chan struct{}
	stopOnce sync.Once
	peakMiB  float64
	anonMiB  float64 // RssAnon when stopped: heap, stacks, runtime
	fileMiB  float64 // RssFile when stopped: the binary's mapped pages
}

var leaseSeq int

// startCCM runs the binary with production defaults plus sizingFlags and
// extra (each deviation must be explained by the caller), waits until it
// holds its own leader lease, and kills it when the benchmark ends.
func startCCM(b *testing.B, scenario string, extra ...string) *ccm {
	b.Helper()
	requireEnv(b)
	port, err := childproc.FreePort()
	if err != nil {
		b.Fatal(err)
	}
	leaseSeq++
	lease := fmt.Sprintf("bench-%s-%d", scenario, leaseSeq) // a fresh lease: no wait for a killed holder's to expire
	args := []string{
		"--kubeconfig=" + env.cp.KubeconfigPath,
		"--cloud-provider=aws",
		"--cloud-config=" + env.cloudConfig,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
		"--leader-elect-resource-name=" + lease,
		// Explicit, as install renders it: with routes on (the binary's
		// default) the CCM needs --cluster-cidr; the route scenario turns
		// them on.
		"--configure-cloud-routes=false",
		"-v=2", // the status loop logs one line per pass at V(2)
	}
	args = append(append(args, sizingFlags...), extra...)
	c := &ccm{scenario: scenario, metrics: fmt.Sprintf("https://127.0.0.1:%d/metrics", port), exited: make(chan struct{})}
	c.logPath = filepath.Join(env.outDir, scenario+"-ccm.log")
	f, err := os.Create(c.logPath)
	if err != nil {
		b.Fatal(err)
	}
	c.log = &logScan{w: f}
	c.cmd = exec.Command(env.ccmBinary, args...)
	c.cmd.Env = append(os.Environ(), env.aws.Env().List()...) // the emulator off EC2; nothing of the caller's AWS configuration
	c.cmd.Stdout, c.cmd.Stderr = c.log, c.log
	if err := childproc.Start(c.cmd); err != nil { // own process group; SIGKILLed if the test binary dies
		b.Fatalf("start CCM: %v", err)
	}
	go func() { _ = c.cmd.Wait(); f.Close(); close(c.exited) }()
	b.Cleanup(c.stop)
	b.Logf("%s: CCM pid %d, flags beyond production defaults: %s (log %s)", scenario, c.cmd.Process.Pid, strings.Join(append(append([]string{}, sizingFlags...), extra...), " "), c.logPath)

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	err = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		select {
		case <-c.exited:
			return false, fmt.Errorf("CCM exited: %s", c.cmd.ProcessState)
		default:
		}
		l, err := env.kube.CoordinationV1().Leases("kube-system").Get(ctx, lease, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "", nil
	})
	if err != nil {
		b.Fatalf("%s: CCM did not take its lease: %v; tail of %s:\n%s", scenario, err, c.logPath, childproc.LogTail(c.logPath, 3000))
	}
	return c
}

// stop records the process's peak RSS (VmHWM) and kills its process group.
func (c *ccm) stop() {
	c.stopOnce.Do(func() {
		select {
		case <-c.exited:
		default:
			pid := c.cmd.Process.Pid
			if kb, err := procStatusKB(pid, "VmHWM"); err == nil {
				c.peakMiB = float64(kb) / 1024
				anon, _ := procStatusKB(pid, "RssAnon")
				file, _ := procStatusKB(pid, "RssFile")
				c.anonMiB, c.fileMiB = float64(anon)/1024, float64(file)/1024
				recordRSS(c.scenario, c.peakMiB, c.anonMiB, c.fileMiB)
			}
			_ = childproc.SignalGroup(c.cmd.Process, syscall.SIGKILL)
		}
		select {
		case <-c.exited:
		case <-time.After(10 * time.Second):
		}
	})
}

// procStatusKB reads a "kB" field of /proc/<pid>/status.
func procStatusKB(pid int, field string) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// scrapeClient keeps its connections: the lifecycle scenario polls often.
var scrapeClient = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}

// scrape sums every series of each named metric on the CCM's /metrics.
func (c *ccm) scrape(names ...string) (map[string]float64, error) {
	resp, err := scrapeClient.Get(c.metrics)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", c.metrics, resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		for _, n := range names {
			if rest, ok := strings.CutPrefix(line, n); ok && (strings.HasPrefix(rest, " ") || strings.HasPrefix(rest, "{")) {
				fields := strings.Fields(line)
				if v, err := strconv.ParseFloat(fields[len(fields)-1], 64); err == nil {
					out[n] += v
				}
			}
		}
	}
	return out, sc.Err()
}

// statusPassRE matches the node controller's per-pass line of the status loop.
var statusPassRE = regexp.MustCompile(`Update (\d+) nodes status took ([0-9.]+[a-zµ]+)`)

// logScan writes the CCM's output to a file and notes the status passes.
type logScan struct {
	w       io.Writer
	mu      sync.Mutex
	partial []byte
	passes  []time.Duration // duration of each status pass, in order
}

func (l *logScan) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		if m := statusPassRE.FindSubmatch(l.partial[:i]); m != nil {
			d, _ := time.ParseDuration(string(m[2]))
			l.passes = append(l.passes, d)
		}
		l.partial = l.partial[i+1:]
	}
	l.mu.Unlock()
	return l.w.Write(p)
}

// statusPasses returns the durations of the status passes logged so far.
func (c *ccm) statusPasses() []time.Duration {
	c.log.mu.Lock()
	defer c.log.mu.Unlock()
	return append([]time.Duration(nil), c.log.passes...)
}

// waitStatusPasses waits until n status passes have been logged.
func (c *ccm) waitStatusPasses(b *testing.B, n int, timeout time.Duration) {
	b.Helper()
	waitUntil(b, timeout, fmt.Sprintf("%d status passes", n), func() bool { return len(c.statusPasses()) >= n })
}

// lifecycle returns the node lifecycle controller's pass count and the
// seconds those passes took (its monitor_nodes_duration_seconds histogram).
func (c *ccm) lifecycle(b *testing.B) (passes, seconds float64) {
	b.Helper()
	const h = "cloud_node_lifecycle_controller_monitor_nodes_duration_seconds"
	m, err := c.scrape(h+"_count", h+"_sum")
	if err != nil {
		b.Fatalf("scrape CCM metrics: %v", err)
	}
	return m[h+"_count"], m[h+"_sum"]
}

// nextLifecyclePass waits until the lifecycle controller finishes a pass
// and returns the pass count, the seconds the passes took, and when.
func (c *ccm) nextLifecyclePass(b *testing.B) (passes, seconds float64, at time.Time) {
	b.Helper()
	p0, _ := c.lifecycle(b)
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if passes, seconds = c.lifecycle(b); passes > p0 {
			return passes, seconds, time.Now()
		}
	}
	b.Fatal("no lifecycle pass within a minute")
	return 0, 0, time.Time{}
}

// throttles is the CCM's own count of throttled AWS attempts.
func (c *ccm) throttles(b *testing.B) float64 {
	b.Helper()
	m, err := c.scrape("aws_ccm_api_throttles_total")
	if err != nil {
		b.Fatalf("scrape CCM metrics: %v", err)
	}
	return m["aws_ccm_api_throttles_total"]
}
