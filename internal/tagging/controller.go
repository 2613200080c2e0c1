package tagging

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/awsccmctl/awsccmctl/internal/instances"
	"github.com/awsccmctl/awsccmctl/pkg/providerid"
)

// Defaults for Config.
const (
	// DefaultBatchWindow is how long the worker lets the queue fill after
	// the first Node before it tags what is there: a joining fleet lands
	// in few calls.
	DefaultBatchWindow = 200 * time.Millisecond
	// DefaultNewNodeGrace is how long after a Node's creation an unknown
	// instance is retried rather than skipped: CreateTags is eventually
	// consistent for new instances (upstream waits as long).
	DefaultNewNodeGrace = 5 * time.Minute
	// maxBatch bounds the Nodes of one pass; one CreateTags call takes
	// MaxResourcesPerCall of them.
	maxBatch = MaxResourcesPerCall
	// maxRetries is how often a failing Node is retried with backoff
	// (0.5 s doubling to 5 min: about half an hour) before it is dropped;
	// a dropped Node needing tags is queued again by its next update.
	maxRetries   = 15
	retryBase    = 500 * time.Millisecond
	retryMax     = 5 * time.Minute
	eventsReason = "InstanceTaggingFailed"
)

// InstanceView is the part of the shared instance view the controller
// reads: present, absent or terminated, and the kept tags.
type InstanceView interface {
	ObserveIDs(ctx context.Context, ids []string) (map[string]instances.Observation, error)
}

// Config is what New needs.
type Config struct {
	// Tags go on each Node's instance; they must be valid (Options.Validate).
	Tags map[string]string
	// RateLimit and BurstLimit bound how fast Nodes enter the queue (both
	// positive, else unbounded).
	RateLimit  float64
	BurstLimit int
	Nodes      coreinformers.NodeInformer
	// Client patches the Node label and, without Events, sends events.
	Client    kubernetes.Interface
	EC2       EC2
	Instances InstanceView
	// ClusterID names the cluster tag in the hints of Warning events.
	ClusterID string
	// Events receives Warning events on Nodes; nil sends them through
	// Client while Run runs.
	Events      record.EventRecorder
	Clock       clock.PassiveClock
	BatchWindow time.Duration
	// NewNodeGrace is DefaultNewNodeGrace when zero.
	NewNodeGrace time.Duration
	// Metrics records outcomes; nil records nothing.
	Metrics *Metrics
}

// item is one unit of work. Adds carry only the Node's name (the worker
// reads the Node when it gets to it); removals carry the instance, as the
// Node is gone.
type item struct {
	node       string
	instanceID string
	remove     bool
}

// Controller tags the instances of Nodes.
type Controller struct {
	cfg      Config
	keys     []string
	checksum string
	nodes    corelisters.NodeLister
	synced   cache.InformerSynced
	queue    workqueue.TypedRateLimitingInterface[item]
	// addLimit paces Nodes into the queue (--tagging-controller-rate-limit
	// and -burst-limit); nil: no pacing.
	addLimit    *rate.Limiter
	broadcaster record.EventBroadcaster
	// suspects are the instances that failed alone in their last pass
	// (too many tags, denied): called apart from the others next time
	// (applyGrouped). Only the worker uses it.
	suspects map[string]bool
	// afterSync, when set (tests), sees every batch and its errors.
	afterSync func([]item, map[item]error)
}

