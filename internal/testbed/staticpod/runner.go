package staticpod

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
)

// Defaults of Options.
const (
	DefaultPollInterval = 200 * time.Millisecond
	DefaultMaxBackoff   = 2 * time.Second
	DefaultStopGrace    = 5 * time.Second

	// initialBackoff is the first restart delay after a crash.
	initialBackoff = 250 * time.Millisecond
)

// Options configures Start.
type Options struct {
	// Root is the fake node's root folder (required): node paths such as
	// /etc/kubernetes/manifests are read below it.
	Root string
	// ManifestDir is the kubelet's staticPodPath, a node path.
	// Default: DefaultManifestDir.
	ManifestDir string
	// NodeName is the node's name (required): mirror Pods are named
	// "<pod name>-<NodeName>" and bound to it.
	NodeName string
	// Client posts the mirror Pods (it needs to create, delete and update
	// the status of Pods, and get Nodes; admin will do). Nil: no mirror
	// Pods.
	Client kubernetes.Interface
	// Binaries maps a component (e.g. "kube-controller-manager") to the
	// host binary that runs it. Components not in the map are not run;
	// their manifests still get mirror Pods.
	Binaries map[string]string
	// Env is added to every process's environment, after the container's
	// own values (e.g. dummy AWS keys, AWS_EC2_METADATA_DISABLED=true).
	Env []string
	// LogDir receives one log per Pod, <namespace>_<pod name>.log.
	// Default: Root/var/log/staticpods.
	LogDir string
	// PollInterval is how often the manifest folder is read.
	// Default: DefaultPollInterval.
	PollInterval time.Duration
	// MaxBackoff caps the delay before a crashed process is restarted.
	// Default: DefaultMaxBackoff.
	MaxBackoff time.Duration
	// StopGrace is how long a process gets between SIGTERM and SIGKILL.
	// Default: DefaultStopGrace.
	StopGrace time.Duration
	// Hostname, if set, is the host name the processes see (Linux: a UTS
	// namespace of their own, set by /bin/sh's hostname before it execs
	// the binary); by default they see the machine's.
	Hostname string
	// Logf, if set, receives a line for each start, exit, stop and error.
	Logf func(format string, args ...any)
}

// ManifestError is a manifest that cannot be run: it does not decode, or
// its process or mirror Pod could not be started or written.
type ManifestError struct {
	Path string // node path, e.g. /etc/kubernetes/manifests/kube-controller-manager.yaml
	Err  error
}

func (e *ManifestError) Error() string { return e.Path + ": " + e.Err.Error() }

func (e *ManifestError) Unwrap() error { return e.Err }

// Runner runs the static Pods of one fake node. Its methods are safe for
// concurrent use.
type Runner struct {
	opts   Options
	dir    string // the manifest folder on the host
	cancel context.CancelFunc
	done   chan struct{} // closed when the poll loop has returned

	// Owned by the poll loop.
	lastSum map[string][sha256.Size]byte // file -> bytes last read
	dirErr  string                       // last error reading the folder, reported once

	mu      sync.Mutex
	workers map[string]*worker // file -> the worker running it
	order   []*worker          // every worker ever started, for Status
	errs    []error
	changed chan struct{} // closed and replaced on every state change
	wg      sync.WaitGroup

	stopOnce sync.Once
}

