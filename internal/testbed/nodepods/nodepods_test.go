package nodepods_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/childproc"
	"github.com/awsccmctl/awsccmctl/internal/testbed"
	"github.com/awsccmctl/awsccmctl/internal/testbed/fakekubelet"
	"github.com/awsccmctl/awsccmctl/internal/testbed/fakesystemd"
	"github.com/awsccmctl/awsccmctl/internal/testbed/nodepods"
	"github.com/awsccmctl/awsccmctl/internal/testbed/staticpod"
)

// fakeEnv turns the test binary into a fake node command (fakeNodeStep):
// the Runner runs it for "awsccmctl".
const fakeEnv = "NODEPODS_TEST_FAKE_NODE_STEP"

func TestMain(m *testing.M) {
	fakekubelet.Serve()
	if os.Getenv(fakeEnv) != "" {
		os.Exit(fakeNodeStep())
	}
	os.Exit(testbed.Main(m, nil))
}

// record is what the fake node step writes to its --record file.
type record struct {
	Args []string `json:"args"`
	Env  []string `json:"env"`
	Dir  string   `json:"dir"`
}

// fakeNodeStep writes a record to --record (a node path, which only exists
// if the Runner rewrote it under the root), then, with --hold, waits until
// <--root>/release exists or SIGTERM comes (ignored with --ignore-term),
// and exits with --exit. With --chroot-systemctl it runs
// `systemctl restart kubelet` as the node step does: /usr/bin/systemctl
// chrooted into --root, and exits with its status.
func fakeNodeStep() int {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	var root, recordPath string
	hold, ignoreTerm, chroot, code := false, false, false, 0
	for _, a := range os.Args[1:] {
		switch {
		case strings.HasPrefix(a, "--root="):
			root = strings.TrimPrefix(a, "--root=")
		case strings.HasPrefix(a, "--record="):
			recordPath = strings.TrimPrefix(a, "--record=")
		case strings.HasPrefix(a, "--exit="):
			_, _ = fmt.Sscan(strings.TrimPrefix(a, "--exit="), &code)
		case a == "--hold":
			hold = true
		case a == "--ignore-term":
			ignoreTerm = true
		case a == "--chroot-systemctl":
			chroot = true
		}
	}
	fmt.Println("node step running:", strings.Join(os.Args[1:], " "))
	dir, _ := os.Getwd()
	b, _ := json.Marshal(record{Args: os.Args[1:], Env: os.Environ(), Dir: dir})
	if err := os.MkdirAll(filepath.Dir(recordPath), 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := os.WriteFile(recordPath, b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if chroot {
		cmd := exec.CommandContext(context.Background(), "/usr/bin/systemctl", "restart", "kubelet")
		cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root}
		cmd.Dir, cmd.Stdout, cmd.Stderr = "/", os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "systemctl restart kubelet:", err)
			if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
				return ee.ExitCode()
			}
			return 2
		}
	}
	for hold {
		select {
		case <-sigs:
			if !ignoreTerm {
				return 0
			}
		case <-time.After(20 * time.Millisecond):
			if _, err := os.Stat(filepath.Join(root, "release")); err == nil {
				hold = false
			}
		}
	}
	return code
}

const (
	namespace = "kube-system"
	nodeIP    = "10.0.1.10"
)

// node is a fake node: a root folder, a Node object and its Runner.
type node struct {
	t    *testing.T
	ctx  context.Context
	cs   kubernetes.Interface
	name string
	root string
	r    *nodepods.Runner
}

// newNode creates a Node named after the test (and suffix) with an
// InternalIP, and starts its Runner.
func newNode(t *testing.T, suffix string, opts nodepods.Options) *node {
	t.Helper()
	cp := testbed.Get(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	cs, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.ToLower(strings.TrimPrefix(t.Name(), "Test"))
	name = strings.TrimRight(name[:min(len(name), 40)], "-") + suffix
	n := &node{t: t, ctx: ctx, cs: cs, name: name, root: t.TempDir()}
	created, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	created.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: nodeIP}}
	if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// No controller manager creates the namespace's default service
	// account, which the ServiceAccount admission plugin wants to exist.
	_, err = cs.CoreV1().ServiceAccounts(namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	opts.Client, opts.NodeName, opts.Root = cs, name, n.root
	opts.Binaries = map[string]string{"awsccmctl": self}
	opts.Env = append(opts.Env, fakeEnv+"=1")
	opts.Logf = t.Logf
	n.r, err = nodepods.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.r.Stop)
	return n
}

