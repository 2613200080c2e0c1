package awscloud

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

func TestClusterIDFromTags(t *testing.T) {
	tags := func(kv ...string) []types.Tag {
		var out []types.Tag
		for i := 0; i < len(kv); i += 2 {
			out = append(out, types.Tag{Key: aws.String(kv[i]), Value: aws.String(kv[i+1])})
		}
		return out
	}
	cases := []struct {
		name    string
		tags    []types.Tag
		id      string
		legacy  bool
		wantErr bool
	}{
		{"new style", tags("kubernetes.io/cluster/prod", "owned", "Name", "x"), "prod", false, false},
		{"legacy", tags("KubernetesCluster", "old"), "old", true, false},
		{"new wins over legacy", tags("KubernetesCluster", "old", "kubernetes.io/cluster/new", "shared"), "new", false, false},
		{"none", tags("Name", "x"), "", false, false},
		{"two clusters", tags("kubernetes.io/cluster/a", "owned", "kubernetes.io/cluster/b", "owned"), "", false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id, legacy, err := clusterIDFromTags(tc.tags)
			if (err != nil) != tc.wantErr || id != tc.id || legacy != tc.legacy {
				t.Fatalf("clusterIDFromTags = %q, %v, %v; want %q, %v, err %v", id, legacy, err, tc.id, tc.legacy, tc.wantErr)
			}
		})
	}
}