// Start reads the manifest folder once, starts what it holds, deletes
// mirror Pods of this node that no manifest backs, and keeps polling until
// Stop. The processes start in the background: use WaitStarted.
func Start(ctx context.Context, opts Options) (*Runner, error) {
	if opts.Root == "" || !filepath.IsAbs(opts.Root) {
		return nil, fmt.Errorf("staticpod: Root must be an absolute path, got %q", opts.Root)
	}
	if opts.NodeName == "" {
		return nil, errors.New("staticpod: NodeName is required")
	}
	if opts.ManifestDir == "" {
		opts.ManifestDir = DefaultManifestDir
	}
	if opts.LogDir == "" {
		opts.LogDir = filepath.Join(opts.Root, "var", "log", "staticpods")
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = DefaultMaxBackoff
	}
	if opts.StopGrace <= 0 {
		opts.StopGrace = DefaultStopGrace
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if err := os.MkdirAll(opts.LogDir, 0o755); err != nil {
		return nil, fmt.Errorf("staticpod: %w", err)
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r := &Runner{
		opts:    opts,
		dir:     filepath.Join(opts.Root, filepath.FromSlash(opts.ManifestDir)),
		cancel:  cancel,
		done:    make(chan struct{}),
		lastSum: map[string][sha256.Size]byte{},
		workers: map[string]*worker{},
		changed: make(chan struct{}),
	}
	r.scan(ctx)
	r.deleteOrphanMirrors(ctx)
	go r.loop(ctx)
	return r, nil
}

// Stop stops every process (SIGTERM, then SIGKILL after StopGrace) and
// waits for them. Mirror Pods stay. It is safe to call more than once.
func (r *Runner) Stop() {
	r.stopOnce.Do(func() {
		r.cancel()
		<-r.done
		r.wg.Wait()
	})
}

func (r *Runner) loop(ctx context.Context) {
	defer close(r.done)
	t := time.NewTicker(r.opts.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.scan(ctx)
		}
	}
}

// scan reads the manifest folder and hands every new, changed or removed
// manifest to its worker.
func (r *Runner) scan(ctx context.Context) {
	entries, err := os.ReadDir(r.dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		if msg := err.Error(); msg != r.dirErr {
			r.dirErr = msg
			r.record(&ManifestError{Path: r.opts.ManifestDir, Err: err})
		}
		return // keep what runs, as the kubelet does when it cannot list
	}
	r.dirErr = ""
	present := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		data, err := r.readManifest(name)
		if err != nil {
			continue // a folder, or gone in between
		}
		present[name] = true
		sum := sha256.Sum256(data)
		if prev, ok := r.lastSum[name]; ok && prev == sum {
			continue
		}
		r.lastSum[name] = sum
		m, err := r.load(name, data)
		if err != nil {
			r.record(&ManifestError{Path: r.nodePath(name), Err: err})
			r.remove(name)
			continue
		}
		r.update(ctx, m)
	}
	for name := range r.lastSum {
		if !present[name] {
			delete(r.lastSum, name)
			r.remove(name)
		}
	}
}

// readManifest reads a regular file (or a link to one) of the folder.
func (r *Runner) readManifest(name string) ([]byte, error) {
	p := filepath.Join(r.dir, name)
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fs.ErrInvalid
	}
	return os.ReadFile(p)
}

func (r *Runner) nodePath(file string) string {
	return strings.TrimSuffix(r.opts.ManifestDir, "/") + "/" + file
}

func (r *Runner) isKnown(component string) bool {
	if _, ok := r.opts.Binaries[component]; ok {
		return true
	}
	return slices.Contains(knownComponents, component)
}

// load decodes a manifest and plans its process.
func (r *Runner) load(file string, data []byte) (*manifest, error) {
	pod, err := decodePod(data)
	if err != nil {
		return nil, err
	}
	m := &manifest{file: file, hash: podHash(pod, r.opts.NodeName)}
	if i, comp, rest := findComponent(pod, r.isKnown); i >= 0 {
		c := &pod.Spec.Containers[i]
		m.component, m.container, m.binary = comp, c.Name, r.opts.Binaries[comp]
		m.args = resolveArgs(rest, c, pod.Spec.Volumes, r.opts.Root)
		m.env = append(containerEnv(c), r.opts.Env...)
	}
	m.volumes = hostPathVolumes(pod, r.opts.Root)
	applyDefaults(pod, r.opts.NodeName, m.hash, time.Now().UTC().Format(time.RFC3339Nano))
	m.pod = pod
	return m, nil
}

// update gives m to the worker of its file, starting one if needed.
func (r *Runner) update(ctx context.Context, m *manifest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.workers[m.file]
	if w == nil {
		w = newWorker(r, m.file, len(r.order))
		for _, o := range slices.Backward(r.order) {
			if o.file == m.file {
				w.prev = o // still stopping, maybe: let it finish first
				break
			}
		}
		r.workers[m.file] = w
		r.order = append(r.order, w)
		r.wg.Add(1)
		go w.run(ctx)
	}
	w.set(m)
}

// remove tells the worker of file, if any, that its manifest is gone.
func (r *Runner) remove(file string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if w := r.workers[file]; w != nil {
		delete(r.workers, file)
		w.set(nil)
	}
}

// record keeps an error for Errors and logs it.
func (r *Runner) record(err error) {
	r.opts.Logf("staticpod: %v", err)
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
	r.notify()
}

// notify wakes the waiters of WaitStarted.
func (r *Runner) notify() {
	r.mu.Lock()
	defer r.mu.Unlock()
	close(r.changed)
	r.changed = make(chan struct{})
}

