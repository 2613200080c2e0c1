package staticpod_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
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
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	"github.com/awsccmctl/awsccmctl/internal/testbed"
	"github.com/awsccmctl/awsccmctl/internal/testbed/staticpod"
)

// fakeEnv turns the test binary into a fake control-plane component (see
// fakeComponent): the Runner runs it for "kube-controller-manager".
const fakeEnv = "STATICPOD_TEST_FAKE_COMPONENT"

func TestMain(m *testing.M) {
	if os.Getenv(fakeEnv) != "" {
		os.Exit(fakeComponent())
	}
	if slices.Contains(os.Args[1:], "-test.fuzzworker") {
		os.Exit(m.Run()) // a fuzz worker runs only the fuzz target: no control plane
	}
	os.Exit(testbed.Main(m, nil))
}

// fakeRecord is what the fake component appends to its --argv-file.
type fakeRecord struct {
	Pid      int      `json:"pid"`
	Args     []string `json:"args"`
	Env      []string `json:"env"`
	Hostname string   `json:"hostname"`
}

// fakeComponent appends its arguments to the file named by --argv-file,
// then exits with status 3 after --exit-after, or waits for SIGTERM and
// exits 0.
func fakeComponent() int {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	var argvFile string
	exitAfter := time.Duration(-1)
	for _, a := range os.Args[1:] {
		if v, ok := strings.CutPrefix(a, "--argv-file="); ok {
			argvFile = v
		}
		if v, ok := strings.CutPrefix(a, "--exit-after="); ok {
			exitAfter, _ = time.ParseDuration(v)
		}
	}
	fmt.Println("fake component running:", strings.Join(os.Args[1:], " "))
	if argvFile != "" {
		host, _ := os.Hostname()
		line, _ := json.Marshal(fakeRecord{Pid: os.Getpid(), Args: os.Args[1:], Env: os.Environ(), Hostname: host})
		f, err := os.OpenFile(argvFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		_, _ = f.Write(append(line, '\n'))
		_ = f.Close()
	}
	if exitAfter >= 0 {
		time.Sleep(exitAfter)
		return 3
	}
	<-sigs
	return 0
}

const component = "kube-controller-manager"

// fakeManifest is a kubeadm-style manifest for the fake component. The
// argv file lies in a hostPath volume mounted elsewhere than its host path.
func fakeManifest(extraArgs ...string) string {
	var b strings.Builder
	b.WriteString(`apiVersion: v1
kind: Pod
metadata:
  labels:
    component: kube-controller-manager
    tier: control-plane
  name: kube-controller-manager
  namespace: kube-system
spec:
  containers:
  - name: kube-controller-manager
    image: registry.k8s.io/kube-controller-manager:v1.26.13
    command:
    - kube-controller-manager
    - --argv-file=/var/lib/fake/argv.jsonl
    - --kubeconfig=/etc/kubernetes/controller-manager.conf
    - --root-ca-file
    - /etc/kubernetes/pki/ca.crt
    - --cloud-config=/etc/kubernetes/cloud.conf
`)
	for _, a := range extraArgs {
		fmt.Fprintf(&b, "    - %q\n", a)
	}
	b.WriteString(`    env:
    - name: FROM_MANIFEST
      value: "yes"
    volumeMounts:
    - {name: fake, mountPath: /var/lib/fake}
    - {name: k8s-certs, mountPath: /etc/kubernetes/pki, readOnly: true}
    - {name: kubeconfig, mountPath: /etc/kubernetes/controller-manager.conf, readOnly: true}
  hostNetwork: true
  priorityClassName: system-node-critical
  volumes:
  - name: fake
    hostPath: {path: /srv/fake, type: DirectoryOrCreate}
  - name: k8s-certs
    hostPath: {path: /etc/kubernetes/pki, type: DirectoryOrCreate}
  - name: kubeconfig
    hostPath: {path: /etc/kubernetes/controller-manager.conf, type: FileOrCreate}
`)
	return b.String()
}

type env struct {
	t    *testing.T
	ctx  context.Context
	cs   kubernetes.Interface
	root string
	node string
	r    *staticpod.Runner
}

// setup prepares a fake node root and a Node object named after the test.
func setup(t *testing.T) *env {
	cp := testbed.Get(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	cs, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	// The node name goes into Pod names, which should stay DNS labels
	// (63 characters): "kube-controller-manager-" + at most 30.
	node := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(strings.TrimPrefix(t.Name(), "Test")))
	e := &env{t: t, ctx: ctx, cs: cs, root: t.TempDir(), node: strings.TrimRight(node[:min(len(node), 30)], "-")}
	_, err = cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: e.node}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Nodes().Delete(context.Background(), e.node, metav1.DeleteOptions{}) })
	return e
}

