package preflightcmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/internal/preflight/gather"
	"github.com/awsccmctl/awsccmctl/internal/testbed"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// The scale of cluster-mode preflight: the cluster the bench builds
// (initialised Nodes, each with a running, cluster-tagged instance in the
// emulator), seeded directly, and `preflight --cloud-routes=off -o json`
// run over it, counting what it asks the API server and AWS.

const (
	scaleClusterID = "scale"
	scaleVPC       = "vpc-0scale0000000001"
	scaleGroup     = "sg-0scale0000000001"
	scaleRegion    = "us-east-1"
	scaleSeeders   = 32
)

var scaleZones = []string{"us-east-1a", "us-east-1b", "us-east-1c"}

func scaleSubnet(z int) string { return fmt.Sprintf("subnet-0scale000000000%d", z+1) }

// scaleCluster is a seeded cluster: the emulator, the cloud config naming
// it and how many Nodes there are.
type scaleCluster struct {
	emu         *awsemu.Emulator
	cloudConfig string
	nodes       int
}

// seedScale starts an emulator with n running instances and creates one
// initialised Node per instance (providerID, the CCM's labels and
// addresses, Ready) in the shared control plane; the Nodes are deleted at
// the test's end.
func seedScale(t testing.TB, n int) *scaleCluster {
	t.Helper()
	cp := testbed.Get(t)
	tags := map[string]string{"kubernetes.io/cluster/" + scaleClusterID: "owned"}
	f := &awsemu.Fixture{
		Region: scaleRegion,
		Zones:  []awsemu.Zone{{Name: scaleZones[0], ID: "use1-az1"}, {Name: scaleZones[1], ID: "use1-az2"}, {Name: scaleZones[2], ID: "use1-az4"}},
		VPCs:   []awsemu.VPC{{ID: scaleVPC, CIDR: "10.0.0.0/16", Tags: tags}},
		Subnets: []awsemu.Subnet{
			{ID: scaleSubnet(0), VPCID: scaleVPC, AvailabilityZone: scaleZones[0], CIDR: "10.0.0.0/18", Tags: tags},
			{ID: scaleSubnet(1), VPCID: scaleVPC, AvailabilityZone: scaleZones[1], CIDR: "10.0.64.0/18", Tags: tags},
			{ID: scaleSubnet(2), VPCID: scaleVPC, AvailabilityZone: scaleZones[2], CIDR: "10.0.128.0/18", Tags: tags},
		},
		RouteTables: []awsemu.RouteTable{
			{ID: "rtb-0scale0000000001", VPCID: scaleVPC, Main: true, Routes: []awsemu.Route{{DestinationCIDR: "0.0.0.0/0", GatewayID: "igw-0scale0000000001"}}},
		},
		SecurityGroups: []awsemu.SecurityGroup{{ID: scaleGroup, Name: "scale-nodes", Description: "nodes", VPCID: scaleVPC, Tags: tags}},
	}
	emu := awsemu.StartT(t, f)
	insts := make([]awsemu.Instance, n)
	for i := range n {
		z, host := i%3, i/3+10
		ip := fmt.Sprintf("10.0.%d.%d", z*64+host/250, host%250+1)
		in := awsemu.Instance{
			ID: fmt.Sprintf("i-%017x", 0x5ca000000+i), Type: "m6i.large", SubnetID: scaleSubnet(z), PrivateIP: ip,
			ENIs:             []awsemu.ENI{{DeviceIndex: 0, PrivateIPs: []string{ip, fmt.Sprintf("10.0.%d.%d", z*64+32+host/250, host%250+1)}}},
			SecurityGroupIDs: []string{scaleGroup},
			Tags:             map[string]string{"kubernetes.io/cluster/" + scaleClusterID: "owned", "Name": fmt.Sprintf("scale-%d", i)},
		}
		if err := emu.AddInstance(in); err != nil {
			t.Fatal(err)
		}
		insts[i], _ = emu.Instance(in.ID)
	}

	cfg := rest.CopyConfig(cp.Config)
	cfg.QPS = -1
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.WarningHandler = rest.NoWarnings{}
	kube := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	start := time.Now()
	err := parallel(n, func(i int) error {
		in := insts[i]
		name := in.PrivateDNSName
		now := metav1.Now()
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
				corev1.LabelHostname: name, corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64",
				corev1.LabelInstanceTypeStable: in.Type, corev1.LabelInstanceType: in.Type,
				corev1.LabelTopologyZone: in.AvailabilityZone, corev1.LabelFailureDomainBetaZone: in.AvailabilityZone,
				corev1.LabelTopologyRegion: scaleRegion, corev1.LabelFailureDomainBetaRegion: scaleRegion,
				"topology.k8s.aws/zone-id": "use1-az1",
			}},
			Spec: corev1.NodeSpec{ProviderID: fmt.Sprintf("aws:///%s/%s", in.AvailabilityZone, in.ID)},
			Status: corev1.NodeStatus{
				Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: in.PrivateIP},
					{Type: corev1.NodeInternalDNS, Address: name}, {Type: corev1.NodeHostName, Address: name}},
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
					LastHeartbeatTime: now, LastTransitionTime: now}},
			},
		}
		created, err := kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create node %s: %w", name, err)
		}
		if len(created.Status.Addresses) == 0 {
			created.Status = node.Status
			if _, err := kube.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("node %s status: %w", name, err)
			}
		}
		return nil
	})
	t.Cleanup(func() {
		_ = parallel(n, func(i int) error {
			return kube.CoreV1().Nodes().Delete(context.Background(), insts[i].PrivateDNSName, metav1.DeleteOptions{})
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("seeded %d instances and %d Nodes in %s", n, n, time.Since(start).Round(time.Millisecond))

	cc := filepath.Join(t.TempDir(), "cloud.conf")
	conf := fmt.Sprintf("[Global]\nRegion = %s\nVPC = %s\nSubnetID = %s\nKubernetesClusterID = %s\n", scaleRegion, scaleVPC, scaleSubnet(0), scaleClusterID)
	if err := os.WriteFile(cc, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return &scaleCluster{emu: emu, cloudConfig: cc, nodes: n}
}

// parallel runs fn(0..n-1) on scaleSeeders goroutines; the first error wins.
func parallel(n int, fn func(i int) error) error {
	var next atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for range min(scaleSeeders, n) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				if err := fn(i); err != nil {
					once.Do(func() { first = err })
				}
			}
		})
	}
	wg.Wait()
	return first
}

