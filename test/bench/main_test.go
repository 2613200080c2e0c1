//go:build linux

package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/awsccmctl/awsccmctl/internal/testbed"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

const (
	clusterID = "bench"
	vpcID     = "vpc-0bench00000000001"
	region    = "us-east-1"
	// nodeGroupID is the cluster-tagged security group of every instance,
	// where load balancers write their node rules.
	nodeGroupID = "sg-0bench000000000001"
)

var subnets = []string{"subnet-0bench00000000001", "subnet-0bench00000000002", "subnet-0bench00000000003"}

// Sizes and windows (plan_test.go says which scenarios run at which size).
// BENCH_SIZES (or BENCH_NODES, one size) and BENCH_FAULT_SECONDS shrink a
// run while developing; the published figures use the defaults.
var (
	sizes       = envInts("BENCH_SIZES", []int{envInt("BENCH_NODES", 1000)})
	notReadyN   = 100
	joiningN    = 50
	faultWindow = time.Duration(envInt("BENCH_FAULT_SECONDS", 60)) * time.Second
)

// env is shared by the scenarios: one control plane, one Node tracker, the
// binaries, and the state of the current group (one emulator, the
// cluster's instances and what scenarios built on them).
var env struct {
	cp            *testbed.ControlPlane
	kube          kubernetes.Interface // protobuf, no client-side rate limit
	metricsClient rest.Interface       // the apiserver's /metrics
	binaries      []binary             // this CCM, then upstream's if given
	cloudConfig   string
	outDir        string // CCM logs, results.json, table.md
	nodes         *tracker

	group  group             // the group the state below belongs to
	aws    *awsemu.Emulator  // one per group, seeded from fixture()
	base   []awsemu.Instance // the cluster's instances, one Node each
	joined bool              // every base instance has an initialized Node
	// nodesWrittenBy is the binary that last ran on the joined Nodes: it
	// left their addresses as it writes them.
	nodesWrittenBy string
	notReady       []string          // Nodes marked NotReady (instances running)
	joiners        []awsemu.Instance // the throttling scenario's joining instances
}

func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		os.Exit(m.Run()) // go test ./... without -bench: no control plane
	}
	code := testbed.Main(m, setup)
	if err := writeReport(os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "bench: write report: %v\n", err)
		code = 1
	}
	os.Exit(code)
}

func setup(cp *testbed.ControlPlane) error {
	env.cp = cp
	cfg := rest.CopyConfig(cp.Config)
	cfg.QPS = -1 // no client-side limit: kubelets do not share one
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	env.kube = kube
	admin, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		return err
	}
	env.metricsClient = admin.Discovery().RESTClient()

	if env.binaries, err = binaries(); err != nil {
		return err
	}
	env.outDir = os.Getenv("BENCH_OUT")
	if env.outDir == "" {
		env.outDir = filepath.Join(cp.Dir, "bench")
	}
	if err := os.MkdirAll(env.outDir, 0o755); err != nil {
		return err
	}
	env.cloudConfig = filepath.Join(cp.Dir, "cloud.conf")
	// SubnetID: upstream, off EC2, reads its own instance from IMDS unless
	// the cloud config names VPC, SubnetID (or RoleARN) and the cluster ID;
	// this CCM takes it too, as a fallback subnet for load balancers (the
	// bench's subnets are tagged, so it is never used).
	conf := fmt.Sprintf("[Global]\nRegion = %s\nVPC = %s\nSubnetID = %s\nKubernetesClusterID = %s\n", region, vpcID, subnets[0], clusterID)
	if err := os.WriteFile(env.cloudConfig, []byte(conf), 0o600); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	env.nodes, err = startTracker(ctx, kube)
	return err
}

// binary is one aws-cloud-controller-manager build the scenarios run.
type binary struct {
	name string // "this" or "upstream": results.json's binary
	path string
}

const (
	thisBinary     = "this"
	upstreamBinary = "upstream"
)

// binaries are $AWS_CCM_BINARY (default <repo>/_output/bin/...) and, if
// set, $AWS_CCM_UPSTREAM_BINARY (hack/build-upstream.sh builds it).
func binaries() ([]binary, error) {
	this := os.Getenv("AWS_CCM_BINARY")
	if this == "" {
		this = filepath.Join("..", "..", "_output", "bin", "aws-cloud-controller-manager")
	}
	out := []binary{{name: thisBinary, path: this}}
	if up := os.Getenv("AWS_CCM_UPSTREAM_BINARY"); up != "" {
		out = append(out, binary{name: upstreamBinary, path: up})
	}
	for i := range out {
		p, err := filepath.Abs(out[i].path)
		if err != nil {
			return nil, err
		}
		if st, err := os.Stat(p); err != nil || st.Mode().Perm()&0o111 == 0 {
			return nil, errors.New(p + " is missing or not executable; run hack/build.sh (hack/build-upstream.sh for upstream's)")
		}
		out[i].path = p
	}
	return out, nil
}

