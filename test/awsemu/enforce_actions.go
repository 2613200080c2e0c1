package awsemu

import (
	"maps"
	"net/url"
	"strings"
	"time"
)

// What each emulated action needs authorized, after the Service
// Authorization Reference ("Actions, resources, and condition keys for
// Amazon EC2", "... for Elastic Load Balancing", "... for Elastic Load
// Balancing V2", "... for IAM", "... for AWS STS"):
//
//   - Describe*, List* and other reads take no resource: Resource "*".
//   - A change names the resource it changes, with its tags as
//     aws:ResourceTag/<key>.
//   - A create names the resource to be created (its ARN ends in "/*" where
//     AWS has not chosen the ID yet), with the request's tags as
//     aws:RequestTag/<key> and aws:TagKeys and no aws:ResourceTag. EC2's
//     CreateSecurityGroup also names the VPC, with the VPC's tags but not
//     the request's: EC2 evaluates aws:RequestTag only on the resources
//     being created.
//   - Tags on create need the tagging action as well: ec2:CreateTags with
//     ec2:CreateAction (EC2's "Grant permission to tag resources during
//     creation"), elasticloadbalancing:AddTags with
//     elasticloadbalancing:CreateAction ("ELB API permissions to tag
//     resources during creation"). Without tags neither is evaluated.
//   - AddTags, CreateTags, RemoveTags and DeleteTags see both the
//     resource's tags and the request's.
//   - sts:GetCallerIdentity needs no permission.
//   - ecr:GetAuthorizationToken takes no resource ("*"): the token is for
//     every registry the caller may pull from.
//   - ecr-public:GetAuthorizationToken takes no resource either, and needs
//     sts:GetServiceBearerToken too, with sts:AWSServiceName
//     ecr-public.amazonaws.com ("Amazon ECR Public: registry
//     authentication").

// required lists the authorizations a request needs, in the order AWS
// reports the first missing one.
func (s *Server) required(svc *service, action string, form url.Values) []authz {
	var out []authz
	switch svc.name {
	case "ec2":
		out = s.ec2Authz(action, form)
	case "elasticloadbalancing":
		out = s.classicAuthz(action, form)
	case "elasticloadbalancingv2":
		out = s.v2Authz(action, form)
	case "iam":
		out = s.iamAuthz(action, form)
	case "sts":
		if action == "GetCallerIdentity" {
			return nil
		}
		res := "*"
		if action == "AssumeRole" {
			res = form.Get("RoleArn")
		}
		out = []authz{{action: "sts:" + action, resource: res}}
	case "ecr-public":
		out = []authz{{action: "ecr-public:" + action, resource: "*"}}
		if action == "GetAuthorizationToken" {
			out = append(out, authz{action: "sts:GetServiceBearerToken", resource: "*",
				ctx: map[string][]string{"sts:awsservicename": {ecrPublicServiceName}}})
		}
	}
	if out == nil {
		prefix := svc.name
		if strings.HasPrefix(prefix, "elasticloadbalancing") {
			prefix = "elasticloadbalancing"
		}
		out = []authz{{action: prefix + ":" + action, resource: "*"}}
	}
	for i := range out {
		if out[i].ctx == nil {
			out[i].ctx = map[string][]string{}
		}
	}
	return out
}

// requestContext is the request context of a request on a resource with
// resourceTags (nil: a resource being created, or one that does not exist)
// carrying requestTags (nil: none).
func requestContext(resourceTags, requestTags map[string]string) map[string][]string {
	ctx := map[string][]string{}
	for k, v := range resourceTags {
		ctx["aws:resourcetag/"+strings.ToLower(k)] = []string{v}
	}
	for k, v := range requestTags {
		ctx["aws:requesttag/"+strings.ToLower(k)] = []string{v}
		ctx["aws:tagkeys"] = append(ctx["aws:tagkeys"], k)
	}
	return ctx
}

// withTagKeys is ctx with aws:TagKeys set to keys (RemoveTags, DeleteTags).
func withTagKeys(ctx map[string][]string, keys []string) map[string][]string {
	if len(keys) > 0 {
		ctx["aws:tagkeys"] = keys
	}
	return ctx
}

func (s *Server) arn(service, resource string) string {
	return "arn:" + awsPartition(s.common.region) + ":" + service + ":" + s.common.region + ":" + s.common.account + ":" + resource
}

// EC2

// ec2Types maps resource ID prefixes to EC2 resource types.
var ec2Types = map[string]string{"sg": "security-group", "vpc": "vpc", "subnet": "subnet", "i": "instance", "rtb": "route-table", "eni": "network-interface"}

