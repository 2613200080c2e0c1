package awsemu

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// IAM identity-based policy documents: parsing with IAM's validation rules
// and evaluation as the policy simulator does it.

// policy is a parsed identity-based policy document.
type policy struct{ statements []statement }

type statement struct {
	deny, notAction, notResource bool
	actions, resources           []string // actions in lower case
	conds                        []condition
}

// condition is one key of one operator block, e.g.
// "ForAnyValue:StringLike": {"aws:TagKeys": ["a*", "b"]}.
type condition struct {
	fn       string // base operator, e.g. "StringLike"
	set      string // "", "ForAnyValue" or "ForAllValues"
	ifExists bool
	key      string // as written in the policy
	values   []string
}

// condOp is a condition operator: match compares one policy value with
// one request value; a negated operator is the negation of its positive
// counterpart.
type condOp struct {
	negated bool
	match   func(p, v string) bool
}

var condOps = map[string]condOp{
	"StringEquals":              {false, func(p, v string) bool { return p == v }},
	"StringNotEquals":           {true, func(p, v string) bool { return p == v }},
	"StringEqualsIgnoreCase":    {false, strings.EqualFold},
	"StringNotEqualsIgnoreCase": {true, strings.EqualFold},
	"StringLike":                {false, globMatch},
	"StringNotLike":             {true, globMatch},
	"ArnEquals":                 {false, globMatch},
	"ArnLike":                   {false, globMatch},
	"ArnNotEquals":              {true, globMatch},
	"ArnNotLike":                {true, globMatch},
	"Bool":                      {false, strings.EqualFold},
	"Null":                      {}, // evaluated on the key's presence
}

// parsePolicy parses and validates an identity-based policy document as
// IAM does on PutRolePolicy and CreatePolicy.
func parsePolicy(doc []byte) (*policy, error) {
	var top map[string]any
	if err := json.Unmarshal(doc, &top); err != nil {
		return nil, fmt.Errorf("MalformedPolicyDocument: the policy is not a JSON object (%w)", err)
	}
	if top == nil {
		return nil, errors.New("MalformedPolicyDocument: the policy is not a JSON object (null)")
	}
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	for _, k := range slices.Sorted(maps.Keys(top)) {
		if k != "Version" && k != "Id" && k != "Statement" {
			bad("unknown element %q (IAM element names are case-sensitive)", k)
		}
	}
	if v, ok := top["Version"]; ok && v != "2012-10-17" && v != "2008-10-17" {
		bad("Version %v is not 2012-10-17 or 2008-10-17", v)
	}
	stmts, _ := top["Statement"].([]any)
	if st, ok := top["Statement"].(map[string]any); ok {
		stmts = []any{st}
	}
	if len(stmts) == 0 {
		bad("Statement is required (an object or a non-empty list of objects)")
	}
	p := &policy{}
	for i, raw := range stmts {
		where := fmt.Sprintf("Statement[%d]", i)
		m, ok := raw.(map[string]any)
		if !ok {
			bad("%s: not an object", where)
			continue
		}
		if sid, ok := m["Sid"].(string); ok {
			where += " (" + sid + ")"
		}
		p.statements = append(p.statements, parseStatement(m, func(format string, args ...any) {
			bad("%s: %s", where, fmt.Sprintf(format, args...))
		}))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("MalformedPolicyDocument: %s", strings.Join(errs, "; "))
	}
	return p, nil
}

func parseStatement(m map[string]any, bad func(string, ...any)) statement {
	var st statement
	for _, k := range slices.Sorted(maps.Keys(m)) {
		switch k {
		case "Sid", "Effect", "Action", "NotAction", "Resource", "NotResource", "Condition":
		case "Principal", "NotPrincipal":
			bad("has prohibited field %s (identity-based policies have no principal)", k)
		default:
			bad("unknown element %q", k)
		}
	}
	switch m["Effect"] {
	case "Allow":
	case "Deny":
		st.deny = true
	default:
		bad("Effect must be \"Allow\" or \"Deny\", got %v", m["Effect"])
	}
	list := func(name string) ([]string, bool) {
		v, ok := m[name]
		if !ok {
			return nil, false
		}
		vals, err := stringList(v, false)
		if err != nil || len(vals) == 0 {
			bad("%s must be a string or a non-empty list of strings", name)
		}
		return vals, true
	}
	acts, hasA := list("Action")
	nacts, hasNA := list("NotAction")
	if hasA == hasNA {
		bad("exactly one of Action and NotAction is required")
	}
	st.notAction, acts = hasNA, append(acts, nacts...)
	for _, a := range acts {
		if svc, name, ok := strings.Cut(a, ":"); a != "*" && (!ok || svc == "" || name == "" || strings.Contains(name, ":")) {
			bad("action %q must be \"*\" or \"service:action\"", a)
		}
		st.actions = append(st.actions, strings.ToLower(a))
	}
	res, hasR := list("Resource")
	nres, hasNR := list("NotResource")
	if hasR == hasNR {
		bad("exactly one of Resource and NotResource is required")
	}
	st.notResource, st.resources = hasNR, slices.Concat(res, nres)
	for _, r := range st.resources {
		if r != "*" && !strings.HasPrefix(r, "arn:") {
			bad("resource %q must be \"*\" or an ARN", r)
		}
	}
	if c, ok := m["Condition"]; ok {
		st.conds = parseConditions(c, bad)
	}
	return st
}