// hasUpstream says whether upstream's binary runs in this run.
func hasUpstream() bool { return len(env.binaries) > 1 }

// fixture is the emulator's starting state: the cluster's VPC, one public
// subnet per zone (the main route table goes through an internet gateway,
// so internet-facing load balancers find them) and the nodes' security
// group; instances are added per group and by the scenarios.
func fixture() *awsemu.Fixture {
	tags := map[string]string{"kubernetes.io/cluster/" + clusterID: "owned"}
	return &awsemu.Fixture{
		Region: region,
		Zones:  []awsemu.Zone{{Name: "us-east-1a", ID: "use1-az1"}, {Name: "us-east-1b", ID: "use1-az2"}, {Name: "us-east-1c", ID: "use1-az4"}},
		VPCs:   []awsemu.VPC{{ID: vpcID, CIDR: "10.0.0.0/16", Tags: tags}},
		Subnets: []awsemu.Subnet{
			{ID: subnets[0], VPCID: vpcID, AvailabilityZone: "us-east-1a", CIDR: "10.0.0.0/18", Tags: tags},
			{ID: subnets[1], VPCID: vpcID, AvailabilityZone: "us-east-1b", CIDR: "10.0.64.0/18", Tags: tags},
			{ID: subnets[2], VPCID: vpcID, AvailabilityZone: "us-east-1c", CIDR: "10.0.128.0/18", Tags: tags},
		},
		RouteTables: []awsemu.RouteTable{
			{ID: "rtb-0bench000000000001", VPCID: vpcID, Main: true, Routes: []awsemu.Route{{DestinationCIDR: "0.0.0.0/0", GatewayID: "igw-0bench000000000001"}}},
		},
		SecurityGroups: []awsemu.SecurityGroup{
			{ID: nodeGroupID, Name: "bench-nodes", Description: "nodes", VPCID: vpcID, Tags: tags},
		},
	}
}

// ensureGroup gives a group's scenarios a fresh state: no Nodes, no bench
// Services or Events, and a new emulator holding only the fixture and n
// instances. Nothing happens while the group stays the same.
func ensureGroup(b *testing.B, g group) {
	b.Helper()
	requireEnv(b)
	if env.group == g && env.aws != nil {
		return
	}
	start := time.Now()
	ctx := context.Background()
	list, err := env.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		b.Fatal(err)
	}
	names := make([]string, len(list.Items))
	for i, n := range list.Items {
		names[i] = n.Name
	}
	if err := deleteNodes(ctx, names); err != nil {
		b.Fatal(err)
	}
	clbs, nlbs := lbServiceNames()
	deleteServices(ctx, append(clbs, nlbs...))
	// The Nodes' Events (one or more per join and binary) only cost etcd.
	if err := env.kube.CoreV1().Events("default").DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		b.Fatal(err)
	}
	if env.aws != nil {
		env.aws.Close()
	}
	emu, err := awsemu.Serve(fixture())
	if err != nil {
		b.Fatalf("start AWS emulator: %v", err)
	}
	env.aws, env.group = emu, g
	env.joined, env.notReady, env.joiners, env.nodesWrittenBy = false, nil, nil, ""
	instanceSeq = 0
	if env.base, err = addInstances(g.nodes); err != nil {
		b.Fatal(err)
	}
	b.Logf("group %s: %d Nodes deleted, a new emulator with %d instances, in %s", g, len(names), g.nodes, time.Since(start).Round(time.Millisecond))
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// envInts reads a comma-separated list of positive integers ("100,1000").
func envInts(name string, def []int) []int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			fmt.Fprintf(os.Stderr, "bench: %s=%q: %q is not a positive integer; using %v\n", name, v, f, def)
			return def
		}
		out = append(out, n)
	}
	return out
}

// requireEnv fails a scenario that has no test bed (binaries missing).
func requireEnv(b *testing.B) {
	b.Helper()
	if env.cp == nil {
		b.Fatal("no control plane: run hack/build-testbed.sh (or make bench)")
	}
}
