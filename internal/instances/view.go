package instances

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
	"github.com/awsccmctl/awsccmctl/internal/coalesce"
)

// EC2 lists the EC2 operations the view calls (the access style of
// internal/awsapi/calls.go).
type EC2 struct {
	DescribeInstances awsapi.DescribeInstancesFunc
}

// NewEC2 takes the calls from a client.
func NewEC2(c *ec2.Client) EC2 {
	return EC2{DescribeInstances: c.DescribeInstances}
}

// Defaults for Options.
const (
	DefaultMaxAge      = 30 * time.Second
	DefaultBatchWindow = 20 * time.Millisecond
	// MaxFilterValues is how many values one filter carries; upstream uses
	// the same bound.
	MaxFilterValues = 150
	// pageSize is EC2's largest DescribeInstances page.
	pageSize     = 1000
	batchTimeout = 2 * time.Minute
	// forgetAfter drops entries nobody asked about for this long.
	forgetAfter = time.Hour
)

// liveStates are the states a private DNS name lookup considers: a
// terminated instance's name may already belong to a new instance.
var liveStates = []string{"pending", "running", "shutting-down", "stopping", "stopped"}

// Candidates are instances the cluster's Nodes will ask about: instance IDs
// from providerIDs and resource-based names, and private DNS names of Nodes
// without providerID. Lookups are topped up with the stale ones.
type Candidates struct {
	IDs   []string
	Names []string
}

// Options configure a View.
type Options struct {
	// ClusterFilters select the cluster's instances for the snapshot, e.g.
	// tag-key=kubernetes.io/cluster/<id>. Empty disables the snapshot.
	ClusterFilters []ec2types.Filter
	// VPCID scopes private DNS name lookups (names repeat across VPCs).
	VPCID string
	// MaxAge is how long an observation answers without asking EC2.
	MaxAge time.Duration
	// BatchWindow is how long a lookup waits for others to join it.
	BatchWindow time.Duration
	// Candidates returns what the cluster will ask about; may be nil.
	Candidates func() Candidates
	// Clock stamps observations (tests step it).
	Clock clock.PassiveClock
	// Metrics records hit rates and batch sizes; nil records nothing.
	Metrics *Metrics
	// TagKeys are the tag keys each Instance keeps (Instance.Tags), e.g.
	// the tagging controller's; the others are dropped to keep the view
	// small. Empty keeps none.
	TagKeys []string
}

// Observation is what the view knows of one instance.
type Observation struct {
	// Instance is nil when the instance was absent from the last successful
	// lookup.
	Instance *Instance
	// ObservedAt is when the lookup that produced this answer started.
	ObservedAt time.Time
	// AbsentSince is when successful lookups started to miss the instance;
	// zero while it is present.
	AbsentSince time.Time
	// AbsentChecks counts consecutive successful lookups that missed it.
	AbsentChecks int
}

type entry struct {
	Observation
	lastWanted time.Time
}

// View is the shared instance view. It is safe for concurrent use.
type View struct {
	api  EC2
	opts Options

	snapshotMu sync.Mutex // serialises snapshot refreshes
	ids        *coalesce.Group[struct{}]
	names      *coalesce.Group[struct{}]

	mu         sync.Mutex
	byID       map[string]*entry
	nameToID   map[string]string
	nameMiss   map[string]time.Time
	snapshotAt time.Time
}

