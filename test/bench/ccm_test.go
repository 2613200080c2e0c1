//go:build linux

package bench

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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

// ccm is one aws-cloud-controller-manager subprocess.
type ccm struct {
	name     string // group, scenario and binary, for logs
	cmd      *exec.Cmd
	metrics  string // https URL of /metrics
	logPath  string
	log      *logScan
	exited   chan struct{}
	stopOnce sync.Once
	sampling chan struct{} // closed to stop the memory sampler
	sampled  chan struct{} // closed when the sampler has stopped

	mu      sync.Mutex
	peakMiB float64 // VmHWM just before it was killed
	anonMiB float64 // largest RssAnon sampled: heap, stacks, runtime
	fileMiB float64 // largest RssFile sampled: the binary's mapped pages
}

// ccmArgs are a CCM's flags beyond the ones every CCM gets.
type ccmArgs struct {
	// suffix tells apart several processes of one run ("restart").
	suffix string
	// args: scenario flags both binaries get.
	args []string
	// thisOnly: flags only this CCM has; upstream runs without them (the
	// caller notes it).
	thisOnly []string
}

var leaseSeq int

// memSampleEvery is how often a CCM's RssAnon and RssFile are read.
const memSampleEvery = 250 * time.Millisecond

// startCCM runs r's binary with production defaults plus the group's
// sizing flags and a's flags (each deviation must be explained by the
// caller), waits until it holds its own leader lease, and kills it when the
// benchmark ends.
func startCCM(b *testing.B, r *result, a ccmArgs) *ccm {
	b.Helper()
	requireEnv(b)
	port, err := childproc.FreePort(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	leaseSeq++
	name := fmt.Sprintf("%d-%s-%s-%s", r.group.nodes, r.group.flags, r.scenario, r.binary)
	if a.suffix != "" {
		name += "-" + a.suffix
	}
	lease := fmt.Sprintf("bench-%d", leaseSeq) // a fresh lease: no wait for a killed holder's to expire
	args := []string{
		"--kubeconfig=" + env.cp.KubeconfigPath,
		"--cloud-provider=aws",
		"--cloud-config=" + env.cloudConfig,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
		"--leader-elect-resource-name=" + lease,
		// Explicit, as install renders it: with routes on (the binary's
		// default) both CCMs need --cluster-cidr (upstream exits "invalid
		// CIDR[0]"); the route scenario turns them on.
		"--configure-cloud-routes=false",
		"-v=2", // the status loop logs one line per pass at V(2)
	}
	extra := append(append([]string{}, r.group.sizingArgs()...), a.args...)
	if r.binary == thisBinary {
		extra = append(extra, a.thisOnly...)
	}
	args = append(args, extra...)
	c := &ccm{name: name, metrics: fmt.Sprintf("https://127.0.0.1:%d/metrics", port), exited: make(chan struct{}),
		sampling: make(chan struct{}), sampled: make(chan struct{})}
	c.logPath = filepath.Join(env.outDir, name+"-ccm.log")
	f, err := os.Create(c.logPath)
	if err != nil {
		b.Fatal(err)
	}
	c.log = &logScan{w: f}
	if err := dropFromPageCache(r.bin.path); err != nil {
		b.Fatal(err) // RssFile would not be comparable
	}
	c.cmd = exec.CommandContext(context.Background(), r.bin.path, args...)
	c.cmd.Env = append(os.Environ(), env.aws.Env().List()...) // the emulator off EC2; nothing of the caller's AWS configuration
	c.cmd.Stdout, c.cmd.Stderr = c.log, c.log
	if err := childproc.Start(c.cmd); err != nil { // own process group; SIGKILLed if the test binary dies
		b.Fatalf("start CCM: %v", err)
	}
	go func() { _ = c.cmd.Wait(); _ = f.Close(); close(c.exited) }()
	go c.sample()
	b.Cleanup(c.stop)
	b.Logf("%s: CCM pid %d, flags beyond production defaults: %s (log %s)", name, c.cmd.Process.Pid, strings.Join(extra, " "), c.logPath)

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
		b.Fatalf("%s: CCM did not take its lease: %v; tail of %s:\n%s", name, err, c.logPath, childproc.LogTail(c.logPath, 3000))
	}
	return c
}

// settleNodes, when the joined Nodes were last written by the other
// binary, runs r's binary once, unmeasured, until its first status pass
// has ended. The two write Node addresses differently (upstream lists every
// private IPv4 address of an interface, the VPC CNI's secondary ones too;
// this CCM only the primary), so without this the binary that runs second
// would rewrite every Node in its measured run, and its memory and first
// pass would pay for the run order. The note keeps what the takeover cost.
func settleNodes(b *testing.B, r *result) {
	b.Helper()
	prev := env.nodesWrittenBy
	if !env.joined || prev == r.binary {
		return
	}
	req0 := apiserverRequests(b)
	c := startCCM(b, r, ccmArgs{suffix: "settle"})
	c.waitStatusPasses(b, 1, passTimeout(len(env.base)))
	c.stop()
	writes := apiRequests{}
	for k, v := range req0.since(b) {
		if verb, _, _ := strings.Cut(k, " "); verb != "GET" && verb != "LIST" && verb != "WATCH" {
			writes[k] = v
		}
	}
	by := map[string]string{thisBinary: "this CCM", upstreamBinary: "upstream's CCM"}[prev]
	r.note(b, "the Nodes were last written by %s: this binary first ran once, not measured, until its first status pass ended (%s; kube-API writes from its start: %s), so that the measured process starts from the Nodes as it leaves them",
		by, c.statusPasses()[0].Round(time.Millisecond), writes)
	env.nodesWrittenBy = r.binary
}

