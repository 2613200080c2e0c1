package detect

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"

	"github.com/awsccmctl/awsccmctl/pkg/cloudconfig"
)

func instanceID(i int) string { return fmt.Sprintf("i-%017x", i+1) }

// taggedInstances answers DescribeInstances with one instance per tag set.
type taggedInstances []map[string]string

func (ti taggedInstances) DescribeInstances(context.Context, *ec2.DescribeInstancesInput, ...func(*ec2.Options)) (*ec2.DescribeInstancesOutput, error) {
	var r ec2types.Reservation
	for i, m := range ti {
		in := ec2types.Instance{InstanceId: aws.String(instanceID(i))}
		for k, v := range m {
			in.Tags = append(in.Tags, ec2types.Tag{Key: aws.String(k), Value: aws.String(v)})
		}
		r.Instances = append(r.Instances, in)
	}
	return &ec2.DescribeInstancesOutput{Reservations: []ec2types.Reservation{r}}, nil
}

// TestDetectClusterIDFromTags checks detection reads each instance's cluster
// ID with clustertag.ClusterIDFromTags, as the CCM reads its own instance's.
// Before, detection wanted the value owned or shared and ignored the legacy
// tag, so it found nothing, or another cluster, where the CCM found one.
func TestDetectClusterIDFromTags(t *testing.T) {
	cases := []struct {
		name      string
		instances taggedInstances
		id, tag   string // the KubernetesClusterID and KubernetesClusterTag set
		log       string
	}{
		{name: "owned and shared", instances: taggedInstances{{"kubernetes.io/cluster/prod": "owned"}, {"kubernetes.io/cluster/prod": "shared"}},
			id: "prod", log: "cluster ID prod: from the kubernetes.io/cluster/prod tag of 2 of 2 Nodes' instances"},
		// Was: not found (the value was neither owned nor shared).
		{name: "any value", instances: taggedInstances{{"kubernetes.io/cluster/prod": "1"}, {"kubernetes.io/cluster/prod": ""}},
			id: "prod", log: "from the kubernetes.io/cluster/prod tag of 2 of 2"},
		// Was: not found (the legacy tag was ignored).
		{name: "legacy tag only", instances: taggedInstances{{"KubernetesCluster": "old"}, {"KubernetesCluster": "old"}},
			tag: "old", log: "cluster ID old: from the legacy KubernetesCluster=old tag of 2 of 2 Nodes' instances (set as KubernetesClusterTag"},
		{name: "legacy and current tags of one cluster on different instances", instances: taggedInstances{{"KubernetesCluster": "prod"}, {"kubernetes.io/cluster/prod": "owned"}},
			id: "prod", log: "WARNING: 1 of these instances carry only the legacy KubernetesCluster tag"},
		// Was: new (the legacy tag was ignored); the CCM refuses such an instance.
		{name: "legacy and current tag disagree", instances: taggedInstances{{"KubernetesCluster": "old", "kubernetes.io/cluster/new": "owned"}},
			log: "1 of 1 instances are tagged for several clusters (i-00000000000000001: cluster tags name different clusters: KubernetesCluster=old and kubernetes.io/cluster/new)"},
		// Was: the empty cluster ID, logged as found.
		{name: "key without an ID", instances: taggedInstances{{"kubernetes.io/cluster/": "owned"}},
			log: "none of 1 instances carries a kubernetes.io/cluster/<id> or KubernetesCluster tag"},
		{name: "instances of two clusters", instances: taggedInstances{{"kubernetes.io/cluster/a": "owned"}, {"kubernetes.io/cluster/b": "owned"}},
			log: "the instances are tagged for several clusters (a, b)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var log bytes.Buffer
			d := Detector{Log: &log, EC2: func(context.Context, string) (EC2, error) {
				return EC2{DescribeInstances: tc.instances.DescribeInstances}, nil
			}}
			var nodes []corev1.Node
			for i := range tc.instances {
				nodes = append(nodes, *node(fmt.Sprint("n", i), "us-east-1", "aws:///us-east-1a/"+instanceID(i)))
			}
			g := cloudconfig.Global{Region: "us-east-1"}
			d.detectClusterID(context.Background(), nodes, &g)
			if g.KubernetesClusterID != tc.id || g.KubernetesClusterTag != tc.tag {
				t.Errorf("KubernetesClusterID %q, KubernetesClusterTag %q; want %q, %q", g.KubernetesClusterID, g.KubernetesClusterTag, tc.id, tc.tag)
			}
			if !strings.Contains(log.String(), tc.log) {
				t.Errorf("log lacks %q:\n%s", tc.log, log.String())
			}
		})
	}
}