// New returns a view over api.
func New(api EC2, opts Options) *View {
	if opts.MaxAge <= 0 {
		opts.MaxAge = DefaultMaxAge
	}
	if opts.BatchWindow <= 0 {
		opts.BatchWindow = DefaultBatchWindow
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	v := &View{
		api:      api,
		opts:     opts,
		byID:     map[string]*entry{},
		nameToID: map[string]string{},
		nameMiss: map[string]time.Time{},
	}
	v.ids = coalesce.New(opts.BatchWindow, batchTimeout, recorded(v.lookupIDs))
	v.names = coalesce.New(opts.BatchWindow, batchTimeout, recorded(v.lookupNames))
	return v
}

// recorded adapts a lookup that records its answers in the view to a
// coalesce run, whose waiters then read the view.
func recorded(lookup func(context.Context, []string) error) func(context.Context, []string) (struct{}, error) {
	return func(ctx context.Context, keys []string) (struct{}, error) { return struct{}{}, lookup(ctx, keys) }
}

// ErrNotFound is returned by ByName when no live instance has the name.
var ErrNotFound = errors.New("no instance found")

// ByID returns the observation of instance id, asking EC2 only when what
// the view knows is older than MaxAge. An error means EC2 could not be
// asked; it is never turned into absence.
func (v *View) ByID(ctx context.Context, id string) (Observation, error) {
	if obs, ok := v.freshByID(id); ok {
		v.opts.Metrics.lookup("id", true)
		return obs, nil
	}
	v.opts.Metrics.lookup("id", false)
	if err := v.refreshSnapshotIfStale(ctx); err != nil {
		return Observation{}, err
	}
	if obs, ok := v.freshByID(id); ok {
		return obs, nil
	}
	if _, err := v.ids.Do(ctx, id); err != nil {
		return Observation{}, fmt.Errorf("describe instance %s: %w", id, err)
	}
	if obs, ok := v.freshByID(id); ok {
		return obs, nil
	}
	return Observation{}, fmt.Errorf("describe instance %s: lookup finished without an answer", id)
}

// ByIDs returns the instances of ids that EC2 reports, by ID; an ID that
// was absent from the last successful lookup is not in the map. See
// ObserveIDs for how the view answers.
func (v *View) ByIDs(ctx context.Context, ids []string) (map[string]*Instance, error) {
	obs, err := v.ObserveIDs(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*Instance, len(obs))
	for id, o := range obs {
		if o.Instance != nil {
			out[id] = o.Instance
		}
	}
	return out, nil
}

// ObserveIDs returns the observation of every one of ids, by ID. Fresh
// entries answer from memory; all the others are looked up together, in the
// same batch as concurrent ByID calls and in MaxFilterValues chunks. An
// error means EC2 could not answer for some of ids: nothing is returned
// then, and nothing is taken as absent.
func (v *View) ObserveIDs(ctx context.Context, ids []string) (map[string]Observation, error) {
	out := make(map[string]Observation, len(ids))
	seen := make(map[string]bool, len(ids))
	var stale []string
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		if obs, ok := v.freshByID(id); ok {
			v.opts.Metrics.lookup("id", true)
			out[id] = obs
			continue
		}
		v.opts.Metrics.lookup("id", false)
		stale = append(stale, id)
	}
	if len(stale) == 0 {
		return out, nil
	}
	if err := v.refreshSnapshotIfStale(ctx); err != nil {
		return nil, err
	}
	var missing []string
	for _, id := range stale {
		if obs, ok := v.freshByID(id); ok {
			out[id] = obs
		} else {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	if _, err := v.ids.Do(ctx, missing...); err != nil {
		return nil, fmt.Errorf("describe %d instances: %w", len(missing), err)
	}
	for _, id := range missing {
		obs, ok := v.freshByID(id)
		if !ok {
			return nil, fmt.Errorf("describe instance %s: lookup finished without an answer", id)
		}
		out[id] = obs
	}
	return out, nil
}

// ByName returns the live instance whose private DNS name is name, or
// ErrNotFound.
func (v *View) ByName(ctx context.Context, name string) (*Instance, error) {
	if inst, ok, err := v.freshByName(name); ok {
		v.opts.Metrics.lookup("name", true)
		return inst, err
	}
	v.opts.Metrics.lookup("name", false)
	if err := v.refreshSnapshotIfStale(ctx); err != nil {
		return nil, err
	}
	if inst, ok, err := v.freshByName(name); ok {
		return inst, err
	}
	if _, err := v.names.Do(ctx, name); err != nil {
		return nil, fmt.Errorf("find instance by private DNS name %s: %w", name, err)
	}
	if inst, ok, err := v.freshByName(name); ok {
		return inst, err
	}
	return nil, fmt.Errorf("find instance by private DNS name %s: lookup finished without an answer", name)
}

func (v *View) fresh(t time.Time) bool {
	return !t.IsZero() && v.opts.Clock.Since(t) < v.opts.MaxAge
}

func (v *View) freshByID(id string) (Observation, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	e := v.byID[id]
	if e == nil {
		e = &entry{}
		v.byID[id] = e
	}
	e.lastWanted = v.opts.Clock.Now()
	if v.fresh(e.ObservedAt) {
		return e.Observation, true
	}
	return Observation{}, false
}

func (v *View) freshByName(name string) (*Instance, bool, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if id, ok := v.nameToID[name]; ok {
		if e := v.byID[id]; e != nil && e.Instance != nil && e.Instance.PrivateDNSName == name && !e.Instance.Terminated() && v.fresh(e.ObservedAt) {
			e.lastWanted = v.opts.Clock.Now()
			return e.Instance, true, nil
		}
	}
	if t, ok := v.nameMiss[name]; ok && v.fresh(t) {
		return nil, true, ErrNotFound
	}
	return nil, false, nil
}

// refreshSnapshotIfStale lists every cluster-tagged instance when the last
// list is older than MaxAge. Concurrent callers share one refresh.
func (v *View) refreshSnapshotIfStale(ctx context.Context) error {
	if len(v.opts.ClusterFilters) == 0 {
		return nil
	}
	v.snapshotMu.Lock()
	defer v.snapshotMu.Unlock()
	v.mu.Lock()
	stale := !v.fresh(v.snapshotAt)
	v.mu.Unlock()
	if !stale {
		return nil
	}
	start := v.opts.Clock.Now()
	defer holdLowGC()() // see refreshGCPercent
	var found []*Instance
	in := &ec2.DescribeInstancesInput{Filters: v.opts.ClusterFilters, MaxResults: aws.Int32(pageSize)}
	for p := ec2.NewDescribeInstancesPaginator(v.api.DescribeInstances, in); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("list cluster instances: %w", err)
		}
		found = appendInstances(found, page, v.opts.TagKeys)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, inst := range found {
		v.recordPresentLocked(inst, start)
	}
	v.snapshotAt = start
	v.forgetLocked(start)
	v.opts.Metrics.batchSize("snapshot", len(found))
	klog.V(4).InfoS("Listed cluster instances", "count", len(found))
	return nil
}

// lookupIDs runs one batched lookup by instance-id filter, topped up with
// stale candidates, and records presence and absence.
func (v *View) lookupIDs(ctx context.Context, ids []string) error {
	ids = v.topUp(ids, func(c Candidates) []string { return c.IDs }, v.staleIDLocked)
	for chunk := range slices.Chunk(ids, MaxFilterValues) {
		v.opts.Metrics.batchSize("id", len(chunk))
		start := v.opts.Clock.Now()
		found, err := v.describe(ctx, []ec2types.Filter{{Name: aws.String("instance-id"), Values: chunk}})
		if err != nil {
			return err
		}
		v.mu.Lock()
		seen := map[string]bool{}
		for _, inst := range found {
			seen[inst.ID] = true
			v.recordPresentLocked(inst, start)
		}
		for _, id := range chunk {
			if !seen[id] {
				v.recordAbsentLocked(id, start)
			}
		}
		v.mu.Unlock()
	}
	return nil
}

// lookupNames runs one batched lookup by private DNS name.
func (v *View) lookupNames(ctx context.Context, names []string) error {
	names = v.topUp(names, func(c Candidates) []string { return c.Names }, v.staleNameLocked)
	for chunk := range slices.Chunk(names, MaxFilterValues) {
		v.opts.Metrics.batchSize("name", len(chunk))
		start := v.opts.Clock.Now()
		filters := []ec2types.Filter{
			{Name: aws.String("private-dns-name"), Values: chunk},
			{Name: aws.String("instance-state-name"), Values: liveStates},
		}
		if v.opts.VPCID != "" {
			filters = append(filters, ec2types.Filter{Name: aws.String("vpc-id"), Values: []string{v.opts.VPCID}})
		}
		found, err := v.describe(ctx, filters)
		if err != nil {
			return err
		}
		v.mu.Lock()
		byName := map[string][]*Instance{}
		for _, inst := range found {
			byName[inst.PrivateDNSName] = append(byName[inst.PrivateDNSName], inst)
			v.recordPresentLocked(inst, start)
		}
		for _, name := range chunk {
			if len(byName[name]) == 0 {
				v.nameMiss[name] = start
			} else {
				delete(v.nameMiss, name)
			}
		}
		v.mu.Unlock()
	}
	return nil
}

// topUp adds stale candidates to keys, but only up to the end of the last
// chunk the keys need anyway: prefetching never adds a call.
func (v *View) topUp(keys []string, pick func(Candidates) []string, stale func(string) bool) []string {
	if v.opts.Candidates == nil {
		return keys
	}
	room := (MaxFilterValues - len(keys)%MaxFilterValues) % MaxFilterValues
	if room == 0 {
		return keys
	}
	have := map[string]bool{}
	for _, k := range keys {
		have[k] = true
	}
	cands := pick(v.opts.Candidates())
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, c := range cands {
		if room == 0 {
			break
		}
		if c != "" && !have[c] && stale(c) {
			have[c] = true
			keys = append(keys, c)
			room--
		}
	}
	return keys
}

func (v *View) staleIDLocked(id string) bool {
	e := v.byID[id]
	return e == nil || !v.fresh(e.ObservedAt)
}

func (v *View) staleNameLocked(name string) bool {
	if id, ok := v.nameToID[name]; ok {
		if e := v.byID[id]; e != nil && v.fresh(e.ObservedAt) && e.Instance != nil && e.Instance.PrivateDNSName == name {
			return false
		}
	}
	t, ok := v.nameMiss[name]
	return !ok || !v.fresh(t)
}

func (v *View) describe(ctx context.Context, filters []ec2types.Filter) ([]*Instance, error) {
	var found []*Instance
	in := &ec2.DescribeInstancesInput{Filters: filters, MaxResults: aws.Int32(pageSize)}
	for p := ec2.NewDescribeInstancesPaginator(v.api.DescribeInstances, in); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		found = appendInstances(found, page, v.opts.TagKeys)
	}
	return found, nil
}