// nodePod is a node step Pod as the product creates it, bound to the node,
// running the fake node step with extra arguments.
func (n *node) nodePod(name string, extra ...string) *corev1.Pod {
	dir := corev1.HostPathDirectory
	privileged, automount := true, false
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{"app.kubernetes.io/name": "awsccmctl-node-step"}},
		Spec: corev1.PodSpec{
			NodeName: n.name, HostPID: true, HostNetwork: true,
			RestartPolicy:                corev1.RestartPolicyNever,
			AutomountServiceAccountToken: &automount,
			Tolerations:                  []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			Containers: []corev1.Container{{
				Name:  "node",
				Image: "registry.example/awsccmctl:test",
				Command: append([]string{"/usr/local/bin/awsccmctl", "migrate-from-intree", "node", "--phase=kubelet-external",
					"--root=/host", "--node-name=" + n.name, "--record=/host/records/" + name + ".json"}, extra...),
				Env:             []corev1.EnvVar{{Name: "FROM_POD", Value: "yes"}},
				SecurityContext: &corev1.SecurityContext{Privileged: &privileged},
				VolumeMounts:    []corev1.VolumeMount{{Name: "host", MountPath: "/host"}},
			}},
			Volumes: []corev1.Volume{{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/", Type: &dir}}}},
		},
	}
}

