package topology

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/smithy-go"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/awsccmctl/awsccmctl/internal/coalesce"
)

// DescribeInstanceTopologyFunc is ec2.Client.DescribeInstanceTopology as a
// value (see internal/awsapi/calls.go for why not an interface).
type DescribeInstanceTopologyFunc func(context.Context, *ec2.DescribeInstanceTopologyInput, ...func(*ec2.Options)) (*ec2.DescribeInstanceTopologyOutput, error)

// DescribeInstanceTopology lets f serve as ec2.DescribeInstanceTopologyAPIClient.
func (f DescribeInstanceTopologyFunc) DescribeInstanceTopology(ctx context.Context, in *ec2.DescribeInstanceTopologyInput, optFns ...func(*ec2.Options)) (*ec2.DescribeInstanceTopologyOutput, error) {
	return f(ctx, in, optFns...)
}

// EC2 lists the EC2 operations the package calls.
type EC2 struct {
	DescribeInstanceTopology DescribeInstanceTopologyFunc
}

// NewEC2 takes the calls from a client.
func NewEC2(c *ec2.Client) EC2 { return EC2{DescribeInstanceTopology: c.DescribeInstanceTopology} }

const (
	// MaxIDsPerCall is EC2's limit of InstanceId.N per call. MaxResults
	// may not come with instance IDs, so each call is paged by EC2's
	// default of 20 through NextToken.
	MaxIDsPerCall = 100
	// UnsupportedFor is how long a type EC2 lists no topology for, or a
	// region without the API, is not asked about again (upstream's 24 h).
	UnsupportedFor = 24 * time.Hour
	// DeniedFor is how long a denied DescribeInstanceTopology is not asked
	// again: joining Nodes are initialized without network-node labels
	// meanwhile. Short, unlike upstream's 24 h, so that labels come back
	// within minutes of the operator granting the permission.
	DeniedFor = 5 * time.Minute
	// DefaultBatchWindow is how long a lookup waits for other Nodes.
	DefaultBatchWindow = 100 * time.Millisecond
	batchTimeout       = 2 * time.Minute
)

// ErrNoTopology means EC2 answered, but not with network nodes for the
// instance (its type has none, or it is not running yet).
var ErrNoTopology = errors.New("EC2 reports no instance topology")

// RequiredError is a failed or empty lookup for an instance whose type
// matches the required pattern: its Node must not be initialized yet.
type RequiredError struct {
	InstanceID, Type, Pattern string
	// Err is ErrNoTopology or the EC2 error.
	Err error
}

func (e *RequiredError) Error() string {
	return fmt.Sprintf("instance topology of %s (%s, matches SupportedTopologyInstanceTypePattern %q): %v", e.InstanceID, e.Type, e.Pattern, e.Err)
}

func (e *RequiredError) Unwrap() error { return e.Err }

// DeniedError is the answer for an instance whose type matches the
// required pattern while IAM denies ec2:DescribeInstanceTopology: the Node
// must be initialized without its network-node labels (a missing optional
// permission must not keep Nodes out of the cluster), and the operator
// told. Types not required get no error at all, only the metric.
type DeniedError struct {
	InstanceID, Type, Pattern string
	// Err is EC2's UnauthorizedOperation, from this lookup or from the one
	// that started the DeniedFor window.
	Err error
}

func (e *DeniedError) Error() string {
	return fmt.Sprintf("instance topology of %s (%s, matches SupportedTopologyInstanceTypePattern %q): ec2:DescribeInstanceTopology is denied: %v",
		e.InstanceID, e.Type, e.Pattern, e.Err)
}

func (e *DeniedError) Unwrap() error { return e.Err }

// denied reports whether err is IAM's refusal of the call.
func denied(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && (ae.ErrorCode() == "UnauthorizedOperation" || ae.ErrorCode() == "AccessDenied")
}

// Options configure a Reader.
type Options struct {
	// Required matches the types that must get an answer; nil: none.
	Required *regexp.Regexp
	// BatchWindow is how long a lookup waits for others to join it.
	BatchWindow time.Duration
	// Clock times the unsupported memory (tests step it).
	Clock clock.PassiveClock
	// Metrics counts Nodes left without labels by a denial; nil records
	// nothing.
	Metrics *Metrics
}