func appendInstances(dst []*Instance, page *ec2.DescribeInstancesOutput, tagKeys []string) []*Instance {
	for _, r := range page.Reservations {
		for _, in := range r.Instances {
			inst := fromEC2(in)
			inst.Tags = keptTags(in.Tags, tagKeys)
			dst = append(dst, inst)
		}
	}
	return dst
}

func (v *View) recordPresentLocked(inst *Instance, at time.Time) {
	e := v.byID[inst.ID]
	if e == nil {
		e = &entry{}
		v.byID[inst.ID] = e
	}
	if at.Before(e.ObservedAt) {
		return // a newer lookup already answered
	}
	e.Observation = Observation{Instance: inst, ObservedAt: at}
	if inst.PrivateDNSName != "" && !inst.Terminated() {
		v.nameToID[inst.PrivateDNSName] = inst.ID
	}
}

func (v *View) recordAbsentLocked(id string, at time.Time) {
	e := v.byID[id]
	if e == nil {
		e = &entry{}
		v.byID[id] = e
	}
	if at.Before(e.ObservedAt) {
		return
	}
	if e.AbsentSince.IsZero() {
		e.AbsentSince = at
		e.AbsentChecks = 0
	}
	e.AbsentChecks++
	e.Instance = nil
	e.ObservedAt = at
}

// forgetLocked drops entries nobody asked about for forgetAfter and that the
// latest snapshot did not refresh.
func (v *View) forgetLocked(now time.Time) {
	for id, e := range v.byID {
		if now.Sub(e.lastWanted) > forgetAfter && now.Sub(e.ObservedAt) > forgetAfter {
			delete(v.byID, id)
		}
	}
	for name, id := range v.nameToID {
		if _, ok := v.byID[id]; !ok {
			delete(v.nameToID, name)
		}
	}
	for name, t := range v.nameMiss {
		if now.Sub(t) > forgetAfter {
			delete(v.nameMiss, name)
		}
	}
}