func (e *env) start(opts staticpod.Options) *staticpod.Runner {
	e.t.Helper()
	self, err := os.Executable()
	if err != nil {
		e.t.Fatal(err)
	}
	opts.Root, opts.NodeName, opts.Client = e.root, e.node, e.cs
	if opts.Binaries == nil {
		opts.Binaries = map[string]string{component: self}
	}
	opts.Env = append(opts.Env, fakeEnv+"=1")
	if opts.PollInterval == 0 {
		opts.PollInterval = 100 * time.Millisecond
	}
	opts.Logf = e.t.Logf
	r, err := staticpod.Start(e.ctx, opts)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(r.Stop)
	e.r = r
	return r
}

// write replaces a manifest atomically (a dotfile renamed into place, as
// careful tools do; the Runner ignores the dotfile).
func (e *env) write(name, content string) {
	e.t.Helper()
	dir := filepath.Join(e.root, "etc/kubernetes/manifests")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		e.t.Fatal(err)
	}
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		e.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) host(p string) string { return filepath.Join(e.root, p) }

// records reads the fake component's argv file.
func (e *env) records() []fakeRecord {
	f, err := os.Open(e.host("srv/fake/argv.jsonl"))
	if err != nil {
		return nil
	}
	defer func() { _ = f.Close() }()
	var out []fakeRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r fakeRecord
		if json.Unmarshal(sc.Bytes(), &r) == nil {
			out = append(out, r)
		}
	}
	return out
}

// waitRecords waits until the fake component has written n records.
func (e *env) waitRecords(n int) []fakeRecord {
	e.t.Helper()
	var got []fakeRecord
	e.eventually(fmt.Sprintf("%d argv records", n), func() bool { got = e.records(); return len(got) >= n })
	return got
}

