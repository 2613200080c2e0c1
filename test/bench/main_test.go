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
	"testing"
	"time"

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

// Sizes and windows. BENCH_NODES and BENCH_FAULT_SECONDS shrink a run
// while developing; the published figures use the defaults.
var (
	clusterNodes = envInt("BENCH_NODES", 1000)
	notReadyN    = 100
	joiningN     = 50
	faultWindow  = time.Duration(envInt("BENCH_FAULT_SECONDS", 60)) * time.Second
)

// env is shared by the scenarios: one control plane, one emulator, one Node
// tracker, and the cluster state scenarios build on.
var env struct {
	cp          *testbed.ControlPlane
	kube        kubernetes.Interface // protobuf, no client-side rate limit
	aws         *awsemu.Emulator
	ccmBinary   string
	cloudConfig string
	outDir      string // CCM logs
	nodes       *tracker

	base     []awsemu.Instance // the cluster's instances, one Node each
	joined   bool              // every base instance has an initialized Node
	notReady []string          // Nodes marked NotReady (instances running)
}

func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		os.Exit(m.Run()) // go test ./... without -bench: no control plane
	}
	code := testbed.Main(m, setup)
	printReport(os.Stdout)
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

	if env.ccmBinary, err = ccmBinary(); err != nil {
		return err
	}
	env.outDir = os.Getenv("BENCH_OUT")
	if env.outDir == "" {
		env.outDir = filepath.Join(cp.Dir, "bench")
	}
	if err := os.MkdirAll(env.outDir, 0o755); err != nil {
		return err
	}

	emu, err := awsemu.Serve(fixture())
	if err != nil {
		return fmt.Errorf("start AWS emulator: %w", err)
	}
	env.aws = emu
	env.cloudConfig = filepath.Join(cp.Dir, "cloud.conf")
	conf := fmt.Sprintf("[Global]\nRegion = %s\nVPC = %s\nKubernetesClusterID = %s\n", region, vpcID, clusterID)
	if err := os.WriteFile(env.cloudConfig, []byte(conf), 0o600); err != nil {
		return err
	}
	if env.base, err = addInstances(clusterNodes); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	env.nodes, err = startTracker(ctx, kube)
	return err
}

// ccmBinary is $AWS_CCM_BINARY or <repo>/_output/bin/aws-cloud-controller-manager.
func ccmBinary() (string, error) {
	p := os.Getenv("AWS_CCM_BINARY")
	if p == "" {
		p = filepath.Join("..", "..", "_output", "bin", "aws-cloud-controller-manager")
	}
	p, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	if st, err := os.Stat(p); err != nil || st.Mode().Perm()&0o111 == 0 {
		return "", errors.New(p + " is missing or not executable; run hack/build.sh")
	}
	return p, nil
}

// fixture is the emulator's starting state: the cluster's VPC, one public
// subnet per zone (the main route table goes through an internet gateway,
// so internet-facing load balancers find them) and the nodes' security
// group; instances are added by setup and the scenarios.
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

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// requireEnv fails a scenario that has no test bed (binaries missing).
func requireEnv(b *testing.B) {
	b.Helper()
	if env.cp == nil {
		b.Fatal("no control plane: run hack/build-testbed.sh (or make bench)")
	}
}
