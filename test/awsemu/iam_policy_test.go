package awsemu

import (
	"slices"
	"strings"
	"testing"
)

func mustPolicy(t *testing.T, doc string) *policy {
	t.Helper()
	p, err := parsePolicy([]byte(doc))
	if err != nil {
		t.Fatalf("parsePolicy(%s): %v", doc, err)
	}
	return p
}

func TestParsePolicyErrors(t *testing.T) {
	tests := []struct{ name, doc, want string }{
		{"not json", `{"Version":`, "not a JSON object"},
		{"not an object", `["x"]`, "not a JSON object"},
		{"no statement", `{"Version":"2012-10-17"}`, "Statement is required"},
		{"bad version", `{"Version":"2012-10-18","Statement":{"Effect":"Allow","Action":"*","Resource":"*"}}`, "Version 2012-10-18"},
		{"lower-case element", `{"Version":"2012-10-17","statement":[]}`, `unknown element "statement"`},
		{"bad effect", `{"Statement":[{"Effect":"Alow","Action":"*","Resource":"*"}]}`, `Statement[0]: Effect must be "Allow" or "Deny", got Alow`},
		{"action and notaction", `{"Statement":{"Effect":"Allow","Action":"*","NotAction":"iam:*","Resource":"*"}}`, "exactly one of Action and NotAction"},
		{"no resource", `{"Statement":{"Sid":"S1","Effect":"Allow","Action":"ec2:*"}}`, "Statement[0] (S1): exactly one of Resource and NotResource"},
		{"principal", `{"Statement":{"Effect":"Allow","Principal":"*","Action":"*","Resource":"*"}}`, "prohibited field Principal"},
		{"bad action", `{"Statement":{"Effect":"Allow","Action":"ec2DescribeInstances","Resource":"*"}}`, `action "ec2DescribeInstances"`},
		{"bad resource", `{"Statement":{"Effect":"Allow","Action":"ec2:*","Resource":"i-123"}}`, `resource "i-123" must be "*" or an ARN`},
		{"action not a string", `{"Statement":{"Effect":"Allow","Action":[1],"Resource":"*"}}`, "Action must be a string"},
		{"unknown operator", `{"Statement":{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"StringEqualz":{"k":"v"}}}}`, `condition operator "StringEqualz" is not supported`},
		{"unsupported operator", `{"Statement":{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}}}}`, `"IpAddress" is not supported`},
		{"bad qualifier", `{"Statement":{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"ForSomeValues:StringEquals":{"k":"v"}}}}`, `unknown qualifier "ForSomeValues"`},
		{"null value", `{"Statement":{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"Null":{"k":"maybe"}}}}`, `value "maybe" is not true or false`},
		{"empty condition values", `{"Statement":{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"StringEquals":{"k":[]}}}}`, "non-empty list"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parsePolicy([]byte(tc.doc))
			if err == nil || !strings.HasPrefix(err.Error(), "MalformedPolicyDocument: ") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want MalformedPolicyDocument mentioning %q", err, tc.want)
			}
		})
	}
	// Accepted shapes: Statement object, string Action, list Resource,
	// number and boolean condition values.
	mustPolicy(t, `{"Version":"2008-10-17","Statement":{"Effect":"Deny","Action":"ec2:*","Resource":["arn:aws:ec2:*:*:instance/*"],
		"Condition":{"Bool":{"aws:SecureTransport":false},"StringEquals":{"k":[1,"2"]},"StringLikeIfExists":{"j":"x*"}}}}`)
}