func (e *env) eventually(what string, cond func() bool) {
	e.t.Helper()
	for !cond() {
		select {
		case <-e.ctx.Done():
			e.t.Fatalf("timed out waiting for %s; runner errors: %v", what, e.r.Errors())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (e *env) waitStarted(n int) staticpod.ComponentStatus {
	e.t.Helper()
	if err := e.r.WaitStarted(e.ctx, component, n); err != nil {
		e.t.Fatal(err)
	}
	st, _ := e.r.Status(component)
	return st
}

// mirror returns the mirror Pod, nil when there is none.
func (e *env) mirror() *corev1.Pod {
	e.t.Helper()
	p, err := e.cs.CoreV1().Pods("kube-system").Get(e.ctx, component+"-"+e.node, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

func hasEnv(env []string, prefix string) bool {
	return slices.ContainsFunc(env, func(s string) bool { return strings.HasPrefix(s, prefix) })
}

func TestRunsManifestThroughHostPaths(t *testing.T) {
	e := setup(t)
	e.write("kube-controller-manager.yaml", fakeManifest("--v=2"))
	e.start(staticpod.Options{Env: []string{"AWS_EC2_METADATA_DISABLED=true"}})
	st := e.waitStarted(1)
	rec := e.waitRecords(1)[0]

	want := []string{
		"--argv-file=" + e.host("srv/fake/argv.jsonl"), // mountPath /var/lib/fake → hostPath /srv/fake
		"--kubeconfig=" + e.host("etc/kubernetes/controller-manager.conf"),
		"--root-ca-file", e.host("etc/kubernetes/pki/ca.crt"), // "--flag /path"
		"--cloud-config=/etc/kubernetes/cloud.conf", // under no mount: left as on a node
		"--v=2",
	}
	if !slices.Equal(rec.Args, want) {
		t.Errorf("process args\n got %q\nwant %q", rec.Args, want)
	}
	if !slices.Equal(st.Args, want) || st.Pid != rec.Pid || !st.Running || st.Starts != 1 {
		t.Errorf("status %+v, want pid %d and the same args", st, rec.Pid)
	}
	if pid, args, starts, ok := e.r.Process(component); !ok || pid != rec.Pid || starts != 1 || !slices.Equal(args, want) {
		t.Errorf("Process = %d %q %d %v", pid, args, starts, ok)
	}
	if !hasEnv(rec.Env, "FROM_MANIFEST=yes") || !hasEnv(rec.Env, "AWS_EC2_METADATA_DISABLED=true") || hasEnv(rec.Env, "HOME=") {
		t.Errorf("env = %q: want the container's and Options.Env only", rec.Env)
	}
	if st, err := os.Stat(e.host("etc/kubernetes/pki")); err != nil || !st.IsDir() {
		t.Errorf("DirectoryOrCreate volume not created: %v", err)
	}
	if st, err := os.Stat(e.host("etc/kubernetes/controller-manager.conf")); err != nil || !st.Mode().IsRegular() {
		t.Errorf("FileOrCreate volume not created: %v", err)
	}
	if b, err := os.ReadFile(st.LogPath); err != nil || !strings.Contains(string(b), "fake component running") {
		t.Errorf("log %s: %q %v", st.LogPath, b, err)
	}

	// The mirror Pod: the manifest's Pod, bound to the node, owned by it.
	var p *corev1.Pod
	e.eventually("a Running mirror Pod", func() bool { p = e.mirror(); return p != nil && p.Status.Phase == corev1.PodRunning })
	if p.Spec.NodeName != e.node || p.Annotations[staticpod.AnnotationConfigMirror] != st.Hash ||
		p.Annotations[staticpod.AnnotationConfigHash] != st.Hash || p.Annotations[staticpod.AnnotationConfigSource] != "file" {
		t.Errorf("mirror Pod on %q with annotations %v (hash %s)", p.Spec.NodeName, p.Annotations, st.Hash)
	}
	if len(p.OwnerReferences) != 1 || p.OwnerReferences[0].Kind != "Node" || p.OwnerReferences[0].Name != e.node {
		t.Errorf("ownerReferences = %+v", p.OwnerReferences)
	}
	if c := p.Spec.Containers[0].Command; !slices.Contains(c, "--kubeconfig=/etc/kubernetes/controller-manager.conf") {
		t.Errorf("the mirror Pod shows %q, want the manifest's command", c)
	}
	if cs := p.Status.ContainerStatuses; len(cs) != 1 || cs[0].State.Running == nil || !cs[0].Ready {
		t.Errorf("container statuses = %+v", cs)
	}
	if errs := e.r.Errors(); len(errs) != 0 {
		t.Errorf("errors: %v", errs)
	}
}

// TestHostname: the process sees Options.Hostname, keeps the PID the
// Runner started (the shell that sets the name execs the binary) and its
// arguments; the machine's host name is left alone.
func TestHostname(t *testing.T) {
	e := setup(t)
	e.write("kube-controller-manager.yaml", fakeManifest("--v=2"))
	e.start(staticpod.Options{Hostname: "ip-10-0-9-9"})
	st := e.waitStarted(1)
	rec := e.waitRecords(1)[0]
	if rec.Hostname != "ip-10-0-9-9" {
		t.Errorf("the process sees host name %q, want ip-10-0-9-9", rec.Hostname)
	}
	if rec.Pid != st.Pid || !slices.Contains(rec.Args, "--v=2") {
		t.Errorf("process pid %d args %q, status pid %d", rec.Pid, rec.Args, st.Pid)
	}
	if host, _ := os.Hostname(); host == "ip-10-0-9-9" {
		t.Error("the machine's host name changed")
	}
}

func TestManifestChangeRestartsAndReplacesMirror(t *testing.T) {
	e := setup(t)
	e.write("kube-controller-manager.yaml", fakeManifest())
	e.start(staticpod.Options{})
	first := e.waitStarted(1)
	var old *corev1.Pod
	e.eventually("the mirror Pod", func() bool { old = e.mirror(); return old != nil })

	// Same Pod, other bytes: as the kubelet, nothing restarts.
	e.write("kube-controller-manager.yaml", "# edited by hand\n"+fakeManifest())
	time.Sleep(500 * time.Millisecond)
	if st, _ := e.r.Status(component); st.Starts != 1 || st.Pid != first.Pid {
		t.Fatalf("a comment restarted the process: %+v", st)
	}

	changed := time.Now()
	e.write("kube-controller-manager.yaml", fakeManifest("--cloud-provider=external"))
	var p *corev1.Pod
	e.eventually("the new mirror Pod", func() bool {
		p = e.mirror()
		return p != nil && slices.Contains(p.Spec.Containers[0].Command, "--cloud-provider=external")
	})
	t.Logf("mirror Pod replaced %s after the manifest changed", time.Since(changed).Round(time.Millisecond))
	if p.UID == old.UID {
		t.Error("the mirror Pod was updated in place, want a new one")
	}
	st := e.waitStarted(2)
	recs := e.waitRecords(2)
	if st.Pid == first.Pid || recs[1].Pid != st.Pid || !slices.Contains(recs[1].Args, "--cloud-provider=external") {
		t.Errorf("after the change: status %+v, records %+v", st, recs)
	}
	if testbed.ProcessAlive(first.Pid) {
		t.Errorf("old process %d still alive", first.Pid)
	}
	if len(st.Exits) != 1 || !st.Exits[0].Stopped || st.Exits[0].Pid != first.Pid || st.Exits[0].Code != 0 {
		t.Errorf("exits = %+v, want one stop of pid %d", st.Exits, first.Pid)
	}
	if p.Annotations[staticpod.AnnotationConfigMirror] != st.Hash || st.Hash == first.Hash {
		t.Errorf("hashes: mirror %s, new %s, old %s", p.Annotations[staticpod.AnnotationConfigMirror], st.Hash, first.Hash)
	}
}

func TestIgnoredFilesAndComponentsNotRun(t *testing.T) {
	e := setup(t)
	// Not run (no binary in Options.Binaries): mirror Pod only.
	e.write("kube-apiserver.yaml", `apiVersion: v1
kind: Pod
metadata: {name: kube-apiserver, namespace: kube-system}
spec:
  containers:
  - name: kube-apiserver
    image: registry.k8s.io/kube-apiserver:v1.26.13
    command: [kube-apiserver, --etcd-servers=https://127.0.0.1:2379]
`)
	// Ignored, as by the kubelet: dotfiles and subfolders.
	e.write(".kube-controller-manager.yaml.swp", fakeManifest())
	sub := e.host("etc/kubernetes/manifests/backup")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "kube-controller-manager.yaml"), []byte(fakeManifest()), 0o600); err != nil {
		t.Fatal(err)
	}
	e.start(staticpod.Options{})

	var p *corev1.Pod
	e.eventually("the kube-apiserver mirror Pod Running", func() bool {
		var err error
		p, err = e.cs.CoreV1().Pods("kube-system").Get(e.ctx, "kube-apiserver-"+e.node, metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning
	})
	if _, _, _, ok := e.r.Process("kube-apiserver"); ok {
		t.Error("kube-apiserver runs, but it has no binary")
	}
	if st, found := e.r.Status("kube-apiserver"); !found || st.Running || st.Starts != 0 {
		t.Errorf("kube-apiserver status %+v %v", st, found)
	}
	time.Sleep(300 * time.Millisecond) // three polls
	if st, found := e.r.Status(component); found {
		t.Errorf("an ignored file runs: %+v", st)
	}
	if e.mirror() != nil {
		t.Error("an ignored file has a mirror Pod")
	}
	if len(e.records()) != 0 {
		t.Error("the fake component ran")
	}
	if errs := e.r.Errors(); len(errs) != 0 {
		t.Errorf("errors: %v", errs)
	}
}

func TestManifestRemovedStopsAndDeletesMirror(t *testing.T) {
	e := setup(t)
	e.write("kube-controller-manager.yaml", fakeManifest())
	e.start(staticpod.Options{})
	st := e.waitStarted(1)
	e.eventually("the mirror Pod", func() bool { return e.mirror() != nil })

	if err := os.Rename(e.host("etc/kubernetes/manifests/kube-controller-manager.yaml"), e.host("etc/kubernetes/kcm.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := e.r.WaitStopped(e.ctx, component); err != nil {
		t.Fatal(err)
	}
	if testbed.ProcessAlive(st.Pid) {
		t.Errorf("pid %d still alive", st.Pid)
	}
	e.eventually("the mirror Pod deleted", func() bool { return e.mirror() == nil })
	if st, _ := e.r.Status(component); !st.Removed || st.Running {
		t.Errorf("status %+v, want removed", st)
	}
}

func TestCrashedProcessRestartsWithBackoff(t *testing.T) {
	e := setup(t)
	e.write("kube-controller-manager.yaml", fakeManifest("--exit-after=100ms"))
	e.start(staticpod.Options{MaxBackoff: time.Second})
	begin := time.Now()
	e.waitStarted(4)
	// Back-off 250 ms, 500 ms, 1 s (capped): at least 1.75 s for 4 starts.
	if took := time.Since(begin); took < 1750*time.Millisecond {
		t.Errorf("4 starts in %s: no back-off", took)
	}
	st, _ := e.r.Status(component)
	if len(st.Exits) < 3 {
		t.Fatalf("exits = %+v", st.Exits)
	}
	for _, x := range st.Exits[:3] {
		if x.Code != 3 || x.Stopped {
			t.Errorf("exit %+v, want status 3, not stopped", x)
		}
	}
	e.eventually("the restart count in the mirror Pod", func() bool {
		p := e.mirror()
		return p != nil && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount >= 2
	})
}

func TestUndecodableManifestStopsUntilFixed(t *testing.T) {
	e := setup(t)
	e.write("kube-controller-manager.yaml", fakeManifest())
	e.start(staticpod.Options{})
	first := e.waitStarted(1)
	e.eventually("the mirror Pod", func() bool { return e.mirror() != nil })

	e.write("kube-controller-manager.yaml", fakeManifest()+"  nodeSelektor: {}\n") // unknown field
	if err := e.r.WaitStopped(e.ctx, component); err != nil {
		t.Fatal(err)
	}
	errs := e.r.Errors()
	var me *staticpod.ManifestError
	if len(errs) != 1 || !errors.As(errs[0], &me) || me.Path != "/etc/kubernetes/manifests/kube-controller-manager.yaml" ||
		!strings.Contains(me.Error(), "unknown field") {
		t.Fatalf("errors = %v, want one ManifestError naming the file", errs)
	}
	e.eventually("the mirror Pod deleted", func() bool { return e.mirror() == nil })
	if testbed.ProcessAlive(first.Pid) {
		t.Errorf("pid %d still alive", first.Pid)
	}

	e.write("kube-controller-manager.yaml", fakeManifest())
	st := e.waitStarted(1)
	if st.Pid == first.Pid {
		t.Error("same pid after the fix")
	}
	e.eventually("the mirror Pod back", func() bool { return e.mirror() != nil })
}

func TestHostPathCheckHoldsTheStart(t *testing.T) {
	e := setup(t)
	m := strings.Replace(fakeManifest(),
		"    - {name: fake, mountPath: /var/lib/fake}\n",
		"    - {name: fake, mountPath: /var/lib/fake}\n    - {name: cloud, mountPath: /etc/kubernetes/cloud.conf}\n", 1)
	m += "  - name: cloud\n    hostPath: {path: /etc/kubernetes/cloud.conf, type: File}\n"
	e.write("kube-controller-manager.yaml", m)
	e.start(staticpod.Options{})
	e.eventually("a hostPath error", func() bool { return len(e.r.Errors()) > 0 })
	if _, _, _, ok := e.r.Process(component); ok {
		t.Fatal("started without its File volume")
	}
	if err := os.WriteFile(e.host("etc/kubernetes/cloud.conf"), []byte("[Global]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	st := e.waitStarted(1)
	if !slices.Contains(st.Args, "--cloud-config="+e.host("etc/kubernetes/cloud.conf")) {
		t.Errorf("args %q: the mounted cloud config is not resolved", st.Args)
	}
}

func TestOrphanedMirrorPodDeletedAtStart(t *testing.T) {
	e := setup(t)
	orphan := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-scheduler-" + e.node, Namespace: "kube-system",
			Annotations: map[string]string{staticpod.AnnotationConfigMirror: "old"}},
		Spec: corev1.PodSpec{NodeName: e.node, Containers: []corev1.Container{{Name: "s", Image: "x"}}},
	}
	if _, err := e.cs.CoreV1().Pods("kube-system").Create(e.ctx, orphan, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.start(staticpod.Options{})
	list, err := e.cs.CoreV1().Pods(metav1.NamespaceAll).List(e.ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", e.node).String(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("pods left on the node: %d", len(list.Items))
	}
}
