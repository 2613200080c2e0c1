package lb

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/awsccmctl/awsccmctl/internal/clustertag"
	"github.com/awsccmctl/awsccmctl/internal/lbconfig"
	"github.com/awsccmctl/awsccmctl/internal/lbnames"
)

// tag is one AWS tag; the reconciler keeps tags ordered so requests are
// deterministic.
type tag struct{ Key, Value string }

// ownedTags are the tags of everything created for svc: the cluster tag
// (owned), the legacy cluster tag when the cluster uses it, the Service
// name, then the Service's additional tags.
func (r *Reconciler) ownedTags(svc *corev1.Service, cfg *lbconfig.Config) []tag {
	tags := r.clusterTags()
	tags = append(tags, tag{lbnames.ServiceNameTagKey, lbnames.ServiceNameTagValue(svc)})
	if cfg != nil {
		for _, kv := range cfg.AdditionalTags {
			tags = append(tags, tag{kv.Key, kv.Value})
		}
	}
	return tags
}

// clusterTags mark a resource as the cluster's own.
func (r *Reconciler) clusterTags() []tag {
	tags := []tag{{clustertag.Key(r.Env.ClusterID), string(clustertag.Owned)}}
	if r.Env.Legacy {
		tags = append(tags, tag{clustertag.LegacyKey, r.Env.ClusterID})
	}
	return tags
}

// ownership says whether tags mark a resource as this cluster's and, when
// svc is given, this Service's. A resource without any cluster tag is
// accepted (upstream read-repairs those); one tagged for another cluster,
// or for another Service, is not.
func (r *Reconciler) ownership(tags map[string]string, svc *corev1.Service) error {
	ours := false
	var others []string
	for k, v := range tags {
		switch {
		case k == clustertag.Key(r.Env.ClusterID):
			ours = true
		case strings.HasPrefix(k, clustertag.Prefix):
			others = append(others, strings.TrimPrefix(k, clustertag.Prefix))
		case k == clustertag.LegacyKey && v == r.Env.ClusterID:
			ours = true
		case k == clustertag.LegacyKey:
			others = append(others, v)
		}
	}
	if !ours && len(others) > 0 {
		return fmt.Errorf("it is tagged for cluster %s, not %s", strings.Join(others, ", "), r.Env.ClusterID)
	}
	if svc != nil {
		if v, ok := tags[lbnames.ServiceNameTagKey]; ok && v != lbnames.ServiceNameTagValue(svc) {
			return fmt.Errorf("it is tagged for Service %s, not %s", v, lbnames.ServiceNameTagValue(svc))
		}
	}
	return nil
}

// ownedGroup says whether a security group found by one of the Service's
// group names (k8s-elb-<name>, or the managed NLB group's) is the
// Service's to adopt, change and delete. Stricter than ownership: the group
// must carry this cluster's tag with the value owned (or the legacy
// KubernetesCluster=<id>), as upstream's hasClusterTagOwned decides. An
// untagged group of that name is someone else's until they say otherwise:
// adopting it would strip every rule referencing it from other groups and
// delete it with the Service. Every group the CCM and upstream create
// carries the tag from its creation (TagSpecifications).
func (r *Reconciler) ownedGroup(tags map[string]string, svc *corev1.Service) error {
	if err := r.ownership(tags, svc); err != nil {
		return err
	}
	key := clustertag.Key(r.Env.ClusterID)
	if tags[key] == string(clustertag.Owned) || tags[clustertag.LegacyKey] == r.Env.ClusterID {
		return nil
	}
	if v, ok := tags[key]; ok {
		return fmt.Errorf("it is tagged %s=%s, not %s", key, v, clustertag.Owned)
	}
	return fmt.Errorf("it does not carry the tag %s=%s", key, clustertag.Owned)
}

// missingTags returns the wanted tags whose value differs in have.
func missingTags(have map[string]string, want []tag) []tag {
	var out []tag
	for _, t := range want {
		if v, ok := have[t.Key]; !ok || v != t.Value {
			out = append(out, t)
		}
	}
	return out
}
