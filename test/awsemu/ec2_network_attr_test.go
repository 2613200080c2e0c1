package awsemu

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// demoNodeB's network interfaces (testdata/demo.yaml).
const (
	demoNodeBPrimary   = "eni-0demo00000000002a"
	demoNodeBSecondary = "eni-0demo00000000002b"
)

// sourceDestChecks returns the instance's check and its interfaces' by ID,
// as DescribeInstances reports them.
func sourceDestChecks(t *testing.T, c *ec2.Client, id string) (instance bool, enis map[string]bool) {
	t.Helper()
	out, err := c.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	in := out.Reservations[0].Instances[0]
	enis = map[string]bool{}
	for _, e := range in.NetworkInterfaces {
		enis[aws.ToString(e.NetworkInterfaceId)] = aws.ToBool(e.SourceDestCheck)
	}
	return aws.ToBool(in.SourceDestCheck), enis
}

func offValue() *ec2types.AttributeBooleanValue {
	return &ec2types.AttributeBooleanValue{Value: aws.Bool(false)}
}

// TestSourceDestCheckIsPerInterface: EC2 refuses the instance-level change
// on an instance with two interfaces, with its code and message, and
// ModifyNetworkInterfaceAttribute turns one interface's check off; the
// instance reports its primary interface's.
func TestSourceDestCheckIsPerInterface(t *testing.T) {
	_, url := demo(t)
	c := ec2Client(t, url)
	ctx := context.Background()
	_, err := c.ModifyInstanceAttribute(ctx, &ec2.ModifyInstanceAttributeInput{InstanceId: aws.String(demoNodeB), SourceDestCheck: offValue()})
	wantError(t, err, "InvalidInstanceID",
		"There are multiple interfaces attached to instance '"+demoNodeB+"'. Please specify an interface ID for the operation instead.")
	if on, enis := sourceDestChecks(t, c, demoNodeB); !on || !enis[demoNodeBPrimary] || !enis[demoNodeBSecondary] {
		t.Fatalf("the refused call changed the checks: instance %v, interfaces %v", on, enis)
	}

	if _, err := c.ModifyNetworkInterfaceAttribute(ctx, &ec2.ModifyNetworkInterfaceAttributeInput{
		NetworkInterfaceId: aws.String(demoNodeBPrimary), SourceDestCheck: offValue()}); err != nil {
		t.Fatal(err)
	}
	if on, enis := sourceDestChecks(t, c, demoNodeB); on || enis[demoNodeBPrimary] || !enis[demoNodeBSecondary] {
		t.Errorf("after turning the primary interface's off: instance %v, interfaces %v; want the instance and %s off, %s on",
			on, enis, demoNodeBPrimary, demoNodeBSecondary)
	}
	if _, err := c.ModifyNetworkInterfaceAttribute(ctx, &ec2.ModifyNetworkInterfaceAttributeInput{
		NetworkInterfaceId: aws.String(demoNodeBSecondary), SourceDestCheck: offValue()}); err != nil {
		t.Fatal(err)
	}
	if on, enis := sourceDestChecks(t, c, demoNodeB); on || enis[demoNodeBSecondary] {
		t.Errorf("after turning the secondary interface's off: instance %v, interfaces %v", on, enis)
	}
	if on, _ := sourceDestChecks(t, c, demoNodeA); !on {
		t.Error("another instance's check changed")
	}

	// One interface: the instance call still works and changes it.
	if _, err := c.ModifyNetworkInterfaceAttribute(ctx, &ec2.ModifyNetworkInterfaceAttributeInput{
		NetworkInterfaceId: aws.String("eni-0demo00000000001a"), SourceDestCheck: offValue()}); err != nil {
		t.Fatal(err)
	}
	if on, _ := sourceDestChecks(t, c, demoNodeA); on {
		t.Error("turning the only interface's check off left the instance's on")
	}

	_, err = c.ModifyNetworkInterfaceAttribute(ctx, &ec2.ModifyNetworkInterfaceAttributeInput{
		NetworkInterfaceId: aws.String("eni-0nope"), SourceDestCheck: offValue()})
	wantError(t, err, "InvalidNetworkInterfaceID.NotFound", "The networkInterface ID 'eni-0nope' does not exist")
	_, err = c.ModifyNetworkInterfaceAttribute(ctx, &ec2.ModifyNetworkInterfaceAttributeInput{
		NetworkInterfaceId: aws.String("i-0nope"), SourceDestCheck: offValue()})
	wantCode(t, err, "InvalidNetworkInterfaceID.Malformed")
	_, err = c.ModifyNetworkInterfaceAttribute(ctx, &ec2.ModifyNetworkInterfaceAttributeInput{
		NetworkInterfaceId: aws.String(demoNodeBPrimary), Description: &ec2types.AttributeValue{Value: aws.String("x")}})
	wantCode(t, err, "InvalidParameterValue")
}