func TestConditionEval(t *testing.T) {
	tests := []struct {
		name, cond string
		ctx        map[string][]string
		want       bool
	}{
		{"StringEquals match", `{"StringEquals":{"aws:ResourceTag/Env":"prod"}}`, map[string][]string{"aws:resourcetag/env": {"prod"}}, true},
		{"StringEquals other", `{"StringEquals":{"aws:ResourceTag/Env":"prod"}}`, map[string][]string{"aws:resourcetag/env": {"dev"}}, false},
		{"StringEquals case-sensitive value", `{"StringEquals":{"k":"prod"}}`, map[string][]string{"k": {"PROD"}}, false},
		{"StringEquals absent", `{"StringEquals":{"k":"prod"}}`, nil, false},
		{"values ORed", `{"StringEquals":{"k":["dev","prod"]}}`, map[string][]string{"k": {"prod"}}, true},
		{"keys ANDed", `{"StringEquals":{"a":"1","b":"2"}}`, map[string][]string{"a": {"1"}, "b": {"3"}}, false},
		{"operators ANDed", `{"StringEquals":{"a":"1"},"StringLike":{"b":"x*"}}`, map[string][]string{"a": {"1"}, "b": {"xy"}}, true},
		{"StringNotEquals other", `{"StringNotEquals":{"k":"prod"}}`, map[string][]string{"k": {"dev"}}, true},
		{"StringNotEquals same", `{"StringNotEquals":{"k":"prod"}}`, map[string][]string{"k": {"prod"}}, false},
		{"StringNotEquals absent", `{"StringNotEquals":{"k":"prod"}}`, nil, true},
		{"StringEqualsIgnoreCase", `{"StringEqualsIgnoreCase":{"k":"OWNED"}}`, map[string][]string{"k": {"owned"}}, true},
		{"StringLike star", `{"StringLike":{"k":"kube*"}}`, map[string][]string{"k": {"kubernetes"}}, true},
		{"StringLike question", `{"StringLike":{"k":"?wned"}}`, map[string][]string{"k": {"owned"}}, true},
		{"StringNotLike", `{"StringNotLike":{"k":"kube*"}}`, map[string][]string{"k": {"kubernetes"}}, false},
		{"ArnLike", `{"ArnLike":{"aws:SourceArn":"arn:aws:ec2:*:123456789012:instance/*"}}`, map[string][]string{"aws:sourcearn": {"arn:aws:ec2:us-east-1:123456789012:instance/i-1"}}, true},
		{"Null true absent", `{"Null":{"k":"true"}}`, nil, true},
		{"Null true present", `{"Null":{"k":"true"}}`, map[string][]string{"k": {"x"}}, false},
		{"Null false present", `{"Null":{"k":"false"}}`, map[string][]string{"k": {"x"}}, true},
		{"Bool", `{"Bool":{"aws:SecureTransport":"true"}}`, map[string][]string{"aws:securetransport": {"TRUE"}}, true},
		{"Bool false", `{"Bool":{"aws:SecureTransport":true}}`, map[string][]string{"aws:securetransport": {"false"}}, false},
		{"IfExists absent", `{"StringEqualsIfExists":{"k":"prod"}}`, nil, true},
		{"IfExists present", `{"StringEqualsIfExists":{"k":"prod"}}`, map[string][]string{"k": {"dev"}}, false},
		{"ForAnyValue match", `{"ForAnyValue:StringEquals":{"aws:TagKeys":["b","c"]}}`, map[string][]string{"aws:tagkeys": {"a", "b"}}, true},
		{"ForAnyValue none", `{"ForAnyValue:StringEquals":{"aws:TagKeys":["b","c"]}}`, map[string][]string{"aws:tagkeys": {"a"}}, false},
		{"ForAnyValue absent", `{"ForAnyValue:StringEquals":{"aws:TagKeys":"b"}}`, nil, false},
		{"ForAnyValue negated", `{"ForAnyValue:StringNotEquals":{"aws:TagKeys":"a"}}`, map[string][]string{"aws:tagkeys": {"a", "b"}}, true},
		{"ForAllValues subset", `{"ForAllValues:StringLike":{"aws:TagKeys":["a","b*"]}}`, map[string][]string{"aws:tagkeys": {"a", "bx"}}, true},
		{"ForAllValues not subset", `{"ForAllValues:StringEquals":{"aws:TagKeys":["a","b"]}}`, map[string][]string{"aws:tagkeys": {"a", "d"}}, false},
		{"ForAllValues absent", `{"ForAllValues:StringEquals":{"aws:TagKeys":"a"}}`, nil, true},
		{"ForAllValues negated", `{"ForAllValues:StringNotEquals":{"aws:TagKeys":"a"}}`, map[string][]string{"aws:tagkeys": {"b", "c"}}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := mustPolicy(t, `{"Statement":{"Effect":"Allow","Action":"*","Resource":"*","Condition":`+tc.cond+`}}`)
			got := evaluate([]policySource{{"p", "role", p}}, "ec2:CreateTags", "*", tc.ctx).decision == "allowed"
			if got != tc.want {
				t.Errorf("condition %s with %v: matched %v, want %v", tc.cond, tc.ctx, got, tc.want)
			}
		})
	}
}