// kubeRequest is one request preflight sent to the API server.
type kubeRequest struct {
	method, path string
	query        map[string]string
	accept       string
}

// requestCounter records preflight's API requests (ConfigFlags.WrapConfigFn).
type requestCounter struct {
	mu   sync.Mutex
	reqs []kubeRequest
}

func (c *requestCounter) wrap(cfg *rest.Config) *rest.Config {
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			q := map[string]string{}
			for k := range r.URL.Query() {
				q[k] = r.URL.Query().Get(k)
			}
			c.mu.Lock()
			c.reqs = append(c.reqs, kubeRequest{method: r.Method, path: r.URL.Path, query: q, accept: r.Header.Get("Accept")})
			c.mu.Unlock()
			return rt.RoundTrip(r)
		})
	})
	return cfg
}

func (c *requestCounter) requests() []kubeRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.reqs)
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// scaleRun is one in-process run of the command over a seeded cluster.
type scaleRun struct {
	wall     time.Duration
	report   preflight.Report
	requests []kubeRequest
	aws      map[string]int // emulator calls during the run, "service:Action"
}

// runInProcess runs `preflight --kubeconfig=... --cloud-config=...
// --cloud-routes=off -o json` through Run, as the binary does, with the
// emulator's environment, counting the API requests and AWS calls.
func (s *scaleCluster) runInProcess(t testing.TB) scaleRun {
	t.Helper()
	counter := &requestCounter{}
	kube := genericclioptions.NewConfigFlags(true)
	kubeconfig := testbed.Get(t).KubeconfigPath
	kube.KubeConfig = &kubeconfig
	kube.WrapConfigFn = counter.wrap
	before := s.emu.CallCounts()
	var out bytes.Buffer
	start := time.Now()
	err := Run(context.Background(), Options{Mode: string(preflight.ModePreInstall), FailOn: "error", AWS: true, HostNetwork: true,
		CloudConfig: s.cloudConfig, CloudRoutes: "off", Kube: kube}, preflight.FormatJSON, Streams{Out: &out, Err: &bytes.Buffer{}})
	wall := time.Since(start)
	if code := exitcode.Of(err); code > exitcode.Failed {
		t.Fatalf("preflight: exit code %d: %v", code, err)
	}
	var r preflight.Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("preflight -o json: %v\n%s", err, out.String())
	}
	calls := map[string]int{}
	for k, v := range s.emu.CallCounts() {
		if d := v - before[k]; d > 0 {
			calls[k] = d
		}
	}
	return scaleRun{wall: wall, report: r, requests: counter.requests(), aws: calls}
}

