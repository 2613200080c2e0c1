package tagging

import (
	"crypto/md5" //nolint:gosec // upstream's label value is an MD5 checksum (wire contract), not a security measure
	"encoding/csv"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/awsccmctl/awsccmctl/internal/clustertag"
)

// Names shared with kubernetes/cloud-provider-aws (wire contracts: users'
// --controllers lists, RBAC and Node labels name them).
const (
	// ControllerName is the controller's key in --controllers.
	ControllerName = "tagging"
	// ClientName is the Kubernetes client's user agent and, with
	// --use-service-account-credentials, its ServiceAccount.
	ClientName = "tagging-controller"
	// LabelKey is the Node label holding the checksum of the tags last
	// applied to the Node's instance.
	LabelKey = "k8s.io/cloud-provider-aws"
	// ResourceInstance is the only --resources value: the Node's instance.
	ResourceInstance = "instance"
)

// EC2 limits on tags (CreateTags, "Tag restrictions" in the EC2 user guide).
const (
	maxTagsPerResource = 50
	maxKeyLength       = 128
	maxValueLength     = 256
)

// Options are the controller's flags, upstream's names and types.
type Options struct {
	// Tags are put on each Node's instance (--tags k=v,...).
	Tags map[string]string
	// Resources are the resource types tagged (--resources instance).
	Resources []string
	// RateLimit and BurstLimit bound how fast Nodes enter the work queue;
	// zero for either means no bound beyond the per-Node retry backoff.
	RateLimit  float64
	BurstLimit int
	// Accepted for upstream's command lines, without effect here.
	workers  int
	batching bool
}

// NewOptions returns the defaults: nothing to tag.
func NewOptions() *Options { return &Options{workers: 1} }

// AddFlags registers the flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.Var(&tagsValue{tags: &o.Tags}, "tags",
		"Tags the tagging controller (--controllers=*,tagging) puts on each Node's EC2 instance, as key=value,key=value; they are removed again when the Node is deleted. Keys may not start with aws: or be a cluster tag.")
	fs.StringArrayVar(&o.Resources, "resources", o.Resources,
		"Resource types the tagging controller tags; one flag per type. Only instance is supported. Required with the tagging controller.")
	fs.Float64Var(&o.RateLimit, "tagging-controller-rate-limit", o.RateLimit,
		"Steady rate (Nodes per second) at which the tagging controller takes Nodes into its queue; 0 disables the limit.")
	fs.IntVar(&o.BurstLimit, "tagging-controller-burst-limit", o.BurstLimit,
		"Burst of Nodes the tagging controller takes into its queue above --tagging-controller-rate-limit; 0 disables the limit.")
	fs.IntVar(&o.workers, "tagging-controller-concurrent-node-syncs", o.workers,
		"Accepted for compatibility with kubernetes/cloud-provider-aws.")
	fs.BoolVar(&o.batching, "tagging-controller-enable-batching", o.batching,
		"Accepted for compatibility with kubernetes/cloud-provider-aws.")
	_ = fs.MarkDeprecated("tagging-controller-concurrent-node-syncs", "it has no effect: one worker tags all Nodes in batches")
	_ = fs.MarkDeprecated("tagging-controller-enable-batching", "it has no effect: CreateTags and DeleteTags are always batched")
}