func TestEvaluate(t *testing.T) {
	allow := mustPolicy(t, `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Action":["ec2:Describe*","elasticloadbalancing:?escribeLoadBalancers"],"Resource":"*"},
		{"Effect":"Allow","Action":"ec2:CreateTags","Resource":"arn:aws:ec2:*:*:instance/*",
		 "Condition":{"StringEquals":{"aws:ResourceTag/kubernetes.io/cluster/demo":"owned"}}},
		{"Effect":"Allow","NotAction":["iam:*","sts:*","ec2:*"],"NotResource":"arn:aws:s3:::secret/*"}]}`)
	deny := mustPolicy(t, `{"Statement":{"Effect":"Deny","Action":"ec2:DescribeVpcs","Resource":"*"}}`)
	sources := []policySource{{"ccm", "user-managed", allow}, {"no-vpcs", "role", deny}}
	owned := map[string][]string{"aws:resourcetag/kubernetes.io/cluster/demo": {"owned"}}
	instance := "arn:aws:ec2:us-east-1:123456789012:instance/i-1"
	tests := []struct {
		name, action, resource string
		ctx                    map[string][]string
		want                   string
		matched, missing       []string
	}{
		{"wildcard action", "ec2:DescribeInstances", "*", nil, "allowed", []string{"ccm"}, nil},
		{"action case-insensitive", "EC2:describeinstances", "*", nil, "allowed", []string{"ccm"}, nil},
		{"question mark", "elasticloadbalancing:DescribeLoadBalancers", "*", nil, "allowed", []string{"ccm", "ccm"}, nil},
		{"implicit deny", "iam:PassRole", "*", nil, "implicitDeny", nil, nil},
		{"explicit deny wins", "ec2:DescribeVpcs", "*", nil, "explicitDeny", []string{"no-vpcs"}, nil},
		{"tag condition", "ec2:CreateTags", instance, owned, "allowed", []string{"ccm"}, nil},
		{"tag condition other value", "ec2:CreateTags", instance, map[string][]string{"aws:resourcetag/kubernetes.io/cluster/demo": {"shared"}}, "implicitDeny", nil, nil},
		{"tag condition missing", "ec2:CreateTags", instance, nil, "implicitDeny", nil, []string{"aws:ResourceTag/kubernetes.io/cluster/demo"}},
		{"resource mismatch", "ec2:CreateTags", "arn:aws:s3:::secret/x", owned, "implicitDeny", nil, nil},
		{"NotAction", "s3:GetObject", "arn:aws:s3:::logs/x", nil, "allowed", []string{"ccm"}, nil},
		{"NotAction excluded", "sts:AssumeRole", "arn:aws:s3:::logs/x", nil, "implicitDeny", nil, nil},
		{"NotResource excluded", "s3:GetObject", "arn:aws:s3:::secret/x", nil, "implicitDeny", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := evaluate(sources, tc.action, tc.resource, tc.ctx)
			var ids []string
			for _, m := range got.matched {
				ids = append(ids, m.id)
			}
			if got.decision != tc.want || !slices.Equal(ids, tc.matched) || !slices.Equal(got.missing, tc.missing) {
				t.Errorf("got %s matched %v missing %v, want %s %v %v", got.decision, ids, got.missing, tc.want, tc.matched, tc.missing)
			}
		})
	}
}