// Reader answers NetworkNodes. It is safe for concurrent use.
type Reader struct {
	api   EC2
	opts  Options
	group *coalesce.Group[map[string]answer]

	mu sync.Mutex
	// unsupported holds until when an instance type is not asked about.
	unsupported map[string]time.Time
	// apiMissingUntil: the region has no DescribeInstanceTopology.
	apiMissingUntil time.Time
	// deniedUntil: IAM denied the call; deniedErr is its answer.
	deniedUntil time.Time
	deniedErr   error
	// listed are the types EC2 has listed an instance of: all their
	// instances are asked about at once.
	listed map[string]bool
	// types are the instance types of the IDs callers ask about (batch
	// keys are IDs), with when they were asked.
	types map[string]typeAsked
}

type typeAsked struct {
	typ string
	at  time.Time
}

type answer struct {
	listed bool
	nodes  []string
	err    error
}

// New returns a Reader over api.
func New(api EC2, opts Options) *Reader {
	if opts.BatchWindow <= 0 {
		opts.BatchWindow = DefaultBatchWindow
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	r := &Reader{api: api, opts: opts, unsupported: map[string]time.Time{}, listed: map[string]bool{}, types: map[string]typeAsked{}}
	r.group = coalesce.New(opts.BatchWindow, batchTimeout, r.lookup)
	return r
}

// Required reports whether instanceType must get a topology answer.
func (r *Reader) Required(instanceType string) bool {
	return r.opts.Required != nil && r.opts.Required.MatchString(instanceType)
}

// NetworkNodes returns the network nodes of instance id (of instanceType),
// from the spine down to the instance's own. Nil with no error: there are
// none to label, and for a type not Required that includes failed calls
// (logged). Errors are *RequiredError (the Node must wait), *DeniedError
// (the Node must be initialized without labels, and told why), or ctx's
// when it ends first.
func (r *Reader) NetworkNodes(ctx context.Context, id, instanceType string) ([]string, error) {
	if instanceType == "" {
		return nil, nil
	}
	if err := r.deniedErrNow(); err != nil {
		return nil, r.deny(id, instanceType, err)
	}
	if r.skip(instanceType) {
		return nil, nil
	}
	r.mu.Lock()
	r.types[id] = typeAsked{typ: instanceType, at: r.opts.Clock.Now()}
	r.mu.Unlock()
	res, err := r.group.Do(ctx, id)
	if err != nil {
		return nil, err // the caller gave up; that is no answer about the type
	}
	a, ok := res[id]
	if !ok {
		a.err = fmt.Errorf("lookup finished without an answer for %s", id)
	}
	if a.err == nil && len(a.nodes) > 0 {
		return a.nodes, nil
	}
	if a.err != nil && r.apiMissing() {
		return nil, nil // logged once by lookup
	}
	if a.err != nil && denied(a.err) {
		return nil, r.deny(id, instanceType, a.err)
	}
	if r.Required(instanceType) {
		if a.err == nil {
			a.err = ErrNoTopology
		}
		return nil, &RequiredError{InstanceID: id, Type: instanceType, Pattern: r.opts.Required.String(), Err: a.err}
	}
	switch {
	case a.err != nil:
		klog.InfoS("Cannot read the instance topology; the Node is initialized without network-node labels (its type does not match SupportedTopologyInstanceTypePattern)",
			"instance", id, "instanceType", instanceType, "err", a.err)
	case !a.listed:
		r.markUnsupported(instanceType)
	default:
		klog.V(2).InfoS("Instance listed without network nodes (not running yet?); no network-node labels", "instance", id, "instanceType", instanceType)
	}
	return nil, nil
}

func (r *Reader) skip(instanceType string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.opts.Clock.Now()
	if now.Before(r.apiMissingUntil) {
		return true
	}
	until, ok := r.unsupported[instanceType]
	if ok && !now.Before(until) {
		delete(r.unsupported, instanceType)
		return false
	}
	return ok
}

// deniedErrNow returns IAM's denial while DeniedFor has not passed.
func (r *Reader) deniedErrNow() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.opts.Clock.Now().Before(r.deniedUntil) {
		return r.deniedErr
	}
	return nil
}

// deny is the answer for an instance while the call is denied: a
// *DeniedError for a required type, none for others; counted either way.
func (r *Reader) deny(id, instanceType string, err error) error {
	required := r.Required(instanceType)
	r.opts.Metrics.denied(required)
	if !required {
		klog.V(2).InfoS("ec2:DescribeInstanceTopology is denied; the Node is initialized without network-node labels", "instance", id, "instanceType", instanceType)
		return nil
	}
	return &DeniedError{InstanceID: id, Type: instanceType, Pattern: r.opts.Required.String(), Err: err}
}

