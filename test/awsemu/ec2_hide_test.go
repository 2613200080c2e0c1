package awsemu

import (
	"context"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
)

func TestHideInstancesLooksLikeTheWrongRegion(t *testing.T) {
	s, url := demo(t)
	client := ec2Client(t, url)
	ctx := context.Background()
	list := func() []string {
		t.Helper()
		out, err := client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: filters("tag-key", "kubernetes.io/cluster/demo")})
		if err != nil {
			t.Fatalf("DescribeInstances while hidden must succeed: %v", err)
		}
		return instanceIDs(out)
	}
	all := list()
	if len(all) < 3 {
		t.Fatalf("demo fixture lists %v, want at least 3 instances", all)
	}

	if err := s.HideInstances(); err != nil {
		t.Fatal(err)
	}
	if got := list(); len(got) != 0 {
		t.Fatalf("hidden instances listed: %v", got)
	}
	_, err := client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{demoA}})
	wantCode(t, err, "InvalidInstanceID.NotFound")
	out, err := client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: filters("instance-id", demoA+"|"+demoB)})
	if err != nil || len(instanceIDs(out)) != 0 {
		t.Fatalf("instance-id filter while hidden: %v, %v; want none and no error", instanceIDs(out), err)
	}
	if _, ok := s.Instance(demoA); !ok {
		t.Fatal("Instance() must still see a hidden instance")
	}

	// Showing one brings back exactly that one, with its current state.
	if err := s.SetInstanceState(demoB, "terminated"); err != nil {
		t.Fatal(err)
	}
	if err := s.ShowInstances(demoB); err != nil {
		t.Fatal(err)
	}
	out, err = client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{demoB}})
	if err != nil || !slices.Equal(instanceIDs(out), []string{demoB}) || out.Reservations[0].Instances[0].State.Name != "terminated" {
		t.Fatalf("shown instance: %v, %v", instanceIDs(out), err)
	}
	if got := list(); !slices.Equal(got, []string{demoB}) {
		t.Fatalf("after showing %s: %v", demoB, got)
	}

	// An unknown ID changes nothing.
	if err := s.HideInstances(demoB, "i-0000000000000dead"); err == nil {
		t.Fatal("HideInstances of an unknown instance succeeded")
	}
	if got := list(); !slices.Equal(got, []string{demoB}) {
		t.Fatalf("a failed HideInstances changed visibility: %v", got)
	}
	if err := s.ShowInstances(); err != nil {
		t.Fatal(err)
	}
	if got := list(); !slices.Equal(got, all) {
		t.Fatalf("after ShowInstances() = %v, want %v", got, all)
	}
}
