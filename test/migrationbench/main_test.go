//go:build linux

package migrationbench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/awsccmctl/awsccmctl/internal/testbed"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// env is what the test shares: the control plane, a fast client for the
// bench's own writes (seeding, the nodes' reports), the emulator plan's
// preflight asks, and the CLI binary.
var env struct {
	cp     *testbed.ControlPlane
	kube   kubernetes.Interface // protobuf, no client-side rate limit
	admin  kubernetes.Interface // JSON, for /metrics
	aws    *awsemu.Emulator
	ctlBin string
	outDir string
	skip   string
}

// defaultNodes keeps the run that make test does short; hack/bench-migration.sh
// sets BENCH_MIGRATION_NODES=5000.
const defaultNodes = 300

// nodeCount is BENCH_MIGRATION_NODES, or defaultNodes.
func nodeCount() (int, error) {
	v := os.Getenv("BENCH_MIGRATION_NODES")
	if v == "" {
		return defaultNodes, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 10 {
		return 0, fmt.Errorf("BENCH_MIGRATION_NODES=%q: want a whole number of at least 10", v)
	}
	return n, nil
}

func TestMain(m *testing.M) {
	dir, err := testbed.BinDir()
	legacy := ""
	if err == nil {
		legacy = filepath.Join(dir, testbed.LegacyVersion, testbed.APIServerBinary)
		if _, serr := os.Stat(legacy); serr != nil {
			err = fmt.Errorf("%s not found", legacy)
		}
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			fmt.Fprintf(os.Stderr, "migrationbench: FAIL: the v1.26.13 kube-apiserver is required with CI set: %v; run hack/build-testbed.sh\n", err)
			os.Exit(1)
		}
		env.skip = err.Error() + "; run hack/build-testbed.sh"
		os.Exit(m.Run())
	}
	os.Exit(testbed.MainOptions(m, testbed.Options{APIServerBinary: legacy}, setup))
}

func setup(cp *testbed.ControlPlane) error {
	env.cp = cp
	cfg := rest.CopyConfig(cp.Config)
	cfg.QPS = -1 // the nodes do not share one client's rate limit
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	env.kube = kube
	if env.admin, err = kubernetes.NewForConfig(cp.Config); err != nil {
		return err
	}
	emu, err := awsemu.Serve(fixture())
	if err != nil {
		return fmt.Errorf("start AWS emulator: %w", err)
	}
	env.aws = emu
	env.outDir = os.Getenv("BENCH_OUT")
	if env.outDir == "" {
		env.outDir = filepath.Join(cp.Dir, "migrationbench")
	}
	if err := os.MkdirAll(env.outDir, 0o755); err != nil {
		return err
	}
	// The CLI as operators run it: $AWSCCMCTL_BINARY (hack/bench-migration.sh
	// builds it with hack/build.sh), else built here.
	if env.ctlBin = os.Getenv("AWSCCMCTL_BINARY"); env.ctlBin != "" {
		env.ctlBin, err = filepath.Abs(env.ctlBin)
		return err
	}
	env.ctlBin = filepath.Join(cp.Dir, "awsccmctl")
	build := exec.CommandContext(context.Background(), "go", "build", "-o", env.ctlBin, "./cmd/awsccmctl")
	build.Dir = filepath.Join("..", "..")
	if b, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build awsccmctl: %w\n%s", err, b)
	}
	return nil
}

// skipWithoutTestBed skips when the binaries are missing (never under CI).
func skipWithoutTestBed(t *testing.T) {
	t.Helper()
	if env.skip != "" {
		t.Skip(env.skip)
	}
	if env.cp == nil {
		t.Skip("no control plane (-short)")
	}
}

// fixture is the demo account (its IAM lets plan's permission check pass)
// with room for thousands of instances: its own instances go, each
// subnet is a /18 (test/bench's layout), and nodes get no public address
// (workers in private subnets).
func fixture() *awsemu.Fixture {
	f := awsemu.DemoFixture()
	f.Instances, f.IMDSInstanceID = nil, ""
	for i := range f.Subnets {
		f.Subnets[i].CIDR = fmt.Sprintf("10.0.%d.0/18", i*64)
		f.Subnets[i].MapPublicIPOnLaunch = false
	}
	return f
}