func parseConditions(c any, bad func(string, ...any)) []condition {
	blocks, ok := c.(map[string]any)
	if !ok {
		bad("Condition must be an object")
		return nil
	}
	var out []condition
	for _, opName := range slices.Sorted(maps.Keys(blocks)) {
		cond := condition{fn: opName}
		if set, rest, ok := strings.Cut(opName, ":"); ok {
			cond.set, cond.fn = set, rest
			if set != "ForAnyValue" && set != "ForAllValues" {
				bad("condition operator %q: unknown qualifier %q", opName, set)
			}
		}
		if base, ok := strings.CutSuffix(cond.fn, "IfExists"); ok && base != "Null" {
			cond.fn, cond.ifExists = base, true
		}
		if _, known := condOps[cond.fn]; !known {
			bad("condition operator %q is not supported (awsemu evaluates String*, Arn*, Bool and Null)", opName)
		}
		keys, ok := blocks[opName].(map[string]any)
		if !ok || len(keys) == 0 {
			bad("condition %q must map condition keys to values", opName)
			continue
		}
		for _, key := range slices.Sorted(maps.Keys(keys)) {
			vals, err := stringList(keys[key], true)
			if err != nil || len(vals) == 0 {
				bad("condition %s %q: values must be a string, number, boolean or a non-empty list of them", opName, key)
			}
			for _, v := range vals {
				if (cond.fn == "Bool" || cond.fn == "Null") && !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
					bad("condition %s %q: value %q is not true or false", opName, key, v)
				}
			}
			c := cond
			c.key, c.values = key, vals
			out = append(out, c)
		}
	}
	return out
}

// stringList accepts a string or a list of strings; with scalars also
// numbers and booleans (condition values).
func stringList(v any, scalars bool) ([]string, error) {
	l, isList := v.([]any)
	if !isList {
		l = []any{v}
	}
	out := make([]string, 0, len(l))
	for _, x := range l {
		_, isString := x.(string)
		_, isNumber := x.(float64)
		if _, isBool := x.(bool); !isString && (!scalars || (!isNumber && !isBool)) {
			return nil, fmt.Errorf("unexpected %T", x)
		}
		out = append(out, fmt.Sprint(x))
	}
	return out, nil
}

// policySource is one policy taking part in an evaluation.
type policySource struct {
	id, typ string // SourcePolicyId, SourcePolicyType
	doc     *policy
}

type evalResult struct {
	decision string         // allowed, implicitDeny or explicitDeny
	matched  []policySource // one entry per matching statement
	missing  []string       // condition keys absent from the context
}

// evaluate simulates one request as identity-based policy logic does: a
// matching Deny wins, else a matching Allow allows, else the request is
// implicitly denied. Context keys are lower case.
func evaluate(sources []policySource, action, resource string, context map[string][]string) evalResult {
	var allows, denies []policySource
	var missing []string
	for _, src := range sources {
		for _, st := range src.doc.statements {
			if !matchAny(st.actions, strings.ToLower(action), st.notAction) || !matchAny(st.resources, resource, st.notResource) {
				continue
			}
			ok := true
			for _, c := range st.conds {
				vals, present := context[strings.ToLower(c.key)]
				if !present && !slices.ContainsFunc(missing, func(k string) bool { return strings.EqualFold(k, c.key) }) {
					missing = append(missing, c.key)
				}
				ok = ok && c.eval(vals, present)
			}
			if ok && st.deny {
				denies = append(denies, src)
			} else if ok {
				allows = append(allows, src)
			}
		}
	}
	switch {
	case len(denies) > 0:
		return evalResult{"explicitDeny", denies, missing}
	case len(allows) > 0:
		return evalResult{"allowed", allows, missing}
	}
	return evalResult{"implicitDeny", nil, missing}
}

// matchAny reports whether s matches one of the patterns, negated for
// NotAction and NotResource.
func matchAny(patterns []string, s string, not bool) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return globMatch(p, s) }) != not
}