// sample keeps the largest RssAnon and RssFile until stop.
func (c *ccm) sample() {
	defer close(c.sampled)
	t := time.NewTicker(memSampleEvery)
	defer t.Stop()
	for {
		c.readMem(false)
		select {
		case <-c.sampling:
			return
		case <-c.exited:
			return
		case <-t.C:
		}
	}
}

// readMem reads the process's RssAnon and RssFile (and VmHWM if peak).
func (c *ccm) readMem(peak bool) {
	pid := c.cmd.Process.Pid
	anon, errA := procStatusKB(pid, "RssAnon")
	file, errF := procStatusKB(pid, "RssFile")
	c.mu.Lock()
	defer c.mu.Unlock()
	if errA == nil && errF == nil {
		c.anonMiB = max(c.anonMiB, float64(anon)/1024)
		c.fileMiB = max(c.fileMiB, float64(file)/1024)
	}
	if peak {
		if kb, err := procStatusKB(pid, "VmHWM"); err == nil {
			c.peakMiB = float64(kb) / 1024
		}
	}
}

// stop records the process's peak RSS (VmHWM) and kills its process group.
func (c *ccm) stop() {
	c.stopOnce.Do(func() {
		close(c.sampling)
		<-c.sampled
		select {
		case <-c.exited:
		default:
			c.readMem(true)
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
var scrapeClient = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // G402: the bench's own CCM on loopback, self-signed

// scrape sums every series of each named metric on the CCM's /metrics.
func (c *ccm) scrape(names ...string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, c.metrics, nil)
	if err != nil {
		return nil, err
	}
	resp, err := scrapeClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", c.metrics, resp.Status)
	}
	return sumMetrics(resp.Body, names...)
}

// sumMetrics sums every series of each named metric of a Prometheus text
// exposition.
func sumMetrics(r io.Reader, names ...string) (map[string]float64, error) {
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
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

// apiRequests is a snapshot of the apiserver's apiserver_request_total by
// verb and resource ("PATCH nodes/status").
type apiRequests map[string]float64

// apiserverRequests reads apiserver_request_total from the apiserver's
// /metrics. The apiserver cannot tell the CCM from the bench (both use
// the admin's certificate) and has no user-agent label, so callers
// subtract what the bench sent; the apiserver's own background requests
// (a few per 10 s) stay in.
func apiserverRequests(b *testing.B) apiRequests {
	b.Helper()
	raw, err := env.metricsClient.Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		b.Fatalf("apiserver /metrics: %v", err)
	}
	out := apiRequests{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, "apiserver_request_total{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			continue
		}
		l := map[string]string{}
		for _, kv := range strings.Split(labels, ",") {
			if k, val, ok := strings.Cut(kv, "="); ok {
				l[k] = strings.Trim(val, `"`)
			}
		}
		key := l["verb"] + " " + l["resource"]
		switch {
		case l["resource"] == "": // non-resource: the subresource label holds the path
			key = l["verb"] + " " + l["subresource"]
		case l["subresource"] != "":
			key += "/" + l["subresource"]
		}
		out[key] += v
	}
	return out
}

// since returns the requests served after a (the apiserver does not count
// the scrapes of /metrics).
func (a apiRequests) since(b *testing.B) apiRequests {
	b.Helper()
	now := apiserverRequests(b)
	out := apiRequests{}
	for k, v := range now {
		if d := v - a[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

func (a apiRequests) total() float64 {
	var n float64
	for _, v := range a {
		n += v
	}
	return n
}

func (a apiRequests) String() string {
	if len(a) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(a)) {
		parts = append(parts, fmt.Sprintf("%s=%.0f", k, a[k]))
	}
	return strings.Join(parts, " ")
}

// statusPassRE matches the node controller's per-pass line of the status
// loop (k8s.io/cloud-provider's, in both binaries).
// The duration is Go's: "812.5ms", or "1m0.5s" past a minute.
var statusPassRE = regexp.MustCompile(`Update (\d+) nodes status took ((?:[0-9.]+[a-zµ]+)+)`)

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
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if passes, seconds = c.lifecycle(b); passes > p0 {
			return passes, seconds, time.Now()
		}
	}
	b.Fatal("no lifecycle pass within 2 minutes")
	return 0, 0, time.Time{}
}
