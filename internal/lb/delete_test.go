package lb

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing/types"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbv2types "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	corev1 "k8s.io/api/core/v1"

	"github.com/awsccmctl/awsccmctl/internal/lbnames"
)

// fakeAWS answers as an account where the Service's load balancers are
// gone; tests add what remains.
type fakeAWS struct {
	t *testing.T
	// clb is the Classic load balancer, if any.
	clb *elbtypes.LoadBalancerDescription
	// managed is the k8s-elb-<name> group, if any; nodeGroups are the
	// groups with rules referencing it.
	managed    *ec2types.SecurityGroup
	nodeGroups []ec2types.SecurityGroup
	sgErr      error
	// orphan is an unattached target group, with tags.
	orphan     *elbv2types.TargetGroup
	orphanTags map[string]string

	deleteGroupErr error
	calls          []string
}

func (f *fakeAWS) config() Config {
	filter := func(fs []ec2types.Filter, name string) []string {
		for _, x := range fs {
			if aws.ToString(x.Name) == name {
				return x.Values
			}
		}
		return nil
	}
	return Config{
		ELB: ELB{
			DescribeLoadBalancers: func(_ context.Context, in *elb.DescribeLoadBalancersInput, _ ...func(*elb.Options)) (*elb.DescribeLoadBalancersOutput, error) {
				f.calls = append(f.calls, "elb.DescribeLoadBalancers")
				if f.clb == nil {
					return nil, apiErr(codeAccessPointNotFound)
				}
				return &elb.DescribeLoadBalancersOutput{LoadBalancerDescriptions: []elbtypes.LoadBalancerDescription{*f.clb}}, nil
			},
			DeleteLoadBalancer: func(context.Context, *elb.DeleteLoadBalancerInput, ...func(*elb.Options)) (*elb.DeleteLoadBalancerOutput, error) {
				f.calls = append(f.calls, "elb.DeleteLoadBalancer")
				f.clb = nil
				return &elb.DeleteLoadBalancerOutput{}, nil
			},
		},
		ELBv2: ELBv2{
			DescribeLoadBalancers: func(context.Context, *elbv2.DescribeLoadBalancersInput, ...func(*elbv2.Options)) (*elbv2.DescribeLoadBalancersOutput, error) {
				f.calls = append(f.calls, "elbv2.DescribeLoadBalancers")
				return nil, apiErr(codeLBNotFoundClassic)
			},
			DescribeTargetGroups: func(_ context.Context, in *elbv2.DescribeTargetGroupsInput, _ ...func(*elbv2.Options)) (*elbv2.DescribeTargetGroupsOutput, error) {
				f.calls = append(f.calls, "elbv2.DescribeTargetGroups")
				out := &elbv2.DescribeTargetGroupsOutput{}
				if len(in.Names)+len(in.TargetGroupArns) > 0 || in.LoadBalancerArn != nil {
					f.t.Errorf("DescribeTargetGroups %+v, want the region's listing (leftovers are found by tag)", in)
				} else if f.orphan != nil {
					out.TargetGroups = append(out.TargetGroups, *f.orphan)
				}
				return out, nil
			},
			DescribeTags: func(_ context.Context, in *elbv2.DescribeTagsInput, _ ...func(*elbv2.Options)) (*elbv2.DescribeTagsOutput, error) {
				f.calls = append(f.calls, "elbv2.DescribeTags")
				var tags []elbv2types.Tag
				for k, v := range f.orphanTags {
					tags = append(tags, elbv2types.Tag{Key: aws.String(k), Value: aws.String(v)})
				}
				return &elbv2.DescribeTagsOutput{TagDescriptions: []elbv2types.TagDescription{{ResourceArn: f.orphan.TargetGroupArn, Tags: tags}}}, nil
			},
		},
		EC2: EC2{
			DescribeSecurityGroups: func(_ context.Context, in *ec2.DescribeSecurityGroupsInput, _ ...func(*ec2.Options)) (*ec2.DescribeSecurityGroupsOutput, error) {
				f.calls = append(f.calls, "ec2.DescribeSecurityGroups")
				if f.sgErr != nil {
					return nil, f.sgErr
				}
				if vpc := filter(in.Filters, "vpc-id"); !slices.Equal(vpc, []string{testVPC}) {
					f.t.Errorf("DescribeSecurityGroups outside the cluster VPC: %+v", in.Filters)
				}
				out := &ec2.DescribeSecurityGroupsOutput{}
				if names := filter(in.Filters, "group-name"); names != nil {
					if f.managed != nil && slices.Contains(names, aws.ToString(f.managed.GroupName)) {
						out.SecurityGroups = append(out.SecurityGroups, *f.managed)
					}
					return out, nil
				}
				if refs := filter(in.Filters, "ip-permission.group-id"); refs != nil {
					out.SecurityGroups = f.nodeGroups
					return out, nil
				}
				if len(in.Filters) == 1 { // the whole VPC
					out.SecurityGroups = f.nodeGroups
					if f.managed != nil {
						out.SecurityGroups = append(out.SecurityGroups, *f.managed)
					}
					return out, nil
				}
				f.t.Errorf("unexpected DescribeSecurityGroups %+v", in.Filters)
				return out, nil
			},
			RevokeSecurityGroupIngress: func(_ context.Context, in *ec2.RevokeSecurityGroupIngressInput, _ ...func(*ec2.Options)) (*ec2.RevokeSecurityGroupIngressOutput, error) {
				f.calls = append(f.calls, "ec2.RevokeSecurityGroupIngress "+aws.ToString(in.GroupId)+" "+ruleStrings(flatten(in.IpPermissions)))
				return &ec2.RevokeSecurityGroupIngressOutput{}, nil
			},
			DeleteSecurityGroup: func(_ context.Context, in *ec2.DeleteSecurityGroupInput, _ ...func(*ec2.Options)) (*ec2.DeleteSecurityGroupOutput, error) {
				f.calls = append(f.calls, "ec2.DeleteSecurityGroup "+aws.ToString(in.GroupId))
				if f.deleteGroupErr != nil {
					return nil, f.deleteGroupErr
				}
				f.managed = nil
				return &ec2.DeleteSecurityGroupOutput{}, nil
			},
		},
	}
}