// eval evaluates the condition against the request's values for its key.
func (c *condition) eval(vals []string, present bool) bool {
	op := condOps[c.fn]
	if c.fn == "Null" {
		return slices.ContainsFunc(c.values, func(p string) bool { return strings.EqualFold(p, "true") != present })
	}
	if !present {
		// A missing key never matches, so negated operators and
		// ForAllValues (vacuously true) hold; IfExists skips the check.
		return c.ifExists || c.set == "ForAllValues" || op.negated && c.set == ""
	}
	// m reports whether one request value matches any policy value.
	m := func(v string) bool {
		return slices.ContainsFunc(c.values, func(p string) bool { return op.match(p, v) })
	}
	notM := func(v string) bool { return !m(v) }
	switch {
	case c.set == "ForAllValues" && op.negated: // no value matches
		return !slices.ContainsFunc(vals, m)
	case c.set == "ForAllValues": // every value matches
		return !slices.ContainsFunc(vals, notM)
	case c.set == "ForAnyValue" && op.negated: // some value does not match
		return slices.ContainsFunc(vals, notM)
	}
	return slices.ContainsFunc(vals, m) != op.negated
}

// sources returns the policies of a role in evaluation order: inline
// policies by name, then attached managed policies.
func (s *iamState) sources(r *iamRoleRec) []policySource {
	var out []policySource
	for _, name := range slices.Sorted(maps.Keys(r.inline)) {
		out = append(out, policySource{name, "role", r.inline[name].doc})
	}
	for _, arn := range r.attached {
		p, _ := s.policies.get(arn)
		out = append(out, policySource{p.name, p.srcType, p.doc})
	}
	return out
}

var (
	assumedRoleArnRE = regexp.MustCompile(`^arn:aws[a-z-]*:sts::(\d{12}):assumed-role/([\w+=,.@-]+)/[\w+=,.@-]+$`)
	contextKeyTypeRE = regexp.MustCompile(`^(string|numeric|boolean|ip|binary|date)(List)?$`)
)

// principalRole maps a PolicySourceArn (a role, or a session of a role) to
// the role. Users and groups are not emulated.
func (s *iamState) principalRole(arn string) (*iamRoleRec, *apiError) {
	m := roleArnRE.FindStringSubmatch(arn)
	if m == nil {
		m = assumedRoleArnRE.FindStringSubmatch(arn)
	}
	if m == nil {
		return nil, errInvalidInput("PolicySourceArn %s is not a role or assumed-role ARN (awsemu emulates no users or groups)", arn)
	}
	r, apiErr := s.role(m[2])
	if apiErr == nil && (m[1] != s.account || strings.Contains(arn, ":role/") && arn != r.arn) {
		apiErr = errNoSuchEntity("The role with name %s cannot be found.", m[2])
	}
	return r, apiErr
}

type xmlEvalResult struct {
	EvalActionName, EvalResourceName, EvalDecision string
	MatchedStatements                              []struct{ SourcePolicyId, SourcePolicyType string } `xml:"MatchedStatements>member"`
	MissingContextValues                           []string                                            `xml:"MissingContextValues>member"`
}

func (s *iamState) simulatePrincipalPolicy(form url.Values) (any, *apiError) {
	for _, p := range []string{"ResourcePolicy", "ResourceOwner", "CallerArn", "ResourceHandlingOption", "PermissionsBoundaryPolicyInputList.member.1"} {
		if form.Get(p) != "" {
			return nil, errInvalidInput("awsemu does not emulate %s", strings.TrimSuffix(p, ".member.1"))
		}
	}
	source, actions := form.Get("PolicySourceArn"), memberValues(form, "ActionNames")
	if source == "" || len(actions) == 0 {
		return nil, errValidation("PolicySourceArn and ActionNames are required")
	}
	resources := memberValues(form, "ResourceArns")
	if len(resources) == 0 {
		resources = []string{"*"}
	}
	limit, offset, apiErr := iamPage(form)
	if apiErr != nil {
		return nil, apiErr
	}
	ctx := map[string][]string{}
	for _, n := range indexedKeys(form, "ContextEntries.member") {
		p := fmt.Sprintf("ContextEntries.member.%d.", n)
		name, typ := form.Get(p+"ContextKeyName"), form.Get(p+"ContextKeyType")
		if name == "" || !contextKeyTypeRE.MatchString(typ) {
			return nil, errInvalidInput("ContextEntries.member.%d: ContextKeyName and a valid ContextKeyType are required", n)
		}
		ctx[strings.ToLower(name)] = append(ctx[strings.ToLower(name)], memberValues(form, p+"ContextKeyValues")...)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, apiErr := s.principalRole(source)
	if apiErr != nil {
		return nil, apiErr
	}
	sources := s.sources(r)
	var results []xmlEvalResult
	for _, a := range actions {
		for _, res := range resources {
			ev := evaluate(sources, a, res, ctx)
			x := xmlEvalResult{EvalActionName: a, EvalResourceName: res, EvalDecision: ev.decision, MissingContextValues: ev.missing}
			for _, m := range ev.matched {
				x.MatchedStatements = append(x.MatchedStatements, struct{ SourcePolicyId, SourcePolicyType string }{m.id, m.typ})
			}
			results = append(results, x)
		}
	}
	page, next := paginate(results, limit, offset)
	return struct {
		EvaluationResults []xmlEvalResult `xml:"EvaluationResults>member"`
		IsTruncated       bool
		Marker            string `xml:",omitempty"`
	}{page, next != "", next}, nil
}
