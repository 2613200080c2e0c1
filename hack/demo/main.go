// Command demo runs the AWS cloud-controller-manager binary against a real
// kube-apiserver + etcd (internal/testbed) and the AWS emulator, registers
// Nodes the way kubelets with --cloud-provider=external do, waits for the
// CCM to initialize, taint and delete them, and prints what happened and
// what it cost in AWS calls. It is what `make demo` (hack/demo.sh) runs.
//
// The emulator runs as the standalone aws-emulator binary rather than
// in-process: that is the real deployment shape (two processes, the CCM
// finding "AWS" only through AWS_ENDPOINT_URL and its SDK), and the call
// counts come from the emulator's request log (-v, one line per request).
//
// Every child is torn down on success, failure and Ctrl-C; on Linux the
// children also die with the demo (Pdeathsig) if it is killed outright.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/childproc"
	"github.com/awsccmctl/awsccmctl/internal/clustertag"
	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/leaderlease"
	"github.com/awsccmctl/awsccmctl/internal/leadermigration"
	"github.com/awsccmctl/awsccmctl/internal/testbed"
	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

const clusterID = "demo"

type options struct {
	binDir   string
	fixture  string
	stateDir string
	timeout  time.Duration
	// preflight runs awsccmctl preflight on the demo cluster at the end.
	preflight bool
	// keep leaves the control plane and the emulator running for the
	// tutorial (docs/getting-started.md) until SIGINT or SIGTERM.
	keep bool
}

// demo holds what is running; teardown stops whatever was started.
type demo struct {
	opts     options
	fixture  *awsemu.Fixture
	plan     plan
	emu      *childproc.Process
	emuURL   string
	cp       *testbed.ControlPlane
	kube     kubernetes.Interface
	ccm      *childproc.Process
	ccmPort  int
	ccmStart time.Time
	// cloudConfig and awsEnv are what the CCM was given; preflight reuses them.
	cloudConfig string
	awsEnv      []string
}

func main() {
	var o options
	flag.StringVar(&o.binDir, "bin-dir", "_output/bin", "folder holding aws-cloud-controller-manager and aws-emulator")
	flag.StringVar(&o.fixture, "fixture", "test/awsemu/testdata/demo.yaml", "emulator fixture (cluster \"demo\")")
	flag.StringVar(&o.stateDir, "state-dir", "_output/demo", "folder for logs, cloud config and control-plane state (reset on each run)")
	flag.DurationVar(&o.timeout, "timeout", 60*time.Second, "bound of each wait")
	flag.BoolVar(&o.preflight, "preflight", false, "after the report, run `awsccmctl preflight --mode post-install` against the demo cluster and the emulator")
	flag.BoolVar(&o.keep, "keep", false, "after the report, stop the demo's CCM but leave etcd, kube-apiserver and the emulator running until SIGINT or SIGTERM; writes env.sh (KUBECONFIG and AWS_* for them) and node-root/ (a worker's files) into --state-dir")
	flag.Parse()
	os.Exit(run(o))
}

func run(o options) (code int) {
	begin := time.Now()
	// Signals are caught for the whole run, teardown included: a Ctrl-C
	// cancels the current wait and teardown still runs to the end.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	d := &demo{opts: o}
	defer func() {
		if err := d.teardown(); err != nil {
			fmt.Fprintf(os.Stderr, "demo: teardown: %v\n", err)
			code = 1
		}
		if code == 0 {
			fmt.Fprintf(os.Stderr, "demo: done in %s; logs in %s\n", time.Since(begin).Round(100*time.Millisecond), d.opts.stateDir)
		}
	}()
	err := d.run(ctx)
	switch {
	case err == nil:
		return 0
	case ctx.Err() != nil:
		fmt.Fprintf(os.Stderr, "\ndemo: interrupted; tearing down (logs in %s)\n", d.opts.stateDir)
		return 130
	default:
		fmt.Fprintf(os.Stderr, "\ndemo: FAIL: %v\ndemo: logs in %s\n", err, d.opts.stateDir)
		return 1
	}
}

