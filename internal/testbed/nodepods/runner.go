package nodepods

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/awsccmctl/awsccmctl/internal/testbed/staticpod"
)

// Defaults of Options.
const (
	// DefaultMaxStopGrace caps the grace period a deleted Pod's process
	// gets between SIGTERM and SIGKILL: the Pod's own (30 s by default)
	// would make every test that deletes a stuck Pod wait that long.
	DefaultMaxStopGrace = 3 * time.Second
	// syncTimeout bounds Start's wait for the first list of Pods.
	syncTimeout = 30 * time.Second
)

// Options configures Start.
type Options struct {
	// Client watches the node's Pods, writes their status and deletes
	// them (admin will do). Required.
	Client kubernetes.Interface
	// NodeName is the node whose Pods (spec.nodeName) this Runner runs.
	// Required.
	NodeName string
	// Root is the fake node's root folder (absolute, required): a hostPath
	// volume's path is a path below it, and processes run in it.
	Root string
	// Binaries maps a program's base name ("awsccmctl") to the host binary
	// that runs it. A Pod whose first container runs no program named here
	// fails, with a message saying so.
	Binaries map[string]string
	// Env is added to every process's environment, after the container's
	// literal values. The processes get nothing else of the test
	// process's environment (no PATH unless given here).
	Env []string
	// LogDir receives one log per Pod, <namespace>_<pod name>.log.
	// Default: Root/var/log/nodepods.
	LogDir string
	// MaxStopGrace caps the grace period of a deleted Pod's process.
	// Default: DefaultMaxStopGrace.
	MaxStopGrace time.Duration
	// Tally, if set, also counts this Runner's processes: one Tally shared
	// by the Runners of several nodes tells how many node Pods ran at once
	// across them (a rollout's max-unavailable).
	Tally *Tally
	// LabelSelector, if set, limits the Runner to the node's Pods it
	// selects: the node's other Pods are another kubelet's to play (a
	// DaemonSet's Pods that a test runs otherwise, say).
	LabelSelector string
	// Logf, if set, receives a line for each start, end, stop and error.
	Logf func(format string, args ...any)
}

// Run is one Pod this Runner took on.
type Run struct {
	Namespace, Name string
	UID             types.UID
	// Component is the program run (a key of Options.Binaries); "" when
	// the Pod could not start.
	Component string
	// Args are its arguments, paths rewritten under the root.
	Args []string
	Pid  int
	// Started and Finished bound the process's life.
	Started, Finished time.Time
	// Done is true once the process has ended, or the Pod failed to start.
	Done bool
	// ExitCode is the container's exit code as a container runtime reports
	// it: the exit status, or 128 + the signal that ended the process; 128
	// for a Pod that could not start (the runtime's StartError).
	ExitCode int
	// Stopped is true when the Runner ended the process: its Pod was
	// deleted, or the Runner stopped.
	Stopped bool
	// Err says why the Pod could not start; "" when it started.
	Err string
	// LogPath is the process's output.
	LogPath string
}

// Runner runs the Pods bound to one fake node. Its methods are safe for
// concurrent use.
type Runner struct {
	opts   Options
	ctx    context.Context // the informer's callbacks carry none; Stop ends it
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu         sync.Mutex
	workers    map[types.UID]*podWorker
	runs       []*Run
	errs       []error
	running    int
	maxRunning int
	changed    chan struct{} // closed and replaced on every change

	stopOnce sync.Once
}

// Start watches the Pods bound to opts.NodeName and runs every one that is
// not yet finished; it returns once the first list is in hand (the Pods
// start in the background: use WaitRun).
func Start(ctx context.Context, opts Options) (*Runner, error) {
	switch {
	case opts.Client == nil:
		return nil, errors.New("nodepods: Client is required")
	case opts.NodeName == "":
		return nil, errors.New("nodepods: NodeName is required")
	case opts.Root == "" || !filepath.IsAbs(opts.Root):
		return nil, fmt.Errorf("nodepods: Root must be an absolute path, got %q", opts.Root)
	}
	if opts.LogDir == "" {
		opts.LogDir = filepath.Join(opts.Root, "var", "log", "nodepods")
	}
	if opts.MaxStopGrace <= 0 {
		opts.MaxStopGrace = DefaultMaxStopGrace
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if err := os.MkdirAll(opts.LogDir, 0o755); err != nil {
		return nil, fmt.Errorf("nodepods: %w", err)
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r := &Runner{opts: opts, ctx: rctx, cancel: cancel, workers: map[types.UID]*podWorker{}, changed: make(chan struct{})}
	factory := informers.NewSharedInformerFactoryWithOptions(opts.Client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", opts.NodeName).String()
		o.LabelSelector = opts.LabelSelector
	}))
	inf := factory.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    r.onPod,
		UpdateFunc: func(_, obj any) { r.onPod(obj) },
		DeleteFunc: r.onDelete,
	}); err != nil {
		cancel()
		return nil, fmt.Errorf("nodepods: %w", err)
	}
	factory.Start(rctx.Done())
	syncCtx, syncCancel := context.WithTimeout(ctx, syncTimeout)
	defer syncCancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced) {
		cancel()
		factory.Shutdown()
		return nil, fmt.Errorf("nodepods: node %s: the first list of its Pods did not arrive within %s", opts.NodeName, syncTimeout)
	}
	go func() {
		<-rctx.Done()
		factory.Shutdown()
	}()
	return r, nil
}

