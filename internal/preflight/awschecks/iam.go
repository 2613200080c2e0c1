package awschecks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/arn"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/smithy-go"

	"github.com/awsccmctl/awsccmctl/internal/clustertag"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
)

const fixPreflightIAM = "grant whoever runs preflight iam/preflight-policy.json (iam:GetInstanceProfile, iam:GetRole, iam:SimulatePrincipalPolicy), " +
	"or check the CCM's permissions by hand against " + CCMPolicyFile

// tagKeyExample stands for the keys of a tag request in the simulation: a
// key of the tagging controller's --tags, not a cluster tag.
const tagKeyExample = "example-tag"

// principal is an IAM role or user the CCM will run as.
type principal struct {
	arn string
	// from says how it was found, e.g. "instance profile cp of i-1".
	from string
}

// kind and name split a role or user ARN ("role", "control-plane").
func (p principal) kind() (kind, name string) {
	a, err := arn.Parse(p.arn)
	if err != nil {
		return "role", p.arn
	}
	kind, rest, _ := strings.Cut(a.Resource, "/")
	return kind, rest[strings.LastIndex(rest, "/")+1:]
}

// iamPermissions simulates the CCM's actions for the principal it will run
// as, with the cluster's resource tag in the context of mutating actions.
func (r *runner) iamPermissions(ctx context.Context) preflight.Result {
	if r.iam.SimulatePrincipalPolicy == nil {
		return preflight.Skip("no IAM client")
	}
	ps, res := r.principals(ctx)
	if res != nil {
		return *res
	}
	set, _ := r.instances(ctx) // nil on error: the ID then comes from configuration only
	id := r.cluster(set).id
	var names []string
	mutating := false
	for _, a := range ccmActions() {
		if !slices.Contains(names, a.IAMAction()) {
			names = append(names, a.IAMAction())
		}
		mutating = mutating || a.Mutating
	}
	slices.Sort(names)
	in := &iam.SimulatePrincipalPolicyInput{ActionNames: names}
	tagNote := ""
	if mutating && id != "" {
		// Changes act on resources carrying the cluster tag; creations tag
		// what they create (iam/ccm-policy-least-privilege.json).
		key := "aws:ResourceTag/" + clustertag.Key(id)
		reqKey := "aws:RequestTag/" + clustertag.Key(id)
		// Tag removals name their keys, never a cluster tag (the
		// tagging controller's DeleteTags); the policy requires that.
		in.ContextEntries = []iamtypes.ContextEntry{
			{ContextKeyName: aws.String(key), ContextKeyType: iamtypes.ContextKeyTypeEnumString, ContextKeyValues: []string{string(clustertag.Owned)}},
			{ContextKeyName: aws.String(reqKey), ContextKeyType: iamtypes.ContextKeyTypeEnumString, ContextKeyValues: []string{string(clustertag.Owned)}},
			{ContextKeyName: aws.String("aws:TagKeys"), ContextKeyType: iamtypes.ContextKeyTypeEnumStringList, ContextKeyValues: []string{tagKeyExample}},
		}
		tagNote = fmt.Sprintf(", with %s=owned, %s=owned and aws:TagKeys=%s for tag conditions", key, reqKey, tagKeyExample)
	}
	var denied, fixes, allowedBy, unverifiable []string
	for _, p := range ps {
		in.PolicySourceArn = aws.String(p.arn)
		var results []iamtypes.EvaluationResult
		pager := iam.NewSimulatePrincipalPolicyPaginator(r.iam.SimulatePrincipalPolicy, in)
		for pager.HasMorePages() {
			out, err := pager.NextPage(ctx)
			if err != nil {
				return iamFailure(fmt.Errorf("simulate the CCM's %d actions for %s: %w", len(names), p.arn, err))
			}
			results = append(results, out.EvaluationResults...)
		}
		var implicit, explicitBy []string
		missingCtx := false
		for _, e := range results {
			if e.EvalDecision == iamtypes.PolicyEvaluationDecisionTypeAllowed {
				continue
			}
			d := fmt.Sprintf("%s: %s", aws.ToString(e.EvalActionName), e.EvalDecision)
			var by []string
			for _, m := range e.MatchedStatements {
				by = append(by, aws.ToString(m.SourcePolicyId))
			}
			if len(by) > 0 {
				d += " by " + strings.Join(slices.Compact(by), ", ")
			}
			if len(e.MissingContextValues) > 0 {
				if id == "" && e.EvalDecision == iamtypes.PolicyEvaluationDecisionTypeImplicitDeny {
					// Allowed or not depends on the cluster tag, which
					// preflight does not know: neither pass nor fail.
					unverifiable = append(unverifiable, aws.ToString(e.EvalActionName))
					continue
				}
				missingCtx = true
				d += " (missing context keys: " + strings.Join(e.MissingContextValues, ", ") + ")"
			}
			denied = append(denied, d)
			if e.EvalDecision == iamtypes.PolicyEvaluationDecisionTypeExplicitDeny {
				explicitBy = append(explicitBy, by...)
			} else {
				implicit = append(implicit, aws.ToString(e.EvalActionName))
			}
		}
		kind, name := p.kind()
		if len(explicitBy) > 0 {
			slices.Sort(explicitBy)
			fixes = append(fixes, fmt.Sprintf("remove or narrow the Deny statements of %s on %s %s (an explicit Deny overrides every Allow)",
				strings.Join(slices.Compact(explicitBy), ", "), kind, name))
		}
		if len(implicit) > 0 {
			fix := fmt.Sprintf("attach %s to %s %s: aws iam put-%s-policy --%s-name %s --policy-name aws-cloud-controller-manager --policy-document file://%s",
				CCMPolicyFile, kind, name, kind, kind, name, CCMPolicyFile)
			if missingCtx {
				fix += fmt.Sprintf(" (and make the policies' aws:ResourceTag conditions name %s%s)", clustertag.Prefix, orUnknown(id))
			}
			fixes = append(fixes, fix)
		}
		if len(implicit)+len(explicitBy) == 0 {
			allowedBy = append(allowedBy, fmt.Sprintf("%s (%s)", p.arn, p.from))
		}
	}
	if len(denied) > 0 {
		var who []string
		for _, p := range ps {
			who = append(who, fmt.Sprintf("%s (%s)", p.arn, p.from))
		}
		return preflight.Fail(strings.Join(fixes, "; "), "%s is denied %d of the CCM's %d actions%s: %s",
			strings.Join(who, ", "), len(denied), len(names), tagNote, strings.Join(denied, "; "))
	}
	if len(unverifiable) > 0 {
		slices.Sort(unverifiable)
		return preflight.Warn("set KubernetesClusterID in [Global] of the cloud config (--cloud-config), or tag the instances, so preflight can check the tag-scoped actions",
			"%s is allowed the %d of the CCM's %d actions that do not depend on tags; %d tag-scoped actions cannot be checked without the cluster ID: %s",
			strings.Join(allowedBy, ", "), len(names)-len(slices.Compact(unverifiable)), len(names), len(slices.Compact(unverifiable)), strings.Join(slices.Compact(unverifiable), ", "))
	}
	return preflight.Pass("%s is allowed all %d of the CCM's actions%s", strings.Join(allowedBy, ", "), len(names), tagNote)
}

