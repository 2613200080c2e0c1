package awscloud

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// ownInstance answers DescribeInstances with one instance carrying tags.
type ownInstance []ec2types.Tag

func (o ownInstance) DescribeInstances(context.Context, *ec2.DescribeInstancesInput, ...func(*ec2.Options)) (*ec2.DescribeInstancesOutput, error) {
	return &ec2.DescribeInstancesOutput{Reservations: []ec2types.Reservation{{Instances: []ec2types.Instance{{
		InstanceId: aws.String("i-self"), VpcId: aws.String("vpc-1"), Tags: o}}}}}, nil
}

// TestFillFromOwnInstance checks the CCM takes its cluster ID from its own
// instance with clustertag.ClusterIDFromTags (whose own table test covers the
// tag combinations) and filters the cluster's instances accordingly.
func TestFillFromOwnInstance(t *testing.T) {
	tags := func(kv ...string) ownInstance {
		var out ownInstance
		for i := 0; i < len(kv); i += 2 {
			out = append(out, ec2types.Tag{Key: aws.String(kv[i]), Value: aws.String(kv[i+1])}) //nolint:gosec // G602: kv is key, value pairs; an odd count is a test bug and panics
		}
		return out
	}
	cases := []struct {
		name    string
		tags    ownInstance
		id      string
		legacy  bool
		filter  ec2types.Filter
		wantErr string
	}{
		{name: "current tag", tags: tags("kubernetes.io/cluster/prod", "owned", "Name", "x"), id: "prod",
			filter: ec2types.Filter{Name: aws.String("tag-key"), Values: []string{"kubernetes.io/cluster/prod"}}},
		{name: "legacy tag only", tags: tags("KubernetesCluster", "old"), id: "old", legacy: true,
			filter: ec2types.Filter{Name: aws.String("tag:KubernetesCluster"), Values: []string{"old"}}},
		{name: "no cluster tag", tags: tags("Name", "x")},
		// Was "new wins over legacy" (id new): upstream refuses such an
		// instance, and so does the CCM now.
		{name: "legacy and current tag name different clusters", tags: tags("KubernetesCluster", "old", "kubernetes.io/cluster/new", "shared"),
			wantErr: "instance i-self: cluster tags name different clusters: KubernetesCluster=old and kubernetes.io/cluster/new\nfix: set KubernetesClusterID"},
		{name: "two clusters", tags: tags("kubernetes.io/cluster/a", "owned", "kubernetes.io/cluster/b", "owned"),
			wantErr: "kubernetes.io/cluster/a and kubernetes.io/cluster/b"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := environment{Region: "us-east-1"}
			err := fillFromOwnInstance(context.Background(), ec2Calls{DescribeInstances: tc.tags.DescribeInstances}, "i-self", &env)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || env.ClusterID != tc.id || env.Legacy != tc.legacy || env.VPCID != "vpc-1" {
				t.Fatalf("= %+v, %v; want cluster %q, legacy %v", env, err, tc.id, tc.legacy)
			}
			if tc.id != "" {
				if f := clusterFilters(env); len(f) != 1 || !reflect.DeepEqual(f[0], tc.filter) {
					t.Fatalf("clusterFilters = %+v, want %+v", f, tc.filter)
				}
			}
		})
	}
}