// TestModifyNetworkInterfaceAttributeUnderLeastPrivilege: the generated
// policy allows the change on an interface carrying the cluster tag and
// denies it on an untagged one, naming the interface's ARN (IAM evaluates
// the interface's tags, not its instance's).
func TestModifyNetworkInterfaceAttributeUnderLeastPrivilege(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "iam", "ccm-policy-least-privilege.json"))
	if err != nil {
		t.Fatal(err)
	}
	policy := strings.ReplaceAll(string(raw), "CLUSTER_ID", "demo")
	s, url := demo(t)
	c := ec2Client(t, url)
	ctx := context.Background()
	// The fixture tags the primary interface with the cluster tag, not the
	// other one.
	if err := s.AddPrincipal(Principal{AccessKeyID: "AKIDEXAMPLE", Policies: []string{policy, "{\"Version\":\"2012-10-17\",\"Statement\":[" + decodeOK + "]}"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ModifyNetworkInterfaceAttribute(ctx, &ec2.ModifyNetworkInterfaceAttributeInput{
		NetworkInterfaceId: aws.String(demoNodeBPrimary), SourceDestCheck: offValue()}); err != nil {
		t.Errorf("ModifyNetworkInterfaceAttribute on a cluster-tagged interface: %v", err)
	}
	_, err = c.ModifyNetworkInterfaceAttribute(ctx, &ec2.ModifyNetworkInterfaceAttributeInput{
		NetworkInterfaceId: aws.String(demoNodeBSecondary), SourceDestCheck: offValue()})
	if m := decoded(t, url, err); m.Context.Action != "ec2:ModifyNetworkInterfaceAttribute" ||
		m.Context.Resource != "arn:aws:ec2:us-east-1:123456789012:network-interface/"+demoNodeBSecondary {
		t.Errorf("denied ModifyNetworkInterfaceAttribute names %s on %s", m.Context.Action, m.Context.Resource)
	}
	if _, enis := sourceDestChecks(t, c, demoNodeB); !enis[demoNodeBSecondary] {
		t.Error("a denied call changed the untagged interface")
	}
}

// TestDescribeNetworkInterfaces: each interface with its own check, tags
// and attachment; by ID, by instance, by the check; unknown and malformed
// IDs as EC2 answers them; a terminated instance's interfaces are gone.
func TestDescribeNetworkInterfaces(t *testing.T) {
	s, url := demo(t)
	c := ec2Client(t, url)
	ctx := context.Background()
	if _, err := c.ModifyNetworkInterfaceAttribute(ctx, &ec2.ModifyNetworkInterfaceAttributeInput{
		NetworkInterfaceId: aws.String(demoNodeBPrimary), SourceDestCheck: offValue()}); err != nil {
		t.Fatal(err)
	}
	out, err := c.DescribeNetworkInterfaces(ctx, &ec2.DescribeNetworkInterfacesInput{NetworkInterfaceIds: []string{demoNodeBPrimary, demoNodeBSecondary}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]ec2types.NetworkInterface{}
	for _, ni := range out.NetworkInterfaces {
		got[aws.ToString(ni.NetworkInterfaceId)] = ni
	}
	p, sec := got[demoNodeBPrimary], got[demoNodeBSecondary]
	if len(got) != 2 || aws.ToBool(p.SourceDestCheck) || !aws.ToBool(sec.SourceDestCheck) {
		t.Fatalf("checks: primary %v, second %v (%d interfaces); want off, on", aws.ToBool(p.SourceDestCheck), aws.ToBool(sec.SourceDestCheck), len(got))
	}
	if p.Attachment == nil || aws.ToString(p.Attachment.InstanceId) != demoNodeB || aws.ToInt32(p.Attachment.DeviceIndex) != 0 ||
		aws.ToInt32(sec.Attachment.DeviceIndex) != 1 || aws.ToString(p.PrivateIpAddress) != "10.0.2.20" || aws.ToString(p.AvailabilityZone) == "" {
		t.Errorf("primary interface = %+v", p)
	}
	if len(p.TagSet) != 1 || aws.ToString(p.TagSet[0].Key) != "kubernetes.io/cluster/demo" || len(sec.TagSet) != 0 {
		t.Errorf("tags: primary %v, second %v; want the cluster tag on the primary only", p.TagSet, sec.TagSet)
	}
	filtered, err := c.DescribeNetworkInterfaces(ctx, &ec2.DescribeNetworkInterfacesInput{Filters: []ec2types.Filter{
		{Name: aws.String("attachment.instance-id"), Values: []string{demoNodeB}},
		{Name: aws.String("source-dest-check"), Values: []string{"false"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(filtered.NetworkInterfaces) != 1 || aws.ToString(filtered.NetworkInterfaces[0].NetworkInterfaceId) != demoNodeBPrimary {
		t.Errorf("B's interfaces with the check off = %d, want the primary only", len(filtered.NetworkInterfaces))
	}
	_, err = c.DescribeNetworkInterfaces(ctx, &ec2.DescribeNetworkInterfacesInput{NetworkInterfaceIds: []string{"eni-0nope"}})
	wantError(t, err, "InvalidNetworkInterfaceID.NotFound", "The networkInterface ID 'eni-0nope' does not exist")
	_, err = c.DescribeNetworkInterfaces(ctx, &ec2.DescribeNetworkInterfacesInput{NetworkInterfaceIds: []string{"i-0nope"}})
	wantCode(t, err, "InvalidNetworkInterfaceID.Malformed")

	if err := s.SetInstanceState(demoNodeB, "terminated"); err != nil {
		t.Fatal(err)
	}
	_, err = c.DescribeNetworkInterfaces(ctx, &ec2.DescribeNetworkInterfacesInput{NetworkInterfaceIds: []string{demoNodeBPrimary}})
	wantCode(t, err, "InvalidNetworkInterfaceID.NotFound")
}
