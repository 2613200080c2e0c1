package migration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/testbed"
	"github.com/awsccmctl/awsccmctl/internal/testbed/fakekubelet"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// The demo fixture's cluster: its instances play the nodes.
const (
	clusterID = "demo"
	region    = "us-east-1"
	cpNode    = "ip-10-0-1-10.ec2.internal" // i-0a1b2c3d4e5f60001, us-east-1a
	cpID      = "i-0a1b2c3d4e5f60001"
	cpIP      = "10.0.1.10"
	workNode  = "ip-10-0-2-20.ec2.internal" // i-0a1b2c3d4e5f60002, us-east-1b
	workHost  = "ip-10-0-2-20"              // its host name, Ubuntu style
	workID    = "i-0a1b2c3d4e5f60002"
)

var env struct {
	cp       *testbed.ControlPlane
	kube     kubernetes.Interface
	aws      *awsemu.Emulator
	fixture  *awsemu.Fixture
	awsURL   string
	kcmBin   string
	ccmBin   string
	ctlBin   string
	skip     string
	legacyOK bool
}

func TestMain(m *testing.M) {
	// The nodes' kubelet stand-ins are this binary (startNodeKubelet).
	fakekubelet.Serve()
	dir, err := testbed.BinDir()
	legacy := ""
	if err == nil {
		legacy = filepath.Join(dir, testbed.LegacyVersion, testbed.APIServerBinary)
		env.kcmBin = filepath.Join(dir, testbed.LegacyVersion, testbed.KubeControllerManagerBinary)
		for _, b := range []string{legacy, env.kcmBin} {
			if _, serr := os.Stat(b); serr != nil {
				err = fmt.Errorf("%s not found", b)
			}
		}
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			fmt.Fprintf(os.Stderr, "migration: FAIL: the v1.26.13 test bed binaries are required with CI set: %v; run hack/build-testbed.sh\n", err)
			os.Exit(1)
		}
		env.skip = err.Error() + "; run hack/build-testbed.sh"
		os.Exit(m.Run())
	}
	os.Exit(testbed.MainOptions(m, testbed.Options{APIServerBinary: legacy}, setup))
}

func setup(cp *testbed.ControlPlane) error {
	env.cp = cp
	kube, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		return err
	}
	env.kube = kube
	f := awsemu.DemoFixture()
	singleInterface(f)
	f.Instances = append(f.Instances, haInstances()...)
	env.fixture = f
	emu, err := awsemu.Serve(f)
	if err != nil {
		return fmt.Errorf("start AWS emulator: %w", err)
	}
	env.aws, env.awsURL = emu, emu.URL
	// The real binaries, as operators and the DaemonSet run them.
	for out, pkg := range map[*string]string{&env.ccmBin: "./cmd/aws-cloud-controller-manager", &env.ctlBin: "./cmd/awsccmctl"} {
		*out = filepath.Join(cp.Dir, filepath.Base(pkg))
		build := exec.CommandContext(context.Background(), "go", "build", "-o", *out, pkg)
		build.Dir = filepath.Join("..", "..")
		if b, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("build %s: %w\n%s", pkg, err, b)
		}
	}
	return nil
}

// skipWithoutTestBed skips when the binaries are missing (never under CI).
func skipWithoutTestBed(t *testing.T) {
	t.Helper()
	if env.skip != "" {
		t.Skip(env.skip)
	}
}

// awsEnv points both SDKs at the emulator with dummy static credentials.
func awsEnv() []string {
	return append(env.aws.Env().List(), "AWS_REGION="+region)
}