// summary renders requests as sorted "METHOD path xN", Node names folded
// into "…" (queries are left out).
func summary(reqs []kubeRequest) string {
	count := map[string]int{}
	for _, r := range reqs {
		p := r.path
		if i := strings.Index(p, "/nodes/"); i >= 0 {
			rest := p[i+len("/nodes/"):]
			if j := strings.Index(rest, "/"); j >= 0 {
				p = p[:i] + "/nodes/…" + rest[j:]
			} else {
				p = p[:i] + "/nodes/…"
			}
		}
		count[r.method+" "+p]++
	}
	return joinCounts(count, "%s x%d", ", ")
}

func awsSummary(calls map[string]int) string { return joinCounts(calls, "%s=%d", " ") }

// joinCounts renders counts in key order, each by format (key, count).
func joinCounts(counts map[string]int, format, sep string) string {
	parts := make([]string, 0, len(counts))
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf(format, k, counts[k]))
	}
	return strings.Join(parts, sep)
}

// TestPreflightRequestsBounded is the regression guard of cluster-mode
// preflight's cost, by counting rather than timing: over 1,000 initialised
// Nodes (kubelets unreachable, as in the bench) the API requests are one
// protobuf list of 500 Nodes a page, at most the 16 /configz probes of the
// kubelets, and one request for each other thing read; the AWS calls are a
// handful plus one DescribeInstances per 1,000 cluster-tagged instances.
// None grows per Node. The report is checked too, so the counts are those
// of a run that looked at every Node and instance.
func TestPreflightRequestsBounded(t *testing.T) {
	const n = 1000
	s := seedScale(t, n)
	s.emu.Env().Set(t)
	r := s.runInProcess(t)
	t.Logf("%s over %d Nodes; %d API requests: %s; AWS: %s", r.wall.Round(time.Millisecond), n, len(r.requests), summary(r.requests), awsSummary(r.aws))

	for id, want := range map[string]string{
		"nodes-provider-id":   fmt.Sprintf("(%d Nodes)", n),
		"aws-instances-exist": fmt.Sprintf("all %d instances exist", n),
		"aws-cluster-id":      fmt.Sprintf("all %d instances carry its tag", n),
	} {
		if f := findingOf(r.report, id); f.Status != preflight.StatusPass || !strings.Contains(f.Message, want) {
			t.Errorf("%s = %s: %s; want pass with %q", id, f.Status, f.Message, want)
		}
	}

	// The kubelets cannot be reached: the apiserver's own words, which it
	// writes as JSON only when asked for JSON, whatever the client's
	// protobuf preference.
	if f := findingOf(r.report, "nodes-kubelet-config"); f.Status != preflight.StatusWarn || !strings.Contains(f.Message, "error trying to reach service") {
		t.Errorf("nodes-kubelet-config = %s: %s; want warn quoting the API server's proxy error", f.Status, f.Message)
	}

	const (
		pageSize     = 500
		configzProbe = 16 // kubelets unreachable: only the probe is tried
		otherBound   = 12 // /version, one list or get of each other kind, the access review
	)
	nodePages, configz, other := 0, 0, 0
	perPath := map[string]int{}
	for _, req := range r.requests {
		switch {
		case req.method == http.MethodGet && req.path == "/api/v1/nodes":
			nodePages++
			if !strings.HasPrefix(req.accept, "application/vnd.kubernetes.protobuf") {
				t.Errorf("Node list asked for %q, want protobuf first", req.accept)
			}
		case strings.HasPrefix(req.path, "/api/v1/nodes/") && strings.HasSuffix(req.path, "/proxy/configz"):
			configz++
		case strings.HasPrefix(req.path, "/api/v1/nodes/"):
			t.Errorf("a request per Node: %s %s", req.method, req.path)
		default:
			other++
			perPath[req.method+" "+req.path]++
		}
		if _, paged := req.query["continue"]; req.method == http.MethodGet && !paged && req.query["limit"] == "" && isList(req.path) {
			t.Errorf("unpaginated list %s", req.path)
		}
	}
	if want := (n + pageSize - 1) / pageSize; nodePages != want {
		t.Errorf("%d Node list requests, want %d (pages of %d)", nodePages, want, pageSize)
	}
	if configz > configzProbe {
		t.Errorf("%d nodes/proxy/configz requests, want at most the %d of the probe", configz, configzProbe)
	}
	if other > otherBound {
		t.Errorf("%d other requests, want at most %d", other, otherBound)
	}
	for p, c := range perPath {
		if c > 1 {
			t.Errorf("%s requested %d times, want once", p, c)
		}
	}

	const awsBound = 10 // identity, IAM simulation, subnets, security groups, instance pages at 1,000
	total := 0
	for _, c := range r.aws {
		total += c
	}
	if got, want := r.aws["ec2:DescribeInstances"], (n+999)/1000; got > want {
		t.Errorf("%d DescribeInstances, want at most %d (the cluster-tagged instances, 1,000 a page)", got, want)
	}
	if total > awsBound {
		t.Errorf("%d AWS calls (%s), want at most %d", total, awsSummary(r.aws), awsBound)
	}
}