// Validate returns every problem with the flags at once. enabled is
// whether the tagging controller runs: only then are --tags and
// --resources required.
func (o *Options) Validate(enabled bool) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if enabled && len(o.Tags) == 0 {
		bad("--tags is empty: the tagging controller (--controllers=...,%s) needs the tags to put on instances, e.g. --tags=team=blue,env=prod", ControllerName)
	}
	if enabled && len(o.Resources) == 0 {
		bad("--resources is empty: the tagging controller needs the resource types to tag: add --resources=%s", ResourceInstance)
	}
	for _, r := range o.Resources {
		if r != ResourceInstance {
			bad("--resources=%q: unknown resource type; the only one is %q", r, ResourceInstance)
		}
	}
	if len(o.Tags) > maxTagsPerResource {
		bad("--tags has %d tags; EC2 allows at most %d on a resource, the instance's own tags included", len(o.Tags), maxTagsPerResource)
	}
	for _, k := range slices.Sorted(maps.Keys(o.Tags)) {
		v := o.Tags[k]
		switch {
		case strings.TrimSpace(k) == "":
			bad("--tags: a tag has an empty key (=%s); write key=value", v)
		case strings.HasPrefix(strings.ToLower(k), "aws:"):
			bad("--tags: key %q: the aws: prefix is reserved for AWS; choose another key", k)
		case strings.HasPrefix(k, clustertag.Prefix) || k == clustertag.LegacyKey:
			bad("--tags: key %q is a cluster tag: the cluster's tooling owns it, and the controller would remove it from instances whose Node goes; leave it out", k)
		case k == LabelKey:
			bad("--tags: key %q is the controller's own Node label; choose another key", k)
		case len(k) > maxKeyLength:
			bad("--tags: key %q is %d characters; EC2 allows at most %d", k, len(k), maxKeyLength)
		case len(v) > maxValueLength:
			bad("--tags: the value of %q is %d characters; EC2 allows at most %d", k, len(v), maxValueLength)
		}
	}
	if o.RateLimit < 0 {
		bad("--tagging-controller-rate-limit=%v: must be 0 (no limit) or positive", o.RateLimit)
	}
	if o.BurstLimit < 0 {
		bad("--tagging-controller-burst-limit=%d: must be 0 (no limit) or positive", o.BurstLimit)
	}
	if o.workers <= 0 {
		bad("--tagging-controller-concurrent-node-syncs=%d: must be positive (it has no effect here)", o.workers)
	}
	return errors.Join(errs...)
}

// Keys are the tag keys, sorted.
func (o *Options) Keys() []string { return slices.Sorted(maps.Keys(o.Tags)) }

// Checksum is the value of the LabelKey label for these tags, computed as
// upstream does (wire contract: a Node labelled by upstream's controller
// with the same tags is not tagged again): the MD5 of the sorted key=value
// pairs joined by commas, in hex.
func Checksum(tags map[string]string) string {
	pairs := make([]string, 0, len(tags))
	for k, v := range tags {
		pairs = append(pairs, k+"="+v)
	}
	slices.Sort(pairs)
	return fmt.Sprintf("%x", md5.Sum([]byte(strings.Join(pairs, ",")))) //nolint:gosec // see the import
}

// ViewTagKeys are the tag keys the shared instance view must keep for the
// controller (instances.Options.TagKeys): the configured ones, to skip
// instances already tagged, and the cluster tag's, to keep the cluster's
// instances in calls of their own (see applyByOwnership).
func ViewTagKeys(tags map[string]string, clusterID string) []string {
	if len(tags) == 0 {
		return nil
	}
	return append(slices.Sorted(maps.Keys(tags)), clustertag.Key(clusterID), clustertag.LegacyKey)
}

// tagsValue is --tags: pflag's stringToString (upstream's type, same
// syntax and merging of repeated flags), except that every comma separates
// pairs. pflag's own takes "a=b,c" as a=(b,c) when only one = is present,
// so a pair missing its = would pass unnoticed; here it is an error, and
// a value holding a comma is quoted as in CSV: "a=b,c".
type tagsValue struct {
	tags    *map[string]string
	changed bool
}

func (v *tagsValue) Set(s string) error {
	pairs, err := csv.NewReader(strings.NewReader(s)).Read()
	if err != nil {
		return fmt.Errorf("%s: %w", s, err)
	}
	if !v.changed || *v.tags == nil {
		*v.tags = map[string]string{}
	}
	for _, p := range pairs {
		k, val, ok := strings.Cut(p, "=")
		if !ok {
			return fmt.Errorf("%q must be formatted as key=value (a tag without a value is key=)", p)
		}
		(*v.tags)[k] = val
	}
	v.changed = true
	return nil
}

func (v *tagsValue) Type() string { return "stringToString" }

func (v *tagsValue) String() string {
	var b strings.Builder
	for i, k := range slices.Sorted(maps.Keys(*v.tags)) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k + "=" + (*v.tags)[k])
	}
	return "[" + b.String() + "]"
}