func (r *Reader) apiMissing() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.opts.Clock.Now().Before(r.apiMissingUntil)
}

func (r *Reader) markUnsupported(instanceType string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.unsupported[instanceType]; !ok {
		klog.InfoS("EC2 lists no instance topology for this instance type; not asking again for 24h", "instanceType", instanceType)
	}
	r.unsupported[instanceType] = r.opts.Clock.Now().Add(UnsupportedFor)
}

// lookup answers for ids. Of a type that is neither required nor yet
// listed by EC2, it first asks about one instance only: most types have no
// topology, and one unlisted instance answers for all (a fleet of 1,000
// m5.large Nodes joining costs one call, not ten). The others are asked
// about in a second round if EC2 lists that one.
func (r *Reader) lookup(ctx context.Context, ids []string) (map[string]answer, error) {
	slices.Sort(ids)
	now := r.opts.Clock.Now()
	var first []string
	probe := map[string]string{}  // type -> the ID asked about first
	rest := map[string][]string{} // type -> IDs waiting for the probe
	r.mu.Lock()
	for _, id := range ids {
		typ := r.types[id].typ
		if _, probing := probe[typ]; probing && !r.Required(typ) && !r.listed[typ] {
			rest[typ] = append(rest[typ], id)
			continue
		}
		probe[typ] = id
		first = append(first, id)
	}
	for id, t := range r.types {
		if now.Sub(t.at) > batchTimeout {
			delete(r.types, id)
		}
	}
	r.mu.Unlock()

	out := r.ask(ctx, first)
	var second []string
	for typ, ids := range rest {
		if a := out[probe[typ]]; a.err == nil && a.listed {
			second = append(second, ids...)
			continue
		}
		for _, id := range ids {
			out[id] = answer{err: out[probe[typ]].err} // not listed, or the same error
		}
	}
	maps.Copy(out, r.ask(ctx, second))
	return out, nil
}

// ask asks EC2 about ids, MaxIDsPerCall at a time, following NextToken. A
// failed chunk fails only its own IDs.
func (r *Reader) ask(ctx context.Context, ids []string) map[string]answer {
	slices.Sort(ids)
	out := make(map[string]answer, len(ids))
	for chunk := range slices.Chunk(ids, MaxIDsPerCall) {
		found, err := r.describe(ctx, chunk)
		if err != nil {
			var ae smithy.APIError
			switch {
			case errors.As(err, &ae) && ae.ErrorCode() == "UnsupportedOperation":
				r.mu.Lock()
				r.apiMissingUntil = r.opts.Clock.Now().Add(UnsupportedFor)
				r.mu.Unlock()
				klog.InfoS("DescribeInstanceTopology is not available in this region; no network-node labels for 24h", "err", err)
			case denied(err):
				// A missing permission is the operator's choice or
				// mistake, not the Nodes': they are initialized
				// without labels, and not asked about again for a
				// while, as upstream does (for 24 h there).
				r.mu.Lock()
				r.deniedUntil, r.deniedErr = r.opts.Clock.Now().Add(DeniedFor), err
				r.mu.Unlock()
				klog.InfoS("ec2:DescribeInstanceTopology is denied; joining Nodes are initialized without network-node labels, and the call is tried again in 5m",
					"err", err)
			}
		}
		r.mu.Lock()
		for _, id := range chunk {
			if err != nil {
				out[id] = answer{err: err}
				continue
			}
			nodes, listed := found[id]
			out[id] = answer{listed: listed, nodes: nodes}
			if listed {
				r.listed[r.types[id].typ] = true
			}
		}
		r.mu.Unlock()
	}
	return out
}

func (r *Reader) describe(ctx context.Context, ids []string) (map[string][]string, error) {
	found := map[string][]string{}
	in := &ec2.DescribeInstanceTopologyInput{InstanceIds: ids}
	for p := ec2.NewDescribeInstanceTopologyPaginator(r.api.DescribeInstanceTopology, in); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("describe instance topology of %d instances: %w", len(ids), err)
		}
		for _, it := range page.Instances {
			found[aws.ToString(it.InstanceId)] = it.NetworkNodes
		}
	}
	return found, nil
}