// New returns a controller and registers its Node handlers; Run starts it
// with the same ctx. The event broadcaster it makes (when cfg.Events is
// nil) stops when ctx ends, as Run does.
func New(ctx context.Context, cfg Config) (*Controller, error) {
	if len(cfg.Tags) == 0 {
		return nil, fmt.Errorf("tagging controller: no tags to apply (--tags)")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.BatchWindow <= 0 {
		cfg.BatchWindow = DefaultBatchWindow
	}
	if cfg.NewNodeGrace <= 0 {
		cfg.NewNodeGrace = DefaultNewNodeGrace
	}
	// Retries back off per Node; the optional bucket paces new work
	// only. (Upstream puts both in one limiter, so each update of a Node
	// waiting in the queue doubles its delay as if it had failed.)
	limiter := workqueue.NewTypedItemExponentialFailureRateLimiter[item](retryBase, retryMax)
	var addLimit *rate.Limiter
	if cfg.RateLimit > 0 && cfg.BurstLimit > 0 {
		addLimit = rate.NewLimiter(rate.Limit(cfg.RateLimit), cfg.BurstLimit)
	}
	c := &Controller{
		cfg:      cfg,
		keys:     (&Options{Tags: cfg.Tags}).Keys(),
		checksum: Checksum(cfg.Tags),
		nodes:    cfg.Nodes.Lister(),
		synced:   cfg.Nodes.Informer().HasSynced,
		queue:    workqueue.NewTypedRateLimitingQueueWithConfig(limiter, workqueue.TypedRateLimitingQueueConfig[item]{Name: ClientName}),
		addLimit: addLimit,
		suspects: map[string]bool{},
	}
	if c.cfg.Events == nil {
		c.broadcaster = record.NewBroadcaster(record.WithContext(ctx))
		c.cfg.Events = c.broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: ClientName})
	}
	_, err := cfg.Nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.nodeChanged(obj) },
		UpdateFunc: func(_, obj any) { c.nodeChanged(obj) },
		DeleteFunc: c.nodeDeleted,
	})
	if err != nil {
		return nil, fmt.Errorf("tagging controller: watch Nodes: %w", err)
	}
	return c, nil
}

// Run works the queue until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	defer utilruntime.HandleCrash()
	defer c.queue.ShutDown()
	if c.broadcaster != nil {
		c.broadcaster.StartStructuredLogging(3)
		c.broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: c.cfg.Client.CoreV1().Events("")})
		defer c.broadcaster.Shutdown()
	}
	klog.InfoS("Starting the tagging controller", "tags", c.cfg.Tags, "checksum", c.checksum)
	if !cache.WaitForCacheSync(ctx.Done(), c.synced) {
		return
	}
	go func() {
		<-ctx.Done()
		c.queue.ShutDown()
	}()
	for c.processBatch(ctx) {
	}
}

// instanceID is the EC2 instance of node, "" when it has none (yet).
func instanceID(node *corev1.Node) string {
	if node.Spec.ProviderID == "" {
		return ""
	}
	id, err := providerid.Parse(node.Spec.ProviderID)
	if err != nil {
		return ""
	}
	return id.InstanceID
}

// needsTags reports whether node's instance is not known to carry the
// tags: the label is missing or was written for other tags.
func (c *Controller) needsTags(node *corev1.Node) bool {
	return node.Labels[LabelKey] != c.checksum
}

func (c *Controller) nodeChanged(obj any) {
	node, ok := obj.(*corev1.Node)
	if !ok || instanceID(node) == "" || !c.needsTags(node) {
		// Without a providerID the cloud node controller has not matched
		// the Node yet; it sets one, and that update brings the Node back.
		return
	}
	it := item{node: node.Name}
	if c.addLimit != nil {
		c.queue.AddAfter(it, c.addLimit.Reserve().Delay())
		return
	}
	c.queue.Add(it)
}

func (c *Controller) nodeDeleted(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	node, ok := obj.(*corev1.Node)
	if !ok {
		return
	}
	if id := instanceID(node); id != "" {
		c.queue.Add(item{node: node.Name, instanceID: id, remove: true})
	}
}

// processBatch takes the next item, waits BatchWindow for others, takes
// everything queued by then (up to maxBatch) and syncs it together.
// It returns false once the queue is shut down.
func (c *Controller) processBatch(ctx context.Context) bool {
	first, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	batch := []item{first}
	select {
	case <-ctx.Done():
	case <-time.After(c.cfg.BatchWindow):
	}
	// One worker: what Len counts is there for Get, which does not block.
	for len(batch) < maxBatch && c.queue.Len() > 0 {
		it, shutdown := c.queue.Get()
		if shutdown {
			break
		}
		batch = append(batch, it)
	}
	errs := c.sync(ctx, batch)
	if c.afterSync != nil {
		c.afterSync(batch, errs)
	}
	for _, it := range batch {
		err := errs[it]
		switch {
		case err == nil:
			c.queue.Forget(it)
		case c.queue.NumRequeues(it) < maxRetries:
			klog.V(2).InfoS("Tagging failed; will retry", "node", it.node, "remove", it.remove, "err", err)
			c.queue.AddRateLimited(it)
		default:
			klog.ErrorS(err, "Tagging failed; giving up until the Node changes", "node", it.node, "remove", it.remove, "retries", maxRetries)
			c.queue.Forget(it)
		}
		c.queue.Done(it)
	}
	return true
}