func (d *demo) run(ctx context.Context) error {
	if err := d.prepare(); err != nil {
		return err
	}
	step("starting the AWS emulator (%s)", d.opts.fixture)
	if err := d.startEmulator(ctx); err != nil {
		return err
	}
	step("starting etcd + kube-apiserver")
	cp, err := testbed.Start(ctx, testbed.Options{Dir: filepath.Join(d.opts.stateDir, "controlplane")})
	if err != nil {
		return err
	}
	d.cp = cp
	if d.kube, err = kubernetes.NewForConfig(cp.Config); err != nil {
		return err
	}
	step("starting aws-cloud-controller-manager (log: %s)", filepath.Join(d.opts.stateDir, "ccm.log"))
	if err := d.startCCM(ctx); err != nil {
		return err
	}
	if err := d.waitLeader(ctx); err != nil {
		return err
	}
	step("registering %d nodes as kubelets with --cloud-provider=external do", len(d.plan.all()))
	for _, n := range d.plan.all() {
		if n.inst != nil && n.inst.PrivateIP != "" {
			// The node's kubelet answers /configz (what preflight reads
			// through nodes/proxy) at the instance's address.
			defer d.cp.ServeNode(net.JoinHostPort(n.inst.PrivateIP, strconv.Itoa(kubeletPort)), kubeletHandler(n))()
		}
		if err := registerNode(ctx, d.kube, n); err != nil {
			return err
		}
	}
	registered := time.Now()
	outcome, err := waitOutcome(ctx, d.kube, d.plan, d.ccm, d.opts.timeout)
	if err != nil {
		return err
	}
	if err := d.report(ctx, os.Stdout, outcome, time.Since(registered)); err != nil {
		return err
	}
	if err := d.loadBalancers(ctx, os.Stdout); err != nil {
		return fmt.Errorf("load balancers: %w", err)
	}
	if d.opts.preflight {
		if err := d.runPreflight(ctx); err != nil {
			return err
		}
	}
	if d.opts.keep {
		return d.keepRunning(ctx)
	}
	return nil
}

// runPreflight shows awsccmctl preflight on the live demo cluster. Failed
// checks are part of what it shows, so only a usage or reachability error
// fails the demo.
func (d *demo) runPreflight(ctx context.Context) error {
	fmt.Println()
	cmd := exec.CommandContext(ctx, filepath.Join(d.opts.binDir, "awsccmctl"), "preflight", "--mode", "post-install",
		"--kubeconfig", d.cp.KubeconfigPath, "--cloud-config", d.cloudConfig)
	cmd.Env, cmd.Stdout, cmd.Stderr = d.awsEnv, os.Stdout, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 {
		return nil
	}
	return err
}

func step(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "demo: "+format+"\n", args...)
}

// prepare checks the inputs and resets the state folder.
func (d *demo) prepare() error {
	for _, p := range []*string{&d.opts.binDir, &d.opts.fixture, &d.opts.stateDir} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			return err
		}
		*p = abs
	}
	for _, b := range []string{"aws-cloud-controller-manager", "aws-emulator"} {
		if _, err := os.Stat(filepath.Join(d.opts.binDir, b)); err != nil {
			return fmt.Errorf("%w (run hack/build.sh)", err)
		}
	}
	f, err := awsemu.LoadFixture(d.opts.fixture)
	if err != nil {
		return err
	}
	d.fixture = f
	if d.plan, err = makePlan(f); err != nil {
		return fmt.Errorf("%s: %w", d.opts.fixture, err)
	}
	// Only what this program writes is removed, never the folder itself.
	for _, name := range []string{"controlplane", "ccm.log", "aws-emulator.log", "cloud.conf", "emulator.url", envFile, nodeRootDir} {
		if err := os.RemoveAll(filepath.Join(d.opts.stateDir, name)); err != nil {
			return err
		}
	}
	return os.MkdirAll(d.opts.stateDir, 0o700)
}