func ruleStrings(rs []rule) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Protocol+"/"+r.CIDR+r.IPv6+r.Group)
	}
	return strings.Join(out, ",")
}

func managedGroupFor(svc *corev1.Service, tags map[string]string) *ec2types.SecurityGroup {
	g := &ec2types.SecurityGroup{GroupId: aws.String("sg-0e1b0000000000001"), GroupName: aws.String("k8s-elb-" + lbnames.LoadBalancerName(svc)), VpcId: aws.String(testVPC)}
	for k, v := range tags {
		g.Tags = append(g.Tags, ec2types.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	return g
}

var ownedTags = map[string]string{"kubernetes.io/cluster/" + testCluster: "owned", "kubernetes.io/service-name": "shop/web"}

func TestGetLeftovers(t *testing.T) {
	nlbSvc := func() *corev1.Service { return testService(map[string]string{lbnames.TypeAnnotation: lbnames.TypeNLB}) }
	tests := []struct {
		name       string
		svc        *corev1.Service
		setup      func(f *fakeAWS, svc *corev1.Service)
		wantExists bool
		wantHost   string
		wantErr    bool
	}{
		{name: "nothing remains", svc: testService(nil), setup: func(*fakeAWS, *corev1.Service) {}},
		{
			name:       "managed security group remains",
			svc:        testService(nil),
			setup:      func(f *fakeAWS, svc *corev1.Service) { f.managed = managedGroupFor(svc, ownedTags) },
			wantExists: true,
		},
		{
			name: "Classic load balancer exists",
			svc:  testService(nil),
			setup: func(f *fakeAWS, svc *corev1.Service) {
				f.clb = &elbtypes.LoadBalancerDescription{LoadBalancerName: aws.String(lbnames.LoadBalancerName(svc)), DNSName: aws.String("x.elb.amazonaws.com")}
			},
			wantExists: true, wantHost: "x.elb.amazonaws.com",
		},
		{
			name:    "security groups cannot be read",
			svc:     testService(nil),
			setup:   func(f *fakeAWS, _ *corev1.Service) { f.sgErr = apiErr("UnauthorizedOperation") },
			wantErr: true,
		},
		{
			name: "unattached target group of the NLB remains",
			svc:  nlbSvc(),
			setup: func(f *fakeAWS, svc *corev1.Service) {
				f.orphan = &elbv2types.TargetGroup{TargetGroupArn: aws.String("arn:tg"), TargetGroupName: aws.String(upstreamTargetGroupName(testCluster, "shop", "web", 80, 30080))}
				f.orphanTags = ownedTags
			},
			wantExists: true,
		},
		{
			name: "another Service's target group of the same name is not a leftover",
			svc:  nlbSvc(),
			setup: func(f *fakeAWS, svc *corev1.Service) {
				f.orphan = &elbv2types.TargetGroup{TargetGroupArn: aws.String("arn:tg"), TargetGroupName: aws.String(upstreamTargetGroupName(testCluster, "shop", "web", 80, 30080))}
				f.orphanTags = map[string]string{"kubernetes.io/cluster/" + testCluster: "owned", "kubernetes.io/service-name": "shop/other"}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeAWS{t: t}
			tc.setup(f, tc.svc)
			r, _ := newTestReconciler(f.config())
			st, exists, err := r.Get(context.Background(), tc.svc)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("Get = %v, %t, nil; want an error (never \"gone\" when AWS could not be asked)", st, exists)
				}
				if exists {
					t.Error("exists with an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if exists != tc.wantExists {
				t.Errorf("exists = %t, want %t (calls %v)", exists, tc.wantExists, f.calls)
			}
			if exists && st == nil {
				t.Error("exists with a nil status")
			}
			host := ""
			if st != nil && len(st.Ingress) > 0 {
				host = st.Ingress[0].Hostname
			}
			if host != tc.wantHost {
				t.Errorf("hostname %q, want %q", host, tc.wantHost)
			}
		})
	}
}

func TestDeleteManagedGroup(t *testing.T) {
	tests := []struct {
		name       string
		tags       map[string]string
		deleteErr  error
		wantErr    bool
		wantCode   string
		wantDelete bool
	}{
		{name: "deleted", tags: ownedTags, wantDelete: true},
		{name: "untagged group left alone", wantErr: true},
		{name: "group the cluster shares left alone", tags: map[string]string{"kubernetes.io/cluster/prod": "shared"}, wantErr: true},
		{name: "legacy-tagged group deleted", tags: map[string]string{"KubernetesCluster": "prod"}, wantDelete: true},
		{name: "already gone is success", tags: ownedTags, deleteErr: apiErr(codeGroupNotFound), wantDelete: true},
		{name: "still in use is an error, so the finalizer stays", tags: ownedTags, deleteErr: apiErr(codeDependencyViolation), wantErr: true, wantCode: codeDependencyViolation, wantDelete: true},
		{name: "other errors returned", tags: ownedTags, deleteErr: apiErr("UnauthorizedOperation"), wantErr: true, wantCode: "UnauthorizedOperation", wantDelete: true},
		{name: "another cluster's group left alone", tags: map[string]string{"kubernetes.io/cluster/other": "owned"}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			deleted := false
			r, _ := newTestReconciler(Config{EC2: EC2{DeleteSecurityGroup: func(_ context.Context, in *ec2.DeleteSecurityGroupInput, _ ...func(*ec2.Options)) (*ec2.DeleteSecurityGroupOutput, error) {
				deleted = true
				if aws.ToString(in.GroupId) != "sg-1" {
					t.Errorf("deleted %s, want sg-1", aws.ToString(in.GroupId))
				}
				if tc.deleteErr != nil {
					return nil, tc.deleteErr
				}
				return &ec2.DeleteSecurityGroupOutput{}, nil
			}}})
			err := r.deleteManagedGroup(context.Background(), &group{id: "sg-1", name: "k8s-elb-a1", tags: tc.tags})
			if (err != nil) != tc.wantErr {
				t.Fatalf("deleteManagedGroup = %v, want error %t", err, tc.wantErr)
			}
			if tc.wantCode != "" && errorCode(err) != tc.wantCode {
				t.Errorf("error %v carries code %q, want %q (wrapped)", err, errorCode(err), tc.wantCode)
			}
			if deleted != tc.wantDelete {
				t.Errorf("DeleteSecurityGroup called = %t, want %t", deleted, tc.wantDelete)
			}
		})
	}
}

func TestDeleteClassicLeftoverGroup(t *testing.T) {
	svc := testService(nil)
	managed := managedGroupFor(svc, ownedTags)
	nodeGroup := ec2types.SecurityGroup{GroupId: aws.String("sg-node"), IpPermissions: []ec2types.IpPermission{
		{IpProtocol: aws.String("-1"), UserIdGroupPairs: []ec2types.UserIdGroupPair{{GroupId: managed.GroupId}, {GroupId: aws.String("sg-someone-else")}}},
		{IpProtocol: aws.String("tcp"), FromPort: aws.Int32(22), ToPort: aws.Int32(22), IpRanges: []ec2types.IpRange{{CidrIp: aws.String("0.0.0.0/0")}}},
	}}
	for _, tc := range []struct {
		name      string
		deleteErr error
		wantErr   bool
	}{
		{"group deleted", nil, false},
		{"group already gone", apiErr(codeGroupNotFound), false},
		{"group still in use", apiErr(codeDependencyViolation), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeAWS{t: t, managed: managed, nodeGroups: []ec2types.SecurityGroup{nodeGroup}, deleteGroupErr: tc.deleteErr}
			r, _ := newTestReconciler(f.config())
			err := r.Delete(context.Background(), svc)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Delete = %v, want error %t (calls %v)", err, tc.wantErr, f.calls)
			}
			if tc.wantErr && !errors.Is(err, tc.deleteErr) {
				t.Errorf("Delete error %v does not wrap %v", err, tc.deleteErr)
			}
			revoke := "ec2.RevokeSecurityGroupIngress sg-node -1/" + aws.ToString(managed.GroupId)
			del := "ec2.DeleteSecurityGroup " + aws.ToString(managed.GroupId)
			ri, di := slices.Index(f.calls, revoke), slices.Index(f.calls, del)
			if ri < 0 || di < 0 || ri > di {
				t.Errorf("calls %v: want only the rule referencing the managed group revoked, before the group is deleted", f.calls)
			}
			if slices.Contains(f.calls, "elb.DeleteLoadBalancer") {
				t.Error("deleted a Classic load balancer that does not exist")
			}
		})
	}
}
