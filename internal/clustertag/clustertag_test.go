package clustertag

import (
	"errors"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// TestClusterIDFromTags covers where the three readers this function
// replaced disagreed on one instance's tags. Each case says what they
// returned:
//   - ccm: pkg/awscloud clusterIDFromTags, the CCM at start;
//   - install: installcmd Detector.detectClusterID (one instance);
//   - preflight: awschecks runner.cluster (one instance, no configured ID).
//
// The CCM's (upstream's) semantics win; where they changed, the case says so.
func TestClusterIDFromTags(t *testing.T) {
	cases := []struct {
		name      string
		tags      map[string]string
		id        string
		legacy    bool
		ambiguous []string // the AmbiguousError's tags; nil: no error
	}{{
		// ccm prod; install prod; preflight prod.
		name: "owned", tags: map[string]string{"kubernetes.io/cluster/prod": "owned", "Name": "cp-1"}, id: "prod",
	}, {
		// ccm prod; install prod; preflight prod.
		name: "shared", tags: map[string]string{"kubernetes.io/cluster/prod": "shared"}, id: "prod",
	}, {
		// ccm prod; install nothing (wanted owned|shared); preflight prod.
		name: "value neither owned nor shared", tags: map[string]string{"kubernetes.io/cluster/prod": "1"}, id: "prod",
	}, {
		// ccm prod; install nothing (wanted owned|shared); preflight prod.
		name: "empty value", tags: map[string]string{"kubernetes.io/cluster/prod": ""}, id: "prod",
	}, {
		// ccm old, legacy; install nothing (ignored the legacy tag); preflight old.
		name: "only the legacy tag", tags: map[string]string{"KubernetesCluster": "old"}, id: "old", legacy: true,
	}, {
		// ccm nothing; install nothing; preflight nothing.
		name: "legacy tag with an empty value", tags: map[string]string{"KubernetesCluster": ""},
	}, {
		// ccm prod, not legacy; install prod; preflight prod.
		name: "legacy and current tag, same ID", tags: map[string]string{"KubernetesCluster": "prod", "kubernetes.io/cluster/prod": "owned"}, id: "prod",
	}, {
		// ccm new (the legacy tag ignored); install new; preflight conflict.
		// Changed for the CCM and install: upstream refuses such an instance.
		name: "legacy and current tag, different IDs", tags: map[string]string{"KubernetesCluster": "old", "kubernetes.io/cluster/new": "shared"},
		ambiguous: []string{"KubernetesCluster=old", "kubernetes.io/cluster/new"},
	}, {
		// ccm error; install nothing ("several cluster tags"); preflight conflict.
		name: "two cluster keys", tags: map[string]string{"kubernetes.io/cluster/a": "owned", "kubernetes.io/cluster/b": "owned"},
		ambiguous: []string{"kubernetes.io/cluster/a", "kubernetes.io/cluster/b"},
	}, {
		// ccm error; install a (b's value did not count); preflight conflict.
		name: "two cluster keys, one not owned or shared", tags: map[string]string{"kubernetes.io/cluster/a": "owned", "kubernetes.io/cluster/b": "1"},
		ambiguous: []string{"kubernetes.io/cluster/a", "kubernetes.io/cluster/b"},
	}, {
		// ccm error; install nothing; preflight conflict.
		name:      "two cluster keys and a legacy tag naming one",
		tags:      map[string]string{"kubernetes.io/cluster/a": "owned", "kubernetes.io/cluster/b": "owned", "KubernetesCluster": "a"},
		ambiguous: []string{"kubernetes.io/cluster/a", "kubernetes.io/cluster/b"},
	}, {
		// ccm nothing; install nothing; preflight nothing.
		name: "no cluster tag", tags: map[string]string{"Name": "cp-1"},
	}, {
		// ccm nothing; install nothing; preflight nothing.
		name: "no tags",
	}, {
		// ccm nothing; install the empty ID "" (logged as found); preflight nothing.
		name: "key with an empty ID", tags: map[string]string{"kubernetes.io/cluster/": "owned"},
	}, {
		// ccm prod; install nothing ("several": "" and prod); preflight prod.
		name: "key with an empty ID next to a real one", tags: map[string]string{"kubernetes.io/cluster/": "owned", "kubernetes.io/cluster/prod": "owned"}, id: "prod",
	}, {
		// ccm old, legacy; install the empty ID ""; preflight old.
		name: "key with an empty ID and the legacy tag", tags: map[string]string{"kubernetes.io/cluster/": "owned", "KubernetesCluster": "old"}, id: "old", legacy: true,
	}, {
		// ccm a/b; install a/b; preflight a/b. IDs are not validated here.
		name: "ID with a slash", tags: map[string]string{"kubernetes.io/cluster/a/b": "owned"}, id: "a/b",
	}, {
		// ccm nothing; install nothing; preflight nothing: keys are case-sensitive.
		name: "keys in another case", tags: map[string]string{"Kubernetes.io/cluster/prod": "owned", "kubernetescluster": "old"},
	}, {
		// ccm nothing; install nothing; preflight nothing.
		name: "prefix without its slash", tags: map[string]string{"kubernetes.io/clusterprod": "owned", "kubernetes.io/cluster": "prod"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id, legacy, err := ClusterIDFromTags(tc.tags)
			var amb *AmbiguousError
			switch {
			case tc.ambiguous == nil && err != nil:
				t.Fatalf("error %v, want %q, legacy %v", err, tc.id, tc.legacy)
			case tc.ambiguous != nil && !errors.As(err, &amb):
				t.Fatalf("= %q, %v, %v; want an AmbiguousError %v", id, legacy, err, tc.ambiguous)
			case tc.ambiguous != nil && !reflect.DeepEqual(amb.Tags, tc.ambiguous):
				t.Fatalf("AmbiguousError tags %q, want %q", amb.Tags, tc.ambiguous)
			}
			if id != tc.id || legacy != tc.legacy {
				t.Fatalf("= %q, legacy %v; want %q, legacy %v", id, legacy, tc.id, tc.legacy)
			}
			// The EC2 adapter agrees.
			var ts []ec2types.Tag
			for k, v := range tc.tags {
				ts = append(ts, ec2types.Tag{Key: aws.String(k), Value: aws.String(v)})
			}
			id2, legacy2, err2 := ClusterIDFromEC2Tags(ts)
			if id2 != id || legacy2 != legacy || (err2 == nil) != (err == nil) {
				t.Fatalf("ClusterIDFromEC2Tags = %q, %v, %v; ClusterIDFromTags = %q, %v, %v", id2, legacy2, err2, id, legacy, err)
			}
		})
	}
}

func TestAmbiguousErrorMessage(t *testing.T) {
	_, _, err := ClusterIDFromTags(map[string]string{"KubernetesCluster": "old", "kubernetes.io/cluster/demo": "owned"})
	want := "cluster tags name different clusters: KubernetesCluster=old and kubernetes.io/cluster/demo"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
}

func TestContract(t *testing.T) {
	// The strings themselves: a change here breaks every existing cluster.
	if Key("prod") != "kubernetes.io/cluster/prod" || LegacyKey != "KubernetesCluster" || Owned != "owned" || Shared != "shared" {
		t.Fatal("the cluster tag contract changed")
	}
	for v, want := range map[Lifecycle]bool{Owned: true, Shared: true, "": false, "1": false, "Owned": false} {
		if v.Valid() != want {
			t.Errorf("Lifecycle(%q).Valid() = %v", v, !want)
		}
	}
	for k, want := range map[string]string{"kubernetes.io/cluster/prod": "prod", "kubernetes.io/cluster/": "", "KubernetesCluster": "", "x/kubernetes.io/cluster/a": ""} {
		if id, ok := IDFromKey(k); id != want || ok != (want != "") {
			t.Errorf("IDFromKey(%q) = %q, %v", k, id, ok)
		}
	}
}

func TestHas(t *testing.T) {
	cases := []struct {
		name string
		tags map[string]string
		id   string
		want bool
	}{
		{"current key, any value", map[string]string{"kubernetes.io/cluster/prod": "1"}, "prod", true},
		{"legacy tag", map[string]string{"KubernetesCluster": "prod"}, "prod", true},
		{"another cluster's key", map[string]string{"kubernetes.io/cluster/dev": "owned"}, "prod", false},
		{"another cluster's legacy tag", map[string]string{"KubernetesCluster": "dev"}, "prod", false},
		{"no ID matches nothing", map[string]string{"kubernetes.io/cluster/": "owned"}, "", false},
		{"no ID, no legacy tag", map[string]string{}, "", false},
	}
	for _, tc := range cases {
		if got := Has(tc.tags, tc.id); got != tc.want {
			t.Errorf("%s: Has = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestFilter(t *testing.T) {
	f := Filter("prod", false)
	if aws.ToString(f.Name) != "tag-key" || !reflect.DeepEqual(f.Values, []string{"kubernetes.io/cluster/prod"}) {
		t.Errorf("Filter(prod, false) = %s %v", aws.ToString(f.Name), f.Values)
	}
	f = Filter("prod", true)
	if aws.ToString(f.Name) != "tag:KubernetesCluster" || !reflect.DeepEqual(f.Values, []string{"prod"}) {
		t.Errorf("Filter(prod, true) = %s %v", aws.ToString(f.Name), f.Values)
	}
}

// FuzzClusterIDFromTags checks ClusterIDFromTags against its definition: the
// IDs named are those of the cluster keys and a non-empty legacy value;
// exactly one is the answer, more is an AmbiguousError.
func FuzzClusterIDFromTags(f *testing.F) {
	f.Add("kubernetes.io/cluster/prod", "owned", "KubernetesCluster", "prod", "Name", "x")
	f.Add("kubernetes.io/cluster/a", "owned", "kubernetes.io/cluster/b", "1", "", "")
	f.Add("kubernetes.io/cluster/", "owned", "KubernetesCluster", "old", "kubernetes.io/cluster/new", "")
	f.Add("KubernetesCluster", "", "kubernetes.io/cluster/\x00", "shared", "kubernetes.io/cluster/a/b", "owned")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2, k3, v3 string) {
		tags := map[string]string{k1: v1, k2: v2, k3: v3}
		named := map[string]bool{}
		for k := range tags {
			if id, ok := IDFromKey(k); ok {
				named[id] = true
			}
		}
		current := len(named)
		if v := tags[LegacyKey]; v != "" {
			named[v] = true
		}
		id, legacy, err := ClusterIDFromTags(tags)
		switch len(named) {
		case 0:
			if id != "" || legacy || err != nil {
				t.Fatalf("%q: = %q, %v, %v; want nothing", tags, id, legacy, err)
			}
		case 1:
			if err != nil || !named[id] || legacy != (current == 0) || !Has(tags, id) {
				t.Fatalf("%q: = %q, %v, %v; want the one ID named, legacy %v", tags, id, legacy, err, current == 0)
			}
		default:
			var amb *AmbiguousError
			if !errors.As(err, &amb) || id != "" || legacy || len(amb.Tags) < 2 {
				t.Fatalf("%q: = %q, %v, %v; want an AmbiguousError", tags, id, legacy, err)
			}
		}
	})
}
