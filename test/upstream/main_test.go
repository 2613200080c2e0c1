package upstream

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/childproc"
	"github.com/awsccmctl/awsccmctl/internal/testbed"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

const (
	clusterID = "upstream"
	vpcID     = "vpc-0up0000000000001"
	subnetID  = "subnet-0up00000000000001"
	region    = "us-east-1"
)

var env struct {
	cp       *testbed.ControlPlane
	kube     kubernetes.Interface
	aws      *awsemu.Emulator
	this     string // this CCM's binary, built from the tree
	upstream string // upstream's binary; empty: the tests skip
}

func TestMain(m *testing.M) {
	os.Exit(testbed.Main(m, setup))
}

func setup(cp *testbed.ControlPlane) error {
	env.cp = cp
	kube, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		return err
	}
	env.kube = kube
	if env.aws, err = awsemu.Serve(fixture()); err != nil {
		return fmt.Errorf("start AWS emulator: %w", err)
	}
	env.upstream = os.Getenv("AWS_CCM_UPSTREAM_BINARY")
	if env.upstream == "" {
		env.upstream = filepath.Join("..", "..", "_output", "upstream", "aws-cloud-controller-manager")
	}
	if env.upstream, err = filepath.Abs(env.upstream); err != nil {
		return err
	}
	if _, err := os.Stat(env.upstream); err != nil {
		if os.Getenv("CI") != "" {
			return fmt.Errorf("upstream's CCM: %w (hack/build-upstream.sh builds it)", err)
		}
		env.upstream = ""
	}
	// The real binary, as it ships (without -race: the product, not the
	// test), run like upstream's.
	env.this = filepath.Join(cp.Dir, "aws-cloud-controller-manager")
	build := exec.CommandContext(context.Background(), "go", "build", "-o", env.this, "./cmd/aws-cloud-controller-manager")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build the CCM: %w\n%s", err, out)
	}
	return nil
}

// fixture is one dual-stack subnet; the tests add instances.
func fixture() *awsemu.Fixture {
	tags := map[string]string{"kubernetes.io/cluster/" + clusterID: "owned"}
	return &awsemu.Fixture{
		Region: region,
		Zones:  []awsemu.Zone{{Name: "us-east-1a", ID: "use1-az1"}},
		VPCs:   []awsemu.VPC{{ID: vpcID, CIDR: "10.0.0.0/16", Tags: tags}},
		Subnets: []awsemu.Subnet{{ID: subnetID, VPCID: vpcID, AvailabilityZone: "us-east-1a", CIDR: "10.0.1.0/24",
			IPv6CIDR: "2600:1f18:4000:100::/64", Tags: tags}},
		RouteTables: []awsemu.RouteTable{{ID: "rtb-0up0000000000001", VPCID: vpcID, Main: true,
			Routes: []awsemu.Route{{DestinationCIDR: "0.0.0.0/0", GatewayID: "igw-0up0000000000001"}}}},
		SecurityGroups: []awsemu.SecurityGroup{{ID: "sg-0up0000000000001", Name: "upstream-nodes", Description: "nodes", VPCID: vpcID, Tags: tags}},
	}
}

// ccm is one CCM process.
type ccm struct {
	proc *childproc.Process
}

// startCCM runs bin with the cloud-node controller only, a status period
// of a second and families as NodeIPFamilies ("" for the default); no
// leader election, since the two never run at once. It is stopped when the
// test ends, if not before.
func startCCM(t *testing.T, name, bin, families string) *ccm {
	t.Helper()
	dir := t.TempDir()
	// VPC, SubnetID and the cluster ID: upstream, off EC2, reads its own
	// instance from IMDS unless the cloud config names them.
	conf := fmt.Sprintf("[Global]\nRegion = %s\nVPC = %s\nSubnetID = %s\nKubernetesClusterID = %s\n", region, vpcID, subnetID, clusterID)
	for f := range strings.SplitSeq(families, ",") {
		if f != "" {
			conf += "NodeIPFamilies = " + f + "\n"
		}
	}
	confPath := filepath.Join(dir, "cloud.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	port, err := childproc.FreePort(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(context.Background(), bin,
		"--kubeconfig="+env.cp.KubeconfigPath,
		"--cloud-provider=aws",
		"--cloud-config="+confPath,
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(port),
		"--leader-elect=false",
		"--controllers=cloud-node",
		"--configure-cloud-routes=false",
		"--node-status-update-frequency=1s",
		"-v=2", // the status loop logs one line per pass at V(2)
	)
	cmd.Env = append(os.Environ(), env.aws.Env().List()...) // the emulator, off EC2
	proc, err := childproc.StartLogged(name, cmd, filepath.Join(dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	c := &ccm{proc: proc}
	t.Cleanup(c.stop)
	return c
}

func (c *ccm) stop() { _ = c.proc.Stop(10 * time.Second) }

// statusPassRE matches k8s.io/cloud-provider's line at the end of each pass
// of the node status loop (the same library in both binaries).
var statusPassRE = regexp.MustCompile(`Update \d+ nodes status took`)

func (c *ccm) statusPasses() int {
	b, _ := os.ReadFile(c.proc.LogPath)
	return len(statusPassRE.FindAll(b, -1))
}

// waitFor polls cond every 100 ms; a CCM that exits fails the test with
// its log's tail.
func (c *ccm) waitFor(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if c.proc.Exited() {
			return false, c.proc.ExitError(4000)
		}
		return cond(ctx)
	})
	if err != nil {
		t.Fatalf("%s: waiting %s for %s: %v\n--- tail of %s ---\n%s", c.proc.Name, timeout, what, err, c.proc.LogPath, childproc.LogTail(c.proc.LogPath, 3000))
	}
}

// settle waits until the Nodes are initialized and two status passes have
// ended since, so that what is read is what the CCM keeps writing.
func (c *ccm) settle(t *testing.T, names []string) {
	t.Helper()
	c.waitFor(t, 60*time.Second, "the Nodes to be initialized", func(ctx context.Context) (bool, error) {
		for _, n := range names {
			node, err := env.kube.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
			if err != nil || tainted(node) {
				return false, err
			}
		}
		return true, nil
	})
	passes := c.statusPasses()
	c.waitFor(t, 30*time.Second, "two status passes", func(context.Context) (bool, error) { return c.statusPasses() >= passes+2, nil })
}

func tainted(n *corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == "node.cloudprovider.kubernetes.io/uninitialized" {
			return true
		}
	}
	return false
}