func orUnknown(id string) string {
	if id == "" {
		return "<cluster-id>"
	}
	return id
}

// principals finds who the CCM will run as: the role of the control-plane
// instances' instance profile, else the caller of preflight.
func (r *runner) principals(ctx context.Context) ([]principal, *preflight.Result) {
	stop := func(res preflight.Result) ([]principal, *preflight.Result) { return nil, &res }
	var ps []principal
	if set, err := r.instances(ctx); err == nil {
		profiles := map[string][]string{} // profile name -> instances
		var order []string
		for _, in := range set.live(r.in.ControlPlaneInstanceIDs...) {
			if in.IamInstanceProfile == nil || aws.ToString(in.IamInstanceProfile.Arn) == "" {
				continue
			}
			a := aws.ToString(in.IamInstanceProfile.Arn)
			name := a[strings.LastIndex(a, "/")+1:]
			if _, ok := profiles[name]; !ok {
				order = append(order, name)
			}
			profiles[name] = append(profiles[name], aws.ToString(in.InstanceId))
		}
		for _, name := range order {
			out, err := r.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
			if err != nil {
				return stop(iamFailure(fmt.Errorf("get instance profile %s: %w", name, err)))
			}
			if out.InstanceProfile == nil || len(out.InstanceProfile.Roles) == 0 {
				return stop(preflight.Fail(fmt.Sprintf("aws iam add-role-to-instance-profile --instance-profile-name %s --role-name <role with %s>", name, CCMPolicyFile),
					"instance profile %s of %s holds no role: the CCM there has no credentials", name, short(profiles[name])))
			}
			roleArn := aws.ToString(out.InstanceProfile.Roles[0].Arn)
			from := fmt.Sprintf("instance profile %s of %s", name, short(profiles[name]))
			if i := slices.IndexFunc(ps, func(p principal) bool { return p.arn == roleArn }); i >= 0 {
				ps[i].from += "; " + from
			} else {
				ps = append(ps, principal{arn: roleArn, from: from})
			}
		}
	}
	if len(ps) > 0 {
		return ps, nil
	}
	caller, err := r.callerIdentity(ctx)
	if err != nil {
		return stop(identityFailure(err))
	}
	callerArn := aws.ToString(caller.Arn)
	from := "the caller of preflight; no control-plane instance profile found"
	a, err := arn.Parse(callerArn)
	if err != nil {
		return stop(preflight.Fail(fixPreflightIAM, "caller ARN %q: %v", callerArn, err))
	}
	kind, rest, _ := strings.Cut(a.Resource, "/")
	switch {
	case a.Service == "iam" && a.Resource == "root":
		return stop(preflight.Pass("the caller is the account root user (%s), which may call every action; the CCM should not run as root", callerArn))
	case a.Service == "iam" && (kind == "role" || kind == "user"):
		return []principal{{arn: callerArn, from: from}}, nil
	case a.Service == "sts" && kind == "assumed-role":
		role, _, _ := strings.Cut(rest, "/")
		out, err := r.iam.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(role)})
		if err != nil {
			return stop(iamFailure(fmt.Errorf("get role %s of caller %s: %w", role, callerArn, err)))
		}
		return []principal{{arn: aws.ToString(out.Role.Arn), from: from + " (session " + callerArn + ")"}}, nil
	}
	return stop(preflight.Warn("run preflight as the role the CCM will use, or pass the control-plane instances so their instance profile is found",
		"cannot simulate the permissions of %s: IAM simulates roles and users only", callerArn))
}

// iamFailure reports an IAM error; missing permissions of preflight's own
// caller leave the question open (warn) rather than fail the CCM's role.
func iamFailure(err error) preflight.Result {
	var ae smithy.APIError
	if errors.As(err, &ae) && (ae.ErrorCode() == "AccessDenied" || ae.ErrorCode() == "AccessDeniedException") {
		return preflight.Warn(fixPreflightIAM, "cannot check the CCM's permissions: %v", err)
	}
	return failedCall(preflight.Fail(fixPreflightIAM, "%v", err), err)
}