// Stop stops every process (SIGTERM, then SIGKILL after MaxStopGrace) and
// waits for them. The Pods and their status stay as they are, as when a
// node's kubelet stops. It is safe to call more than once.
func (r *Runner) Stop() {
	r.stopOnce.Do(func() {
		r.cancel()
		r.wg.Wait()
	})
}

// onPod hands a Pod to its worker, starting one for a Pod seen first.
// Mirror Pods are the kubelet's reflection of static Pods (run by
// staticpod): nothing to run.
func (r *Runner) onPod(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Spec.NodeName != r.opts.NodeName {
		return
	}
	if _, mirror := pod.Annotations[staticpod.AnnotationConfigMirror]; mirror {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.workers[pod.UID]
	if w == nil {
		if r.ctx.Err() != nil {
			return // stopping
		}
		w = newWorker(r, pod)
		r.workers[pod.UID] = w
		r.wg.Add(1)
		go w.loop(r.ctx)
	}
	w.set(pod)
}

// onDelete tells the worker of a Pod removed from the apiserver.
func (r *Runner) onDelete(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if w := r.workers[pod.UID]; w != nil {
		delete(r.workers, pod.UID)
		w.setGone()
	}
}

func (r *Runner) isBinary(base string) bool {
	_, ok := r.opts.Binaries[base]
	return ok
}

// binaryNames lists the keys of Options.Binaries, for messages.
func (r *Runner) binaryNames() string {
	names := make([]string, 0, len(r.opts.Binaries))
	for n := range r.opts.Binaries {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// record keeps an error for Errors and logs it.
func (r *Runner) record(err error) {
	r.opts.Logf("nodepods %s: %v", r.opts.NodeName, err)
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
	r.notify()
}

// notify wakes the waiters of WaitRun.
func (r *Runner) notify() {
	r.mu.Lock()
	defer r.mu.Unlock()
	close(r.changed)
	r.changed = make(chan struct{})
}

// addRunning counts a process that starts (+1) or ends (-1).
func (r *Runner) addRunning(d int) {
	r.mu.Lock()
	r.running += d
	r.maxRunning = max(r.maxRunning, r.running)
	r.mu.Unlock()
	if r.opts.Tally != nil {
		r.opts.Tally.add(d)
	}
}

// Errors returns the apiserver writes that failed, oldest first (a Pod
// that cannot start is not an error here: its Run says why).
func (r *Runner) Errors() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.errs)
}

// Runs returns every Pod taken on so far, in the order they started.
func (r *Runner) Runs() []Run {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Run, len(r.runs))
	for i, run := range r.runs {
		out[i] = *run
		out[i].Args = slices.Clone(run.Args)
	}
	return out
}

// MaxConcurrent is the most processes this Runner has run at once.
func (r *Runner) MaxConcurrent() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.maxRunning
}

// Running is how many processes run now.
func (r *Runner) Running() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.running
}

// WaitRun waits until the Pod namespace/name has a Run that is Done and
// returns it (the newest, if Pods of that name came and went).
func (r *Runner) WaitRun(ctx context.Context, namespace, name string) (Run, error) {
	for {
		r.mu.Lock()
		var found *Run
		for _, run := range slices.Backward(r.runs) {
			if run.Namespace == namespace && run.Name == name {
				found = run
				break
			}
		}
		var out Run
		if found != nil {
			out = *found
		}
		ch, errs := r.changed, len(r.errs)
		r.mu.Unlock()
		if found != nil && out.Done {
			return out, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			state := "not taken on"
			if found != nil {
				state = fmt.Sprintf("pid %d still runs", out.Pid)
			}
			return Run{}, fmt.Errorf("nodepods %s: Pod %s/%s: %w (%s; %d errors recorded)", r.opts.NodeName, namespace, name, ctx.Err(), state, errs)
		}
	}
}

// Tally counts the processes of the Runners sharing it (Options.Tally).
// Its methods are safe for concurrent use; the zero value is ready.
type Tally struct {
	mu           sync.Mutex
	running, max int
}

func (t *Tally) add(d int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.running += d
	t.max = max(t.max, t.running)
}

// Max is the most processes that ran at once.
func (t *Tally) Max() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.max
}

// Running is how many run now.
func (t *Tally) Running() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.running
}