func (s *Server) ec2Resource(id string) (arn string, tags map[string]string) {
	prefix, _, _ := strings.Cut(id, "-")
	typ, ok := ec2Types[prefix]
	if !ok {
		return s.arn("ec2", "*/"+id), nil
	}
	s.ec2.mu.RLock()
	defer s.ec2.mu.RUnlock()
	if t, apiErr := s.ec2.resourceTags(id, time.Now()); apiErr == nil {
		tags = maps.Clone(*t)
	}
	return s.arn("ec2", typ+"/"+id), tags
}

func (s *Server) ec2Authz(action string, form url.Values) []authz {
	act := "ec2:" + action
	switch action {
	case "CreateSecurityGroup":
		tags, apiErr := parseTagSpecifications(form, "security-group")
		if apiErr != nil {
			return nil // the handler rejects it
		}
		vpc := form.Get("VpcId")
		if vpc == "" {
			s.ec2.mu.RLock()
			vpc = s.ec2.defaultVPC()
			s.ec2.mu.RUnlock()
		}
		vpcArn, vpcTags := s.ec2Resource(vpc)
		sg := s.arn("ec2", "security-group/*")
		out := []authz{
			{act, sg, requestContext(nil, tags)},
			{act, vpcArn, requestContext(vpcTags, nil)},
		}
		if len(tags) > 0 {
			ctx := requestContext(nil, tags)
			ctx["ec2:createaction"] = []string{action}
			out = append(out, authz{"ec2:CreateTags", sg, ctx})
		}
		return out
	case "CreateTags", "DeleteTags":
		req := map[string]string{}
		var keys []string
		for _, t := range parseTags(form) {
			req[t.Key] = t.Value
			keys = append(keys, t.Key)
		}
		var out []authz
		for _, id := range indexedValues(form, "ResourceId") {
			arn, tags := s.ec2Resource(id)
			ctx := requestContext(tags, req)
			if action == "DeleteTags" {
				ctx = withTagKeys(requestContext(tags, nil), keys)
			}
			out = append(out, authz{act, arn, ctx})
		}
		return out
	case "DeleteSecurityGroup", "AuthorizeSecurityGroupIngress", "RevokeSecurityGroupIngress":
		id := form.Get("GroupId")
		if id == "" {
			return []authz{{act, s.arn("ec2", "security-group/*"), nil}}
		}
		arn, tags := s.ec2Resource(id)
		return []authz{{act, arn, requestContext(tags, nil)}}
	case "CreateRoute", "ReplaceRoute", "DeleteRoute":
		// Authorized on the route table alone (its tags), whatever the
		// target is.
		return s.ec2On(act, form.Get("RouteTableId"), "route-table")
	case "ModifyInstanceAttribute":
		return s.ec2On(act, form.Get("InstanceId"), "instance")
	case "ModifyNetworkInterfaceAttribute":
		// Authorized on the interface, with its own tags (not its
		// instance's).
		return s.ec2On(act, form.Get("NetworkInterfaceId"), "network-interface")
	}
	return nil
}

// ec2On is a change of one existing EC2 resource of type typ: authorized on
// it with its tags (any resource of the type when the request names none).
func (s *Server) ec2On(act, id, typ string) []authz {
	if id == "" {
		return []authz{{act, s.arn("ec2", typ+"/*"), nil}}
	}
	arn, tags := s.ec2Resource(id)
	return []authz{{act, arn, requestContext(tags, nil)}}
}

// Elastic Load Balancing (Classic)

func (s *Server) classicAuthz(action string, form url.Values) []authz {
	act := "elasticloadbalancing:" + action
	lb := func(name string) (string, map[string]string) {
		return s.arn("elasticloadbalancing", "loadbalancer/"+name), s.elbTags(s.elb.classicTagger(), name)
	}
	switch {
	case strings.HasPrefix(action, "Describe"):
		return nil
	case action == "CreateLoadBalancer":
		tags, bad := lbTagMap(form)
		if bad {
			return nil
		}
		arn := s.arn("elasticloadbalancing", "loadbalancer/"+form.Get("LoadBalancerName"))
		return createWithTags(act, arn, tags, action)
	case action == "AddTags" || action == "RemoveTags":
		req, keys := lbRequestTags(s.elb.classicTagger(), form, action)
		var out []authz
		for _, name := range memberValues(form, "LoadBalancerNames") {
			arn, tags := lb(name)
			out = append(out, authz{act, arn, withTagKeys(requestContext(tags, req), keys)})
		}
		return out
	}
	arn, tags := lb(form.Get("LoadBalancerName"))
	return []authz{{act, arn, requestContext(tags, nil)}}
}

// lbTagMap returns the Tags.member.N of an ELB create (bad = the handler
// rejects them).
func lbTagMap(form url.Values) (map[string]string, bool) {
	tags, apiErr := parseLBTags(form)
	if apiErr != nil {
		return nil, true
	}
	var out map[string]string
	for _, t := range tags {
		if out == nil {
			out = map[string]string{}
		}
		out[t.Key] = t.Value
	}
	return out, false
}

