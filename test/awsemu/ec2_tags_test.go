package awsemu

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"
)

// TestTagCallsAsEC2 pins the CreateTags/DeleteTags semantics the tagging
// controller relies on, after the EC2 API reference: at most 1,000
// resource IDs per call (ResourceCountExceeded, nothing changed); an
// unknown instance fails the whole call with InvalidInstanceID.NotFound
// naming it, for DeleteTags too; DeleteTags with an empty value deletes
// only a tag whose value is empty, without a value any value.
func TestTagCallsAsEC2(t *testing.T) {
	s, url := demo(t)
	client := ec2Client(t, url)
	ctx := context.Background()
	tag := func(k, v string) ec2types.Tag { return ec2types.Tag{Key: aws.String(k), Value: aws.String(v)} }

	t.Run("resource limit", func(t *testing.T) {
		ids := []string{demoA}
		for i := range 1000 {
			ids = append(ids, fmt.Sprintf("i-0%016x", i))
		}
		_, err := client.CreateTags(ctx, &ec2.CreateTagsInput{Resources: ids, Tags: []ec2types.Tag{tag("x", "y")}})
		wantCode(t, err, "ResourceCountExceeded")
		_, err = client.DeleteTags(ctx, &ec2.DeleteTagsInput{Resources: ids, Tags: []ec2types.Tag{tag("Name", "demo-node-a")}})
		wantCode(t, err, "ResourceCountExceeded")
		if in, _ := s.Instance(demoA); in.Tags["x"] != "" || in.Tags["Name"] != "demo-node-a" {
			t.Errorf("a refused call changed %s: %v", demoA, in.Tags)
		}
		// 1,000 is allowed: the unknown IDs fail it, not the count.
		_, err = client.CreateTags(ctx, &ec2.CreateTagsInput{Resources: ids[:1000], Tags: []ec2types.Tag{tag("x", "y")}})
		wantCode(t, err, "InvalidInstanceID.NotFound")
	})

	t.Run("unknown instance named, whole call fails", func(t *testing.T) {
		const unknown = "i-0000000000000dead"
		if _, err := client.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{demoA}, Tags: []ec2types.Tag{tag("keep", "1")}}); err != nil {
			t.Fatal(err)
		}
		for name, call := range map[string]func() error{
			"CreateTags": func() error {
				_, err := client.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{demoB, unknown}, Tags: []ec2types.Tag{tag("x", "y")}})
				return err
			},
			"DeleteTags": func() error {
				_, err := client.DeleteTags(ctx, &ec2.DeleteTagsInput{Resources: []string{demoA, unknown}, Tags: []ec2types.Tag{tag("keep", "1")}})
				return err
			},
		} {
			err := call()
			wantCode(t, err, "InvalidInstanceID.NotFound")
			var ae smithy.APIError
			if errors.As(err, &ae) && !strings.Contains(ae.ErrorMessage(), "'"+unknown+"'") {
				t.Errorf("%s: message %q does not name %s", name, ae.ErrorMessage(), unknown)
			}
		}
		if in, _ := s.Instance(demoB); in.Tags["x"] != "" {
			t.Errorf("failed CreateTags changed %s: %v", demoB, in.Tags)
		}
		if in, _ := s.Instance(demoA); in.Tags["keep"] != "1" {
			t.Errorf("failed DeleteTags changed %s: %v", demoA, in.Tags)
		}
	})

	t.Run("empty value deletes only an empty tag", func(t *testing.T) {
		if _, err := client.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{demoA}, Tags: []ec2types.Tag{tag("e", ""), tag("f", "set")}}); err != nil {
			t.Fatal(err)
		}
		if _, err := client.DeleteTags(ctx, &ec2.DeleteTagsInput{Resources: []string{demoA}, Tags: []ec2types.Tag{tag("e", ""), tag("f", "")}}); err != nil {
			t.Fatal(err)
		}
		in, _ := s.Instance(demoA)
		if _, ok := in.Tags["e"]; ok {
			t.Errorf("e= (empty) not deleted by e=: %v", in.Tags)
		}
		if in.Tags["f"] != "set" {
			t.Errorf("f=set deleted by f= (empty value): %v", in.Tags)
		}
		if _, err := client.DeleteTags(ctx, &ec2.DeleteTagsInput{Resources: []string{demoA}, Tags: []ec2types.Tag{{Key: aws.String("f")}}}); err != nil {
			t.Fatal(err)
		}
		if in, _ := s.Instance(demoA); in.Tags["f"] != "" {
			t.Errorf("f not deleted by a key without value: %v", in.Tags)
		}
	})
}
