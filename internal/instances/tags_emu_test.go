package instances

import (
	"context"
	"maps"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/awsccmctl/awsccmctl/test/awsemu"
)

// TestViewKeepsOnlyTheConfiguredTags reads the demo instances through the
// emulator (real SDK decoding of the tag sets DescribeInstances returns)
// and checks that the view keeps exactly the keys it was asked for, both
// from the cluster snapshot and from lookups by ID.
func TestViewKeepsOnlyTheConfiguredTags(t *testing.T) {
	srv := awsemu.StartT(t, awsemu.DemoFixture())
	cfg := aws.Config{Region: srv.Region(), Credentials: credentials.NewStaticCredentialsProvider(awsemu.DefaultAccessKeyID, "awsemu-secret", "")}
	client := ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.BaseEndpoint, o.HTTPClient = aws.String(srv.URL), awsemu.HTTPClient() })
	const a, b = "i-0a1b2c3d4e5f60001", "i-0a1b2c3d4e5f60002"
	ctx := context.Background()
	if _, err := client.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{a}, Tags: []ec2types.Tag{
		{Key: aws.String("team"), Value: aws.String("blue")}, {Key: aws.String("empty"), Value: aws.String("")},
	}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		filters []ec2types.Filter
	}{
		{"snapshot", []ec2types.Filter{{Name: aws.String("tag-key"), Values: []string{"kubernetes.io/cluster/demo"}}}},
		{"by ID", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := New(NewEC2(client), Options{ClusterFilters: tc.filters, TagKeys: []string{"team", "empty", "absent"}})
			got, err := v.ByIDs(ctx, []string{a, b})
			if err != nil {
				t.Fatal(err)
			}
			if want := map[string]string{"team": "blue", "empty": ""}; !maps.Equal(got[a].Tags, want) {
				t.Errorf("%s tags = %v, want %v (Name and the cluster tag dropped)", a, got[a].Tags, want)
			}
			if got[b].Tags != nil {
				t.Errorf("%s tags = %v, want none kept", b, got[b].Tags)
			}
			if !got[a].HasTags(map[string]string{"team": "blue", "empty": ""}) {
				t.Error("HasTags(team=blue, empty=) = false, want true")
			}
			for _, want := range []map[string]string{{"team": "red"}, {"absent": ""}, {"Name": "demo-node-a"}} {
				if got[a].HasTags(want) {
					t.Errorf("HasTags(%v) = true, want false", want)
				}
			}
		})
	}
}