// isList says whether path is one of the collections preflight lists.
func isList(path string) bool {
	for _, p := range []string{"/api/v1/nodes", "/api/v1/pods", "/api/v1/services", "/api/v1/persistentvolumes",
		"/apis/coordination.k8s.io/v1/namespaces/kube-system/leases", "/apis/storage.k8s.io/v1/storageclasses",
		"/apis/storage.k8s.io/v1/csidrivers", "/apis/storage.k8s.io/v1/csinodes"} {
		if path == p {
			return true
		}
	}
	return false
}

func findingOf(r preflight.Report, id string) preflight.Finding {
	for _, f := range r.Findings {
		if f.ID == id {
			return f
		}
	}
	return preflight.Finding{ID: id, Message: "not in the report"}
}

// TestPreflightScaleTimed reproduces the bench's preflight scenario without
// the bench: PREFLIGHT_SCALE_NODES Nodes (unset: skipped), the command run
// PREFLIGHT_SCALE_RUNS times (default 3) in-process and, with
// AWSCCMCTL_BINARY (one path, or a list that takes turns), as each binary
// with the bench's arguments; the wall times, their medians and the
// requests are logged. PREFLIGHT_SCALE_CPUPROFILE writes a CPU profile of
// the in-process runs. Timings are logged, never asserted: the machine is
// shared.
func TestPreflightScaleTimed(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("PREFLIGHT_SCALE_NODES"))
	if n <= 0 {
		t.Skip("PREFLIGHT_SCALE_NODES is not set")
	}
	runs := 3
	if v, err := strconv.Atoi(os.Getenv("PREFLIGHT_SCALE_RUNS")); err == nil && v > 0 {
		runs = v
	}
	s := seedScale(t, n)
	s.emu.Env().Set(t)

	// Several binaries (a path list) take turns, run by run, so a
	// before/after comparison sees the same machine load.
	bins := filepath.SplitList(os.Getenv("AWSCCMCTL_BINARY"))
	walls := make([][]time.Duration, len(bins))
	for run := 1; run <= runs; run++ {
		for i, bin := range bins {
			before := apiserverRequests(t)
			calls0 := s.emu.CallCounts()
			cmd := exec.CommandContext(context.Background(), bin, "preflight", "--kubeconfig="+testbed.Get(t).KubeconfigPath, "--cloud-config="+s.cloudConfig, "--cloud-routes=off", "-o", "json")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			start := time.Now()
			err := cmd.Run()
			wall := time.Since(start)
			if code := cmd.ProcessState.ExitCode(); err != nil && code != exitcode.Failed {
				t.Fatalf("%s: %v\n%s", bin, err, stderr.String())
			}
			reqs := apiserverRequests(t).since(before)
			calls := map[string]int{}
			for k, v := range s.emu.CallCounts() {
				if d := v - calls0[k]; d > 0 {
					calls[k] = d
				}
			}
			walls[i] = append(walls[i], wall)
			t.Logf("%s run %d over %d Nodes: %s; apiserver requests meanwhile (apiserver_request_total, every client, as the bench counts): %.0f: %s; AWS: %s",
				bin, run, n, wall.Round(time.Millisecond), reqs.total(), reqs, awsSummary(calls))
		}
	}
	for i, bin := range bins {
		t.Logf("%s: median of %d runs over %d Nodes: %s", bin, runs, n, median(walls[i]).Round(time.Millisecond))
	}

	if p := os.Getenv("PREFLIGHT_SCALE_CPUPROFILE"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			t.Fatal(err)
		}
		defer func() {
			pprof.StopCPUProfile()
			_ = f.Close()
		}()
	}
	var inProcess []time.Duration
	for run := 1; run <= runs; run++ {
		r := s.runInProcess(t)
		inProcess = append(inProcess, r.wall)
		t.Logf("in-process run %d over %d Nodes: %s, %d pass %d warn %d fail %d skip; %d API requests: %s; AWS: %s",
			run, n, r.wall.Round(time.Millisecond), r.report.Summary.Pass, r.report.Summary.Warn, r.report.Summary.Fail, r.report.Summary.Skip,
			len(r.requests), summary(r.requests), awsSummary(r.aws))
	}
	t.Logf("in-process: median of %d runs over %d Nodes: %s", runs, n, median(inProcess).Round(time.Millisecond))

	// Where one run's time goes: reading the cluster and AWS clients
	// before the checks (gather), then each check.
	kube := genericclioptions.NewConfigFlags(true)
	kubeconfig := testbed.Get(t).KubeconfigPath
	kube.KubeConfig = &kubeconfig
	o := Options{FailOn: "error", AWS: true, HostNetwork: true, CloudConfig: s.cloudConfig, CloudRoutes: "off", Kube: kube}
	start := time.Now()
	rep, err := gather.Collect(context.Background(), o.gatherOptions(preflight.ModePreInstall))
	wall := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	var checks time.Duration
	var parts []string
	for _, f := range rep.Findings {
		checks += f.Duration
		if f.Duration >= time.Millisecond {
			parts = append(parts, fmt.Sprintf("%s %s", f.ID, f.Duration.Round(time.Millisecond)))
		}
	}
	t.Logf("timeline: %s in all; before the checks %s; checks %s: %s", wall.Round(time.Millisecond), (wall - checks).Round(time.Millisecond),
		checks.Round(time.Millisecond), strings.Join(parts, ", "))
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// metricCounts are apiserver_request_total by verb and resource.
type metricCounts map[string]float64

func apiserverRequests(t testing.TB) metricCounts {
	t.Helper()
	raw, err := kubernetes.NewForConfigOrDie(testbed.Get(t).Config).Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("apiserver /metrics: %v", err)
	}
	out := metricCounts{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		end := strings.LastIndex(line, "}")
		v, err := strconv.ParseFloat(strings.TrimSpace(line[end+1:]), 64)
		if err != nil {
			continue
		}
		labels := map[string]string{}
		for _, kv := range strings.Split(line[len("apiserver_request_total{"):end], ",") {
			k, val, _ := strings.Cut(kv, "=")
			labels[k] = strings.Trim(val, `"`)
		}
		key := labels["verb"] + " " + labels["resource"]
		if labels["subresource"] != "" {
			key += "/" + labels["subresource"]
		}
		out[key] += v
	}
	return out
}

func (m metricCounts) since(before metricCounts) metricCounts {
	out := metricCounts{}
	for k, v := range m {
		if d := v - before[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

func (m metricCounts) total() float64 {
	var s float64
	for _, v := range m {
		s += v
	}
	return s
}

func (m metricCounts) String() string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%.0f", k, m[k])
	}
	return strings.Join(parts, " ")
}
