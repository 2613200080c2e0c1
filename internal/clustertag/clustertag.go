package clustertag

import (
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

const (
	// Prefix followed by the cluster ID is the cluster tag key.
	Prefix = "kubernetes.io/cluster/"
	// LegacyKey is the pre-1.6 cluster tag key; its value is the cluster ID.
	// It is still read, and written next to the current tag on resources of a
	// cluster identified by it.
	LegacyKey = "KubernetesCluster"
)

// Lifecycle is the value of the cluster tag.
type Lifecycle string

const (
	// Owned marks a resource that lives and dies with the cluster.
	Owned Lifecycle = "owned"
	// Shared marks a resource used by the cluster, not owned by it.
	Shared Lifecycle = "shared"
)

// Valid reports whether l is Owned or Shared.
func (l Lifecycle) Valid() bool { return l == Owned || l == Shared }

// Key is the cluster tag key of clusterID.
func Key(clusterID string) string { return Prefix + clusterID }

// IDFromKey returns the cluster ID of a cluster tag key; ok is false for
// any other key, including the bare prefix (no ID).
func IDFromKey(key string) (clusterID string, ok bool) {
	id, ok := strings.CutPrefix(key, Prefix)
	if !ok || id == "" {
		return "", false
	}
	return id, true
}

// Has reports whether tags mark a resource as clusterID's the way the CCM
// and upstream decide it: the key Key(clusterID) with any value, or the
// legacy LegacyKey=clusterID. An empty clusterID matches nothing (upstream
// then skips the check altogether; callers here always know the ID).
func Has(tags map[string]string, clusterID string) bool {
	if clusterID == "" {
		return false
	}
	_, ok := tags[Key(clusterID)]
	return ok || tags[LegacyKey] == clusterID
}

// Filter is the EC2 filter selecting clusterID's resources: the tag key
// Key(clusterID) with any value, or, for a cluster identified by the legacy
// tag, LegacyKey=clusterID (upstream's addFilters and addLegacyFilters).
func Filter(clusterID string, legacy bool) ec2types.Filter {
	if legacy {
		return ec2types.Filter{Name: aws.String("tag:" + LegacyKey), Values: []string{clusterID}}
	}
	return ec2types.Filter{Name: aws.String("tag-key"), Values: []string{Key(clusterID)}}
}

// AmbiguousError is returned when one resource's tags name more than one
// cluster.
type AmbiguousError struct {
	// Tags are the conflicting tags, sorted: Prefix+<id> keys and
	// LegacyKey=<id>.
	Tags []string
}

func (e *AmbiguousError) Error() string {
	return "cluster tags name different clusters: " + strings.Join(e.Tags, " and ")
}

// ClusterIDFromTags reads the cluster ID from a resource's tags (in the CCM,
// its own instance's), exactly as upstream's findClusterIDs and
// awsTagging.init do, so that this CCM serves the cluster upstream would:
//
//   - any key Prefix+<id> names the cluster <id>, whatever its value
//     (owned, shared, "1", ""): upstream never looks at the value here;
//   - the legacy LegacyKey=<id> names <id> too; an empty value names nothing;
//   - both may be present if they name the same cluster;
//   - two different IDs (two cluster keys, or a cluster key and a legacy
//     tag that disagree) are an *AmbiguousError: upstream refuses to start;
//   - the bare key Prefix (no ID) names nothing;
//   - no cluster tag at all gives "", false, nil.
//
// legacy is true when only the legacy tag names the cluster; the CCM then
// filters by LegacyKey and writes it on what it creates. When both tags are
// present legacy is false and the current tag is used. (Upstream sets its
// usesLegacyTags whenever the legacy tag is present; this CCM prefers the
// current tag, as it does for a cloud config that sets both
// KubernetesClusterID and KubernetesClusterTag.)
func ClusterIDFromTags(tags map[string]string) (clusterID string, legacy bool, err error) {
	var current []string
	for k := range tags {
		if id, ok := IDFromKey(k); ok {
			current = append(current, id)
		}
	}
	old := tags[LegacyKey]
	if len(current) > 1 || (len(current) == 1 && old != "" && old != current[0]) {
		var conflicting []string
		for _, id := range current {
			conflicting = append(conflicting, Key(id))
		}
		if old != "" && !slices.Contains(current, old) {
			conflicting = append(conflicting, LegacyKey+"="+old)
		}
		slices.Sort(conflicting)
		return "", false, &AmbiguousError{Tags: conflicting}
	}
	switch {
	case len(current) == 1:
		return current[0], false, nil
	case old != "":
		return old, true, nil
	}
	return "", false, nil
}

// ClusterIDFromEC2Tags is ClusterIDFromTags for EC2 tags.
func ClusterIDFromEC2Tags(tags []ec2types.Tag) (clusterID string, legacy bool, err error) {
	return ClusterIDFromTags(Map(tags))
}

// Map returns EC2 tags as a map of key to value. EC2 keys are unique per
// resource; were one repeated, the last value wins.
func Map(tags []ec2types.Tag) map[string]string {
	m := make(map[string]string, len(tags))
	for _, t := range tags {
		m[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return m
}