func (n *node) create(pod *corev1.Pod) {
	n.t.Helper()
	if _, err := n.cs.CoreV1().Pods(pod.Namespace).Create(n.ctx, pod, metav1.CreateOptions{}); err != nil {
		n.t.Fatal(err)
	}
	n.t.Cleanup(func() {
		zero := int64(0)
		_ = n.cs.CoreV1().Pods(pod.Namespace).Delete(context.Background(), pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	})
}

// get returns the Pod, nil when it is gone.
func (n *node) get(name string) *corev1.Pod {
	n.t.Helper()
	p, err := n.cs.CoreV1().Pods(namespace).Get(n.ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		n.t.Fatal(err)
	}
	return p
}

// waitPod waits until cond holds for the Pod (nil: gone) and returns it.
func (n *node) waitPod(name, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	n.t.Helper()
	for {
		p := n.get(name)
		if cond(p) {
			return p
		}
		select {
		case <-n.ctx.Done():
			n.t.Fatalf("Pod %s: timed out waiting until %s; last seen %+v; runner errors %v", name, what, p, n.r.Errors())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (n *node) waitRunning(name string) *corev1.Pod {
	n.t.Helper()
	return n.waitPod(name, "it runs", func(p *corev1.Pod) bool {
		return p != nil && p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Running != nil
	})
}

func (n *node) waitRun(name string) nodepods.Run {
	n.t.Helper()
	run, err := n.r.WaitRun(n.ctx, namespace, name)
	if err != nil {
		n.t.Fatal(err)
	}
	return run
}

func (n *node) release() {
	n.t.Helper()
	if err := os.WriteFile(filepath.Join(n.root, "release"), nil, 0o644); err != nil {
		n.t.Fatal(err)
	}
}

func (n *node) readRecord(pod string) record {
	n.t.Helper()
	b, err := os.ReadFile(filepath.Join(n.root, "records", pod+".json"))
	if err != nil {
		n.t.Fatalf("the node step's record (written through /host): %v", err)
	}
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		n.t.Fatal(err)
	}
	return r
}

func terminatedState(p *corev1.Pod) *corev1.ContainerStateTerminated {
	if p == nil || len(p.Status.ContainerStatuses) != 1 {
		return nil
	}
	return p.Status.ContainerStatuses[0].State.Terminated
}

func TestPodRunsThroughHostAndSucceeds(t *testing.T) {
	n := newNode(t, "", nodepods.Options{Env: []string{"FROM_OPTIONS=yes"}})
	const name = "step-ok"
	n.create(n.nodePod(name, "--hold"))

	p := n.waitRunning(name)
	cs := p.Status.ContainerStatuses[0]
	if p.Status.PodIP != nodeIP || p.Status.HostIP != nodeIP || p.Status.StartTime == nil || cs.State.Running.StartedAt.IsZero() || !cs.Ready {
		t.Errorf("running status: podIP %q hostIP %q startTime %v container %+v; want the node's IP %s, a start time, a ready running container",
			p.Status.PodIP, p.Status.HostIP, p.Status.StartTime, cs, nodeIP)
	}
	rec := n.readRecord(name)
	for _, want := range []string{"--root=" + n.root, "--node-name=" + n.name, "--phase=kubelet-external"} {
		if !slices.Contains(rec.Args, want) {
			t.Errorf("the node step ran with %q, want %q among them", rec.Args, want)
		}
	}
	if rec.Args[0] != "migrate-from-intree" {
		t.Errorf("the node step's arguments start with %q, want the words after the program", rec.Args[0])
	}
	if !slices.Contains(rec.Env, "FROM_POD=yes") || !slices.Contains(rec.Env, "FROM_OPTIONS=yes") || slices.ContainsFunc(rec.Env, func(e string) bool { return strings.HasPrefix(e, "PATH=") }) {
		t.Errorf("environment %q, want the container's and the Options' values and nothing of the test's", rec.Env)
	}
	if rec.Dir != n.root {
		t.Errorf("working directory %s, want the root %s", rec.Dir, n.root)
	}

	n.release()
	run := n.waitRun(name)
	if run.ExitCode != 0 || run.Stopped || run.Err != "" || run.Component != "awsccmctl" {
		t.Errorf("run %+v, want awsccmctl exited 0 on its own", run)
	}
	p = n.waitPod(name, "it succeeded", func(p *corev1.Pod) bool { return p != nil && p.Status.Phase != corev1.PodRunning })
	term := terminatedState(p)
	if p.Status.Phase != corev1.PodSucceeded || term == nil || term.ExitCode != 0 || term.Reason != "Completed" || term.FinishedAt.IsZero() {
		t.Errorf("final status: phase %s, terminated %+v; want Succeeded, exit code 0, Completed", p.Status.Phase, term)
	}
	if log, _ := os.ReadFile(filepath.Join(n.root, "var", "log", "nodepods", namespace+"_"+name+".log")); !strings.Contains(string(log), "node step running:") {
		t.Errorf("the Pod's log lacks the process's output:\n%s", log)
	}
	if errs := n.r.Errors(); len(errs) != 0 {
		t.Errorf("runner errors: %v", errs)
	}
}

func TestFailingCommandFails(t *testing.T) {
	n := newNode(t, "", nodepods.Options{})
	const name = "step-fails"
	n.create(n.nodePod(name, "--exit=3"))
	if run := n.waitRun(name); run.ExitCode != 3 || run.Stopped {
		t.Errorf("run %+v, want exit code 3", run)
	}
	p := n.waitPod(name, "it failed", func(p *corev1.Pod) bool { return p != nil && p.Status.Phase == corev1.PodFailed })
	if term := terminatedState(p); term == nil || term.ExitCode != 3 || term.Reason != "Error" {
		t.Errorf("terminated %+v, want exit code 3, reason Error", term)
	}
}

func TestUnknownProgramFails(t *testing.T) {
	n := newNode(t, "", nodepods.Options{})
	const name = "step-unknown"
	pod := n.nodePod(name)
	pod.Spec.Containers[0].Command = []string{"/bin/true", "--root=/host"}
	n.create(pod)
	run := n.waitRun(name)
	if run.Pid != 0 || run.ExitCode != 128 || !strings.Contains(run.Err, `"/bin/true --root=/host"`) || !strings.Contains(run.Err, "Options.Binaries has awsccmctl") {
		t.Errorf("run %+v, want no process, exit code 128 and an error naming the command and the known programs", run)
	}
	p := n.waitPod(name, "it failed", func(p *corev1.Pod) bool { return p != nil && p.Status.Phase == corev1.PodFailed })
	if term := terminatedState(p); term == nil || term.Reason != "StartError" || term.ExitCode != 128 || term.Message != run.Err || p.Status.Message != run.Err {
		t.Errorf("status %+v, want Failed with a StartError container and the message %q", p.Status, run.Err)
	}
}

func TestDeletedPodIsStoppedAndRemoved(t *testing.T) {
	n := newNode(t, "", nodepods.Options{MaxStopGrace: time.Second})
	const name = "step-deleted"
	n.create(n.nodePod(name, "--hold", "--ignore-term"))
	n.waitRunning(name)
	runs := n.r.Runs()
	if len(runs) != 1 || runs[0].Pid == 0 || !testbed.ProcessAlive(runs[0].Pid) {
		t.Fatalf("runs %+v, want one running process", runs)
	}
	pid := runs[0].Pid

	// The default grace period (30 s) is capped at MaxStopGrace; the
	// process ignores SIGTERM, so SIGKILL ends it.
	start := time.Now()
	if err := n.cs.CoreV1().Pods(namespace).Delete(n.ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	n.waitPod(name, "it is removed", func(p *corev1.Pod) bool { return p == nil })
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the deleted Pod took %s to go, want about MaxStopGrace (1 s)", took)
	}
	if testbed.ProcessAlive(pid) {
		t.Errorf("the deleted Pod's process %d still runs", pid)
	}
	run := n.waitRun(name)
	if !run.Stopped || run.ExitCode != 128+int(syscall.SIGKILL) {
		t.Errorf("run %+v, want stopped with SIGKILL (exit code 137)", run)
	}
	if n.r.Running() != 0 {
		t.Errorf("Running() = %d after the stop", n.r.Running())
	}
}

func TestMirrorPodIsNotRun(t *testing.T) {
	n := newNode(t, "", nodepods.Options{})
	mirror := n.nodePod("step-mirror", "--exit=0")
	mirror.Annotations = map[string]string{staticpod.AnnotationConfigMirror: "0123"}
	mirror.Spec.AutomountServiceAccountToken = nil // mirror Pods may not name service accounts
	n.create(mirror)
	// A Pod created after the mirror Pod: once it has run, the Runner has
	// seen the mirror Pod too (an informer delivers in order).
	n.create(n.nodePod("step-after"))
	n.waitRun("step-after")
	for _, r := range n.r.Runs() {
		if r.Name == "step-mirror" {
			t.Errorf("the mirror Pod was run: %+v", r)
		}
	}
	if p := n.get("step-mirror"); p == nil || p.Status.Phase != corev1.PodPending || len(p.Status.ContainerStatuses) != 0 {
		t.Errorf("the mirror Pod's status was written: %+v", p)
	}
	if _, err := os.Stat(filepath.Join(n.root, "records", "step-mirror.json")); err == nil {
		t.Error("the mirror Pod's command ran")
	}
}

func TestConcurrentPodsAreCounted(t *testing.T) {
	tally := &nodepods.Tally{}
	a := newNode(t, "-a", nodepods.Options{Tally: tally})
	b := newNode(t, "-b", nodepods.Options{Tally: tally})
	a.create(a.nodePod("step-a1", "--hold"))
	a.create(a.nodePod("step-a2", "--hold"))
	b.create(b.nodePod("step-b1", "--hold"))
	for _, w := range []struct {
		n    *node
		name string
	}{{a, "step-a1"}, {a, "step-a2"}, {b, "step-b1"}} {
		w.n.waitRunning(w.name)
	}
	if got := tally.Running(); got != 3 {
		t.Errorf("Tally.Running() = %d with three held Pods, want 3", got)
	}
	a.release()
	b.release()
	for _, w := range []struct {
		n    *node
		name string
	}{{a, "step-a1"}, {a, "step-a2"}, {b, "step-b1"}} {
		if run := w.n.waitRun(w.name); run.ExitCode != 0 {
			t.Errorf("%s: %+v", w.name, run)
		}
	}
	// One more on a, alone: the maxima stay.
	a.create(a.nodePod("step-a3"))
	a.waitRun("step-a3")
	if a.r.MaxConcurrent() != 2 || b.r.MaxConcurrent() != 1 || tally.Max() != 3 || tally.Running() != 0 {
		t.Errorf("MaxConcurrent a=%d b=%d, Tally max %d running %d; want 2, 1, 3, 0", a.r.MaxConcurrent(), b.r.MaxConcurrent(), tally.Max(), tally.Running())
	}
	if got := len(a.r.Runs()); got != 3 {
		t.Errorf("node a ran %d Pods, want 3", got)
	}
}

// TestNodeStepRestartsKubeletThroughChrootedSystemctl is the whole chain
// the many-nodes path takes on the test bed: a node step Pod, run by the
// node's Runner, runs /usr/bin/systemctl chrooted into the node's root
// (the static client), which reaches the node's fake systemd, which
// restarts the kubelet stand-in from the edited kubeadm-flags.env.
func TestNodeStepRestartsKubeletThroughChrootedSystemctl(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the node step's chroot needs root (CAP_SYS_CHROOT)")
	}
	n := newNode(t, "", nodepods.Options{})
	bin, err := fakesystemd.BuildSystemctl(n.ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := fakesystemd.InstallSystemctl(bin, n.root); err != nil {
		t.Fatal(err)
	}
	envFile := filepath.Join(n.root, "var", "lib", "kubelet", "kubeadm-flags.env")
	writeFlags := func(flags string) {
		if err := os.MkdirAll(filepath.Dir(envFile), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(envFile, []byte(`KUBELET_KUBEADM_ARGS="`+flags+`"`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeFlags("--cloud-provider=aws")
	port, err := childproc.FreePort(n.ctx)
	if err != nil {
		t.Fatal(err)
	}
	kubelet := fakekubelet.NewService(t, port, "ok", envFile)
	if err := kubelet.Start(n.ctx); err != nil {
		t.Fatal(err)
	}
	old := kubelet.PID()
	srv, err := fakesystemd.Start(fakesystemd.Options{Root: n.root, Logf: t.Logf,
		Handler: fakesystemd.Units(map[string]fakesystemd.Unit{"kubelet.service": kubelet})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	writeFlags("--cloud-provider=external")

	const name = "step-restart"
	n.create(n.nodePod(name, "--chroot-systemctl"))
	run := n.waitRun(name)
	if run.ExitCode != 0 {
		log := childproc.LogTail(run.LogPath, 2048)
		if os.Getenv("CI") == "" && strings.Contains(log, "operation not permitted") {
			t.Skipf("chroot refused although root (a container without CAP_SYS_CHROOT?): %s", log)
		}
		t.Fatalf("the node step exited %d; its log:\n%s", run.ExitCode, log)
	}
	if calls := srv.Calls(); len(calls) != 1 || calls[0].Verb != "restart" || len(calls[0].Units) != 1 || calls[0].Units[0] != "kubelet.service" {
		t.Errorf("fake systemd calls %+v, want one restart of kubelet.service", calls)
	}
	pid := kubelet.PID()
	if pid == 0 || pid == old || kubelet.Starts() != 2 || testbed.ProcessAlive(old) {
		t.Fatalf("kubelet pid %d (was %d, still alive %v), %d starts; want a new one after one restart", pid, old, testbed.ProcessAlive(old), kubelet.Starts())
	}
	var cmdline string
	n.waitPod(name, "the new kubelet runs the edited flags", func(*corev1.Pod) bool {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		cmdline = strings.ReplaceAll(string(b), "\x00", " ")
		return strings.Contains(cmdline, "kubelet --cloud-provider=external")
	})
	t.Logf("restarted kubelet: pid %d, %s", pid, cmdline)
}

// TestRestartedRunnerRunsOnlyUnfinishedPods: like a kubelet that restarts,
// a new Runner runs the Pods bound while none ran and leaves the finished
// ones finished.
func TestRestartedRunnerRunsOnlyUnfinishedPods(t *testing.T) {
	n := newNode(t, "", nodepods.Options{})
	n.create(n.nodePod("step-before"))
	if run := n.waitRun("step-before"); run.ExitCode != 0 {
		t.Fatalf("run %+v", run)
	}
	n.waitPod("step-before", "it succeeded", func(p *corev1.Pod) bool { return p != nil && p.Status.Phase == corev1.PodSucceeded })
	n.r.Stop()

	n.create(n.nodePod("step-while-down"))
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	n.r, err = nodepods.Start(n.ctx, nodepods.Options{Client: n.cs, NodeName: n.name, Root: n.root,
		Binaries: map[string]string{"awsccmctl": self}, Env: []string{fakeEnv + "=1"}, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.r.Stop)
	if run := n.waitRun("step-while-down"); run.ExitCode != 0 {
		t.Errorf("the Pod bound while no Runner ran: %+v", run)
	}
	if runs := n.r.Runs(); len(runs) != 1 || runs[0].Name != "step-while-down" {
		t.Errorf("the new Runner ran %+v, want only step-while-down (step-before had finished)", runs)
	}
}