// lbRequestTags returns AddTags' tags, or RemoveTags' keys as the
// handler (t) reads them.
func lbRequestTags(t lbTagger, form url.Values, action string) (map[string]string, []string) {
	if action == "RemoveTags" {
		return nil, t.keysOf(form)
	}
	tags, _ := lbTagMap(form)
	return tags, nil
}

// createWithTags is an ELB create of arn: the action, and AddTags when the
// request tags what it creates.
func createWithTags(act, arn string, tags map[string]string, action string) []authz {
	out := []authz{{act, arn, requestContext(nil, tags)}}
	if len(tags) > 0 {
		ctx := requestContext(nil, tags)
		ctx["elasticloadbalancing:createaction"] = []string{action}
		out = append(out, authz{"elasticloadbalancing:AddTags", arn, ctx})
	}
	return out
}

// Elastic Load Balancing V2

// elbTags returns a copy of the tags of the resource t finds by id (nil
// if there is none).
func (s *Server) elbTags(t lbTagger, id string) map[string]string {
	s.elb.mu.RLock()
	defer s.elb.mu.RUnlock()
	if tags, apiErr := t.find(id); apiErr == nil {
		return maps.Clone(*tags)
	}
	return nil
}

// v2Tags returns the tags of an ELBv2 load balancer, listener or target
// group (nil if there is none).
func (s *Server) v2Tags(arn string) map[string]string { return s.elbTags(s.elb.v2Tagger(), arn) }

func (s *Server) v2Authz(action string, form url.Values) []authz {
	act := "elasticloadbalancing:" + action
	on := func(param string) []authz {
		arn := form.Get(param)
		return []authz{{act, arn, requestContext(s.v2Tags(arn), nil)}}
	}
	switch action {
	case "CreateLoadBalancer", "CreateTargetGroup":
		tags, bad := lbTagMap(form)
		if bad {
			return nil
		}
		res := "targetgroup/" + form.Get("Name") + "/*"
		if action == "CreateLoadBalancer" {
			typ := lbTypeCode[orDefault(form.Get("Type"), LBTypeApplication)]
			res = "loadbalancer/" + orDefault(typ, "app") + "/" + form.Get("Name") + "/*"
		}
		return createWithTags(act, s.arn("elasticloadbalancing", res), tags, action)
	case "CreateListener":
		tags, bad := lbTagMap(form)
		if bad {
			return nil
		}
		lbArn := form.Get("LoadBalancerArn")
		// The listener is created on the load balancer: CreateListener is
		// authorized on it (its tags and the request's); tags on create
		// are authorized on the new listener.
		out := []authz{{act, lbArn, requestContext(s.v2Tags(lbArn), tags)}}
		if len(tags) > 0 {
			listener := strings.Replace(lbArn, ":loadbalancer/", ":listener/", 1) + "/*"
			ctx := requestContext(nil, tags)
			ctx["elasticloadbalancing:createaction"] = []string{action}
			out = append(out, authz{"elasticloadbalancing:AddTags", listener, ctx})
		}
		return out
	case "AddTags", "RemoveTags":
		req, _ := lbTagMap(form)
		keys := memberValues(form, "TagKeys")
		var out []authz
		for _, arn := range memberValues(form, "ResourceArns") {
			out = append(out, authz{act, arn, withTagKeys(requestContext(s.v2Tags(arn), req), keys)})
		}
		return out
	case "DeleteLoadBalancer", "ModifyLoadBalancerAttributes", "SetSecurityGroups", "SetSubnets":
		return on("LoadBalancerArn")
	case "DeleteListener", "ModifyListener":
		return on("ListenerArn")
	case "DeleteTargetGroup", "ModifyTargetGroup", "ModifyTargetGroupAttributes", "RegisterTargets", "DeregisterTargets":
		return on("TargetGroupArn")
	}
	return nil
}

// IAM

func (s *Server) iamAuthz(action string, form url.Values) []authz {
	act := "iam:" + action
	var res string
	switch action {
	case "GetRole", "ListAttachedRolePolicies", "ListRolePolicies", "GetRolePolicy":
		name := form.Get("RoleName")
		res = "arn:" + awsPartition(s.common.region) + ":iam::" + s.common.account + ":role/" + name
		s.iam.mu.RLock()
		if r, apiErr := s.iam.role(name); apiErr == nil {
			res = r.arn
		}
		s.iam.mu.RUnlock()
	case "GetInstanceProfile":
		res = "arn:" + awsPartition(s.common.region) + ":iam::" + s.common.account + ":instance-profile/" + form.Get("InstanceProfileName")
	case "GetPolicy", "GetPolicyVersion":
		res = form.Get("PolicyArn")
	case "SimulatePrincipalPolicy":
		res = form.Get("PolicySourceArn")
	default:
		return nil
	}
	return []authz{{act, res, nil}}
}