func (d *demo) startEmulator(ctx context.Context) error {
	readyFile := filepath.Join(d.opts.stateDir, "emulator.url")
	p, err := startProc("aws-emulator", filepath.Join(d.opts.binDir, "aws-emulator"),
		[]string{"--fixture", d.opts.fixture, "--listen", "127.0.0.1:0", "--ready-file", readyFile, "-v"},
		os.Environ(), filepath.Join(d.opts.stateDir, "aws-emulator.log"))
	if err != nil {
		return err
	}
	d.emu = p
	deadline := time.Now().Add(15 * time.Second)
	for {
		if b, err := os.ReadFile(readyFile); err == nil && strings.TrimSpace(string(b)) != "" {
			d.emuURL = strings.TrimSpace(string(b))
			return nil
		}
		if p.Exited() {
			return p.ExitError(3000)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("aws-emulator wrote no %s within 15s", readyFile)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// vpcID is the VPC tagged for the cluster (else the first one).
func (d *demo) vpcID() string {
	for _, v := range d.fixture.VPCs {
		if _, ok := v.Tags[clustertag.Key(clusterID)]; ok {
			return v.ID
		}
	}
	if len(d.fixture.VPCs) > 0 {
		return d.fixture.VPCs[0].ID
	}
	return ""
}

func (d *demo) startCCM(ctx context.Context) error {
	conf := filepath.Join(d.opts.stateDir, "cloud.conf")
	d.cloudConfig = conf
	ini := fmt.Sprintf("[Global]\nRegion = %s\nVPC = %s\nKubernetesClusterID = %s\n", d.fixture.Region, d.vpcID(), clusterID)
	if err := os.WriteFile(conf, []byte(ini), 0o600); err != nil {
		return err
	}
	// If another process takes the port before the CCM binds it, the CCM
	// exits and the demo fails with its log: acceptable for a demo.
	port, err := childproc.FreePort(ctx)
	if err != nil {
		return err
	}
	d.ccmPort = port
	kc := d.cp.KubeconfigPath
	// Timings as in test/integration: short, in production's proportions
	// (status period > cache age; absence grace > cache age).
	args := []string{
		"--kubeconfig=" + kc,
		"--cloud-provider=aws",
		"--cloud-config=" + conf,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
		"--leader-elect=true",
		"--configure-cloud-routes=false",
		"--node-monitor-period=1s",
		"--node-status-update-frequency=5s",
		"--concurrent-node-syncs=5",
		"--kube-api-qps=100",
		"--kube-api-burst=200",
		"--aws-instance-cache-max-age=2s",
		"--aws-instance-absence-grace-period=6s",
		"--aws-request-timeout=5s",
		"-v=2",
	}
	// The operator's own AWS_* settings (profile, endpoints, region) must
	// not leak in: the CCM talks to the emulator only.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			env = append(env, kv)
		}
	}
	env = append(env, awsemu.EnvFor(d.emuURL).List()...)
	d.awsEnv = env
	d.ccmStart = time.Now()
	d.ccm, err = startProc("aws-cloud-controller-manager", filepath.Join(d.opts.binDir, "aws-cloud-controller-manager"),
		args, env, filepath.Join(d.opts.stateDir, "ccm.log"))
	return err
}

// waitLeader waits until the CCM holds its leader-election Lease.
func (d *demo) waitLeader(ctx context.Context) error {
	deadline := time.Now().Add(d.opts.timeout)
	for {
		l, err := leaderlease.Get(ctx, d.kube, leadermigration.LeaseNamespace, install.LeaseName)
		if err == nil && l.Holder != "" {
			step("CCM holds the leader Lease after %s", time.Since(d.ccmStart).Round(100*time.Millisecond))
			return nil
		}
		if err != nil && ctx.Err() == nil {
			return err
		}
		if d.ccm.Exited() {
			return d.ccm.ExitError(3000)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the CCM did not take the Lease kube-system/cloud-controller-manager within %s\n--- tail of %s ---\n%s",
				d.opts.timeout, d.ccm.LogPath, childproc.LogTail(d.ccm.LogPath, 3000))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// teardown stops the CCM first (so it does not log errors about a vanished
// apiserver), then the emulator and the control plane, and drops etcd's data
// (the logs stay).
func (d *demo) teardown() error {
	var errs []error
	errs = append(errs, d.ccm.Stop(5*time.Second))
	errs = append(errs, d.emu.Stop(5*time.Second))
	if d.cp != nil {
		errs = append(errs, d.cp.Stop())
		errs = append(errs, os.RemoveAll(filepath.Join(d.cp.Dir, "etcd-data")))
	}
	return errors.Join(errs...)
}
