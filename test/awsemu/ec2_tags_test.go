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

// TestTagLimitAsEC2: a resource holds at most 50 user tags (CreateTags:
// "Each resource can have a maximum of 50 tags"). A CreateTags that would
// take one resource past them fails the whole call with TagLimitExceeded,
// without naming the resource, and changes no resource of the call;
// overwriting a key the resource holds adds nothing and passes at the
// limit; aws:-prefixed tags do not count (tag restrictions).
func TestTagLimitAsEC2(t *testing.T) {
	f := DemoFixture()
	for i := range f.Instances {
		if f.Instances[i].ID == demoB {
			f.Instances[i].Tags["aws:autoscaling:groupName"] = "asg-b"
			f.Instances[i].Tags["aws:ec2launchtemplate:id"] = "lt-0b"
		}
	}
	s, url := start(t, f)
	client := ec2Client(t, url)
	ctx := context.Background()
	tag := func(k, v string) ec2types.Tag { return ec2types.Tag{Key: aws.String(k), Value: aws.String(v)} }
	userTags := func(id string) int {
		in, _ := s.Instance(id)
		n := 0
		for k := range in.Tags {
			if !strings.HasPrefix(k, "aws:") {
				n++
			}
		}
		return n
	}
	// Fill both instances to exactly 50 user tags, in calls that pass.
	for _, id := range []string{demoA, demoB} {
		var fill []ec2types.Tag
		for i := userTags(id); i < 50; i++ {
			fill = append(fill, tag(fmt.Sprintf("fill-%02d", i), "x"))
		}
		if _, err := client.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{id}, Tags: fill}); err != nil {
			t.Fatalf("%s up to 50 user tags: %v", id, err)
		}
		if got := userTags(id); got != 50 {
			t.Fatalf("%s holds %d user tags, want 50", id, got)
		}
	}
	if in, _ := s.Instance(demoB); len(in.Tags) != 52 {
		t.Fatalf("%s holds %d tags, want 52: its two aws: tags do not count against the 50", demoB, len(in.Tags))
	}

	// demoC has room; demoA has none: the whole call fails.
	_, err := client.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{"i-0a1b2c3d4e5f60003", demoA}, Tags: []ec2types.Tag{tag("team", "blue")}})
	wantCode(t, err, "TagLimitExceeded")
	var ae smithy.APIError
	if errors.As(err, &ae) && strings.Contains(ae.ErrorMessage(), demoA) {
		t.Errorf("message %q names the instance; EC2's does not", ae.ErrorMessage())
	}
	if in, _ := s.Instance("i-0a1b2c3d4e5f60003"); in.Tags["team"] != "" {
		t.Errorf("the failed call tagged the instance with room: %v", in.Tags)
	}
	if got := userTags(demoA); got != 50 {
		t.Errorf("the failed call left %s with %d user tags, want 50", demoA, got)
	}

	// Overwriting a key the instance holds is no new tag.
	if _, err := client.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{demoA, demoB}, Tags: []ec2types.Tag{tag("fill-49", "y")}}); err != nil {
		t.Errorf("overwriting a held key at the limit: %v", err)
	}
	if in, _ := s.Instance(demoA); in.Tags["fill-49"] != "y" {
		t.Errorf("fill-49 = %q, want y", in.Tags["fill-49"])
	}
	// Removing one makes room for one.
	if _, err := client.DeleteTags(ctx, &ec2.DeleteTagsInput{Resources: []string{demoA}, Tags: []ec2types.Tag{{Key: aws.String("fill-49")}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{demoA}, Tags: []ec2types.Tag{tag("team", "blue")}}); err != nil {
		t.Errorf("a 50th tag after a removal: %v", err)
	}
}