// Errors returns the errors recorded so far, oldest first: manifests that
// do not decode (*ManifestError), hostPath checks, process starts and
// mirror Pod writes that failed.
func (r *Runner) Errors() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.errs)
}

// Exit is one end of a process.
type Exit struct {
	Pid int
	// Code is the exit status, -1 when a signal ended the process.
	Code int
	// Status says how it ended, e.g. "kube-controller-manager exited:
	// exit status 3".
	Status string
	// Stopped is true when the Runner stopped it (changed or removed
	// manifest, Stop); false for a crash or a clean exit of its own.
	Stopped bool
	At      time.Time
	Ran     time.Duration
}

// ComponentStatus describes the process of one manifest.
type ComponentStatus struct {
	Component string
	// Manifest is the node path of the manifest.
	Manifest string
	// Namespace and Pod name the static Pod (= the mirror Pod).
	Namespace, Pod string
	// Hash is the static Pod's kubernetes.io/config.hash.
	Hash string
	// Running is true while a process runs; Pid is then its process ID.
	Running bool
	Pid     int
	// Args are the arguments of the current (or last, or next) start,
	// after the binary, with paths resolved.
	Args []string
	// Starts counts the processes started for this manifest file since it
	// appeared (or last became decodable), across changes of its content.
	Starts int
	// Exits lists every end of those processes, oldest first.
	Exits []Exit
	// LogPath is the process's log.
	LogPath string
	// Removed is true once the manifest is gone (or no longer decodes).
	Removed bool
}

// Status returns the state of the component's manifest: the first one in
// file name order that is present, or else the last removed one.
func (r *Runner) Status(component string) (ComponentStatus, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.statusLocked(component)
}

func (r *Runner) statusLocked(component string) (ComponentStatus, bool) {
	var best *worker
	ws := slices.Clone(r.order)
	sort.SliceStable(ws, func(i, j int) bool { return ws[i].file < ws[j].file })
	for _, w := range ws {
		if w.cur == nil || w.cur.component != component {
			continue
		}
		if !w.removed {
			best = w
			break
		}
		if best == nil || w.seq > best.seq {
			best = w
		}
	}
	if best == nil {
		return ComponentStatus{}, false
	}
	return best.statusLocked(), true
}

// Process returns the running process of component: its pid, its
// arguments (after the binary, paths resolved) and how many processes its
// manifest has started. ok is false when none runs now (pid is then 0;
// args and starts still describe the last start, if any).
func (r *Runner) Process(component string) (pid int, args []string, starts int, ok bool) {
	st, found := r.Status(component)
	if !found {
		return 0, nil, 0, false
	}
	return st.Pid, st.Args, st.Starts, st.Running
}

// WaitStarted waits until the component's manifest has started at least n
// processes and the last one runs. The error describes the state reached.
func (r *Runner) WaitStarted(ctx context.Context, component string, n int) error {
	return r.wait(ctx, func() (bool, string) {
		st, ok := r.statusLocked(component)
		if !ok {
			return false, fmt.Sprintf("no manifest runs %s", component)
		}
		return st.Running && st.Starts >= n, fmt.Sprintf("%s: running=%v starts=%d exits=%d", component, st.Running, st.Starts, len(st.Exits))
	})
}

// WaitStopped waits until no process of the component runs.
func (r *Runner) WaitStopped(ctx context.Context, component string) error {
	return r.wait(ctx, func() (bool, string) {
		st, ok := r.statusLocked(component)
		return !ok || !st.Running, fmt.Sprintf("%s: pid %d still runs", component, st.Pid)
	})
}

// wait calls cond under the lock on every change until it is true.
func (r *Runner) wait(ctx context.Context, cond func() (bool, string)) error {
	for {
		r.mu.Lock()
		ok, state := cond()
		ch := r.changed
		errs := len(r.errs)
		r.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("staticpod: %w (%s; %d errors recorded)", ctx.Err(), state, errs)
		}
	}
}

// deleteOrphanMirrors deletes the mirror Pods bound to this node that no
// current manifest backs (left by an earlier run), as the kubelet does.
func (r *Runner) deleteOrphanMirrors(ctx context.Context) {
	if r.opts.Client == nil {
		return
	}
	want := map[string]bool{}
	r.mu.Lock()
	for _, w := range r.workers {
		if l := w.latest; l != nil {
			want[l.pod.Namespace+"/"+l.pod.Name] = true
		}
	}
	r.mu.Unlock()
	deleteOrphans(ctx, r.opts.Client, r.opts.NodeName, want, r.opts.Logf)
}
