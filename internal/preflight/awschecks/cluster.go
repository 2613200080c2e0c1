package awschecks

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/awsccmctl/awsccmctl/internal/clustertag"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
)

// clusterInfo is the cluster ID and where it came from.
type clusterInfo struct {
	id, source string
	// conflicts are contradictions that make the ID unusable.
	conflicts []string
	// tagged maps each cluster ID seen on the instances to how many carry it.
	tagged map[string]int
}

// cluster resolves the cluster ID: the one preflight was given, else the
// cloud config's, else the one the live instances are tagged with.
func (r *runner) cluster(set *instanceSet) clusterInfo {
	ci := clusterInfo{tagged: map[string]int{}}
	type src struct{ id, where string }
	configured := []src{{r.in.ClusterID, "the cluster ID given to preflight"}}
	if cc := r.in.CloudConfig; cc != nil {
		configured = append(configured, src{cc.Global.KubernetesClusterID, "cloud config KubernetesClusterID"},
			src{cc.Global.KubernetesClusterTag, "cloud config KubernetesClusterTag"})
	}
	configured = slices.DeleteFunc(configured, func(s src) bool { return s.id == "" })
	for _, s := range configured[min(1, len(configured)):] {
		if s.id != configured[0].id {
			ci.conflicts = append(ci.conflicts, fmt.Sprintf("%s is %q but %s is %q", configured[0].where, configured[0].id, s.where, s.id))
		}
	}
	// legacy and current map each cluster ID to the instances it was read
	// from, by the legacy tag alone or by the current one.
	legacy, current := map[string][]string{}, map[string][]string{}
	if set != nil {
		for _, in := range set.live() {
			iid := aws.ToString(in.InstanceId)
			// As the CCM reads the cluster ID from its own instance.
			c, fromLegacy, err := clustertag.ClusterIDFromEC2Tags(in.Tags)
			switch {
			case err != nil:
				ci.conflicts = append(ci.conflicts, fmt.Sprintf("%s: %v (the CCM refuses to take the cluster ID from such an instance)", iid, err))
			case c == "":
			case fromLegacy:
				legacy[c] = append(legacy[c], iid)
				ci.tagged[c]++
			default:
				current[c] = append(current[c], iid)
				ci.tagged[c]++
			}
		}
	}
	if len(legacy) > 0 && len(current) > 0 && len(ci.tagged) > 1 {
		for _, l := range slices.Sorted(maps.Keys(legacy)) {
			for _, c := range slices.Sorted(maps.Keys(current)) {
				if l != c {
					ci.conflicts = append(ci.conflicts, fmt.Sprintf("legacy tag %s=%s on %s, but %s on %s",
						clustertag.LegacyKey, l, short(legacy[l]), clustertag.Key(c), short(current[c])))
				}
			}
		}
	}
	switch {
	case len(configured) > 0:
		ci.id, ci.source = configured[0].id, configured[0].where
	case len(ci.tagged) == 1 && len(ci.conflicts) == 0:
		ci.id, ci.source = slices.Collect(maps.Keys(ci.tagged))[0], "instance tags"
	case len(ci.tagged) > 1 && len(ci.conflicts) == 0:
		var parts []string
		for _, c := range slices.Sorted(maps.Keys(ci.tagged)) {
			parts = append(parts, fmt.Sprintf("%s (%d instances)", c, ci.tagged[c]))
		}
		ci.conflicts = append(ci.conflicts, "the instances are tagged for several clusters: "+strings.Join(parts, ", "))
	}
	return ci
}

// clusterID checks that the cluster ID is known and consistent, and that
// every live instance carries it.
func (r *runner) clusterID(ctx context.Context) preflight.Result {
	set, err := r.instances(ctx)
	if err != nil {
		return describeFailed(err)
	}
	ci := r.cluster(set)
	if len(ci.conflicts) > 0 {
		return preflight.Fail("make every source agree on one cluster ID: set KubernetesClusterID = <id> in the cloud config's [Global] section, "+
			"remove the other cluster's tags from these instances (aws ec2 delete-tags --resources <instance> --tags Key=<key>) "+
			"and drop the legacy KubernetesCluster tag or give it the same ID",
			"conflicting cluster IDs: %s", strings.Join(ci.conflicts, "; "))
	}
	live := set.live()
	if ci.id == "" {
		fix := "set KubernetesClusterID = <id> in the cloud config's [Global] section, or tag the cluster's instances: " +
			createTagsCmd([]string{"<instance-id>"}, clustertag.Key("<id>"), string(clustertag.Owned))
		if len(live) == 0 {
			return preflight.Warn(fix, "cluster ID not configured and no instances to read it from: the CCM will take it from its own instance's %s<id> tag", clustertag.Prefix)
		}
		return preflight.Fail(fix, "cluster ID unknown: not configured, and none of the %d instances carries a %s<id> or %s tag", len(live), clustertag.Prefix, clustertag.LegacyKey)
	}
	var untagged []string
	for _, in := range live {
		if !clustertag.Has(tags(in.Tags), ci.id) {
			untagged = append(untagged, aws.ToString(in.InstanceId))
		}
	}
	if len(untagged) > 0 {
		fix := createTagsCmd(untagged, clustertag.Key(ci.id), string(clustertag.Owned))
		if len(untagged) > listShown {
			fix += fmt.Sprintf(" (and the same for the other %d instances)", len(untagged)-listShown)
		}
		return preflight.Warn(fix, "cluster ID %s (from %s), but %d of %d instances lack the tag %s%s: %s; the CCM ignores them for load balancers and routes",
			ci.id, ci.source, len(untagged), len(live), clustertag.Prefix, ci.id, short(untagged))
	}
	return preflight.Pass("cluster ID %s (from %s); all %d instances carry its tag", ci.id, ci.source, len(live))
}

// instancesExist checks that every Node's instance exists and is not
// terminated: the CCM deletes Nodes whose instance is gone.
func (r *runner) instancesExist(ctx context.Context) preflight.Result {
	if len(r.in.InstanceIDs)+len(r.in.ControlPlaneInstanceIDs) == 0 {
		return preflight.Skip("no instance IDs to look up (no Nodes with an aws:// providerID)")
	}
	set, err := r.instances(ctx)
	if err != nil {
		return describeFailed(err)
	}
	var missing []string
	stopped := 0
	for _, id := range set.ids {
		in, ok := set.byID[id]
		switch {
		case !ok:
			missing = append(missing, id+" (not found)")
		case gone(in):
			missing = append(missing, fmt.Sprintf("%s (%s)", id, in.State.Name))
		case in.State != nil && in.State.Name == ec2types.InstanceStateNameStopped:
			stopped++
		}
	}
	if len(missing) > 0 {
		would := "would delete these Nodes once it runs"
		if r.in.Mode == preflight.ModePostInstall {
			would = "deletes these Nodes"
		}
		return preflight.Fail("delete these Nodes (kubectl delete node <name>) or correct their spec.providerID before installing the CCM; "+
			"its node lifecycle controller deletes every Node whose instance does not exist",
			"%d of %d instances do not exist: %s; the CCM %s", len(missing), len(set.ids), short(missing), would)
	}
	return preflight.Pass("all %d instances exist (%d stopped)", len(set.ids), stopped)
}
