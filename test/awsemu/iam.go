package awsemu

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// IAMFixture is the IAM part of a Fixture: roles, with their instance
// profiles and policies, and the managed policies they attach.
type IAMFixture struct {
	Roles    []IAMRole   `json:"roles,omitempty"`
	Policies []IAMPolicy `json:"policies,omitempty"`
}

// IAMRole is an IAM role. Path defaults to "/", ID to a stable AROA... ID,
// AssumeRolePolicy to a trust policy for ec2.amazonaws.com. Each instance
// profile holds this one role.
type IAMRole struct {
	Name             string                    `json:"name"`
	Path             string                    `json:"path,omitempty"`
	ID               string                    `json:"id,omitempty"`
	AssumeRolePolicy PolicyDocument            `json:"assumeRolePolicy,omitempty"`
	InstanceProfiles []string                  `json:"instanceProfiles,omitempty"`
	AttachedPolicies []string                  `json:"attachedPolicies,omitempty"`
	InlinePolicies   map[string]PolicyDocument `json:"inlinePolicies,omitempty"`
	CreateDate       time.Time                 `json:"createDate,omitzero"`
}

// IAMPolicy is a managed policy with one version (VersionID, default v1):
// arn:aws:iam::<account>:policy/[path/]name, or arn:aws:iam::aws:policy/...
// for an AWS managed policy.
type IAMPolicy struct {
	Arn        string         `json:"arn"`
	Document   PolicyDocument `json:"document"`
	VersionID  string         `json:"versionId,omitempty"`
	CreateDate time.Time      `json:"createDate,omitzero"`
}

// PolicyDocument is a policy in JSON. In YAML it is a mapping (Action and
// Resource take a string or a list, Statement an object or a list, as in
// IAM) or a string holding the JSON text.
type PolicyDocument = json.RawMessage

var (
	policyArnRE    = regexp.MustCompile(`^arn:aws[a-z-]*:iam::(\d{12}|aws):policy((?:/[\w+=,.@-]+)*/)([\w+=,.@-]+)$`)
	iamNameRE      = regexp.MustCompile(`^[\w+=,.@-]{1,64}$`)
	iamPathRE      = regexp.MustCompile(`^/(?:[\x21-\x7e]*/)?$`)
	iamDefaultDate = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
)

const defaultTrustPolicy = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`

// storedPolicy is a policy document as submitted, and parsed.
type storedPolicy struct {
	text string
	doc  *policy
}

type iamRoleRec struct {
	name, path, id, arn, trust string
	created                    time.Time
	attached                   []string
	inline                     map[string]storedPolicy
}

type iamPolicyRec struct {
	arn, name, path, id, version string
	srcType                      string // aws-managed or user-managed
	created                      time.Time
	storedPolicy
	attachments int
}

// iamState is the IAM model; the Server's mu guards it.
type iamState struct {
	roles    table[iamRoleRec] // by lower-case name
	policies table[iamPolicyRec]
	profiles map[string]string // instance profile name -> role name
}

// iamID derives a stable 21-character IAM unique ID (AROA..., AIPA..., ANPA...).
func iamID(prefix, name string) string {
	h := fnv.New64a()
	h.Write([]byte(name))
	return fmt.Sprintf("%s%017X", prefix, h.Sum64())[:21]
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// docText returns the JSON text of a document given as JSON or as a JSON
// string holding it.
func docText(doc []byte) string {
	var s string
	if json.Unmarshal(doc, &s) != nil {
		return string(doc)
	}
	return s
}

// storePolicy parses a document for the fixture element at where.
func storePolicy(doc []byte, where string, bad func(string, ...any)) storedPolicy {
	s := docText(doc)
	p, err := parsePolicy([]byte(s))
	if err != nil {
		bad("%s: %v", where, err)
	}
	return storedPolicy{text: s, doc: p}
}

// buildIAM validates the IAM section of a defaulted fixture, without
// changing it, and returns the model (only meaningful without errors: New
// builds it from the validated fixture).
func (f *Fixture) buildIAM() (*iamState, []error) {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("iam."+format, args...)) }
	st := &iamState{profiles: map[string]string{}}
	for i, p := range f.IAM.Policies {
		where := fmt.Sprintf("policies[%d] (%s)", i, p.Arn)
		m := policyArnRE.FindStringSubmatch(p.Arn)
		switch _, dup := st.policies.get(p.Arn); {
		case m == nil:
			bad("%s: arn must be arn:aws:iam::<account or aws>:policy/[path/]name", where)
			continue
		case m[1] != "aws" && m[1] != f.Account:
			bad("%s: account %s is not the fixture account %s", where, m[1], f.Account)
		case dup:
			bad("%s: duplicate policy", where)
		}
		srcType := "user-managed"
		if m[1] == "aws" {
			srcType = "aws-managed"
		}
		st.policies.put(p.Arn, &iamPolicyRec{
			arn: p.Arn, name: m[3], path: m[2], id: iamID("ANPA", p.Arn), srcType: srcType,
			version: orDefault(p.VersionID, "v1"), created: orDefault(p.CreateDate, iamDefaultDate),
			storedPolicy: storePolicy(p.Document, where+": document", bad),
		})
	}
	for i, r := range f.IAM.Roles {
		where := fmt.Sprintf("roles[%d] (%s)", i, r.Name)
		if !iamNameRE.MatchString(r.Name) {
			bad("%s: name must be 1-64 characters of [A-Za-z0-9+=,.@_-]", where)
		}
		if _, dup := st.roles.get(strings.ToLower(r.Name)); dup {
			bad("%s: duplicate role (names are case-insensitive)", where)
		}
		if r.Path != "" && !iamPathRE.MatchString(r.Path) {
			bad("%s: path %q must start and end with /", where, r.Path)
		}
		rec := &iamRoleRec{name: r.Name, path: orDefault(r.Path, "/"), id: orDefault(r.ID, iamID("AROA", r.Name)),
			trust: orDefault(docText(r.AssumeRolePolicy), defaultTrustPolicy), created: orDefault(r.CreateDate, iamDefaultDate),
			attached: r.AttachedPolicies, inline: map[string]storedPolicy{}}
		rec.arn = "arn:aws:iam::" + f.Account + ":role" + rec.path + r.Name
		for _, ip := range r.InstanceProfiles {
			if other, dup := st.profiles[ip]; dup || !iamNameRE.MatchString(ip) {
				bad("%s: instance profile %q is invalid or already holds role %s (a profile holds one role)", where, ip, other)
			}
			st.profiles[ip] = r.Name
		}
		for _, arn := range r.AttachedPolicies {
			if p, ok := st.policies.get(arn); ok {
				p.attachments++
			} else {
				bad("%s: attachedPolicies: %q is not in iam.policies", where, arn)
			}
		}
		for _, name := range sortedKeys(r.InlinePolicies) {
			if !iamNameRE.MatchString(name) {
				bad("%s: inline policy name %q is invalid", where, name)
			}
			rec.inline[name] = storePolicy(r.InlinePolicies[name], fmt.Sprintf("%s: inlinePolicies[%s]", where, name), bad)
		}
		st.roles.put(strings.ToLower(r.Name), rec)
	}
	prefix := "arn:aws:iam::" + f.Account + ":instance-profile/"
	for i, in := range f.Instances {
		name, ok := strings.CutPrefix(in.IAMInstanceProfileArn, prefix)
		if ok && len(f.IAM.Roles) > 0 && st.profiles[name[strings.LastIndex(name, "/")+1:]] == "" {
			errs = append(errs, fmt.Errorf("instances[%d] (%s): iamInstanceProfileArn %q is not an instance profile of iam.roles", i, in.ID, in.IAMInstanceProfileArn))
		}
	}
	return st, errs
}

// role looks a role up by name (IAM role names are case-insensitive).
func (st *iamState) role(name string) (*iamRoleRec, *apiError) {
	if r, ok := st.roles.get(strings.ToLower(name)); ok {
		return r, nil
	}
	return nil, errNoSuchEntity("The role with name %s cannot be found.", name)
}

// PutRolePolicy adds or replaces the inline policy name of role, as the IAM
// PutRolePolicy API does. doc is the policy JSON; an invalid document is
// rejected with a MalformedPolicyDocument error.
func (s *Server) PutRolePolicy(role, name, doc string) error {
	var err error
	p := storePolicy([]byte(doc), "policy "+name, func(format string, args ...any) { err = fmt.Errorf(format, args...) })
	if err == nil && !iamNameRE.MatchString(name) {
		err = fmt.Errorf("invalid policy name %q", name)
	}
	if err != nil {
		return fmt.Errorf("awsemu: role %s: %w", role, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, apiErr := s.iam.role(role)
	if apiErr != nil {
		return fmt.Errorf("awsemu: %w", apiErr)
	}
	r.inline[name] = p
	return nil
}

// iamService emulates the IAM reads of the CCM's preflight and the policy
// simulator (awsQuery, Version 2010-05-08).
type iamService struct{ s *Server }

func (*iamService) name() string        { return "iam" }
func (*iamService) signingName() string { return "iam" }
func (*iamService) apiVersion() string  { return "2010-05-08" }
func (*iamService) protocol() protocol  { return protoAWSQuery }
func (*iamService) xmlns() string       { return "https://iam.amazonaws.com/doc/2010-05-08/" }

// IAM errors: NoSuchEntity is a 404, the others 400.
func errNoSuchEntity(f string, a ...any) *apiError { return newAPIError(404, "NoSuchEntity", f, a...) }
func errInvalidInput(f string, a ...any) *apiError { return newAPIError(400, "InvalidInput", f, a...) }
func errValidation(f string, a ...any) *apiError {
	return newAPIError(400, "ValidationError", "1 validation error detected: "+f, a...)
}

// iamPage decodes MaxItems (1-1000, default 100) and Marker.
func iamPage(form url.Values) (limit, offset int, apiErr *apiError) {
	limit = 100
	if v := form.Get("MaxItems"); v != "" {
		var err error
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 || limit > 1000 {
			return 0, 0, errValidation("Value '%s' at 'maxItems' failed to satisfy constraint: Member must have value between 1 and 1000", v)
		}
	}
	if m := form.Get("Marker"); m != "" {
		raw, err := base64.RawURLEncoding.DecodeString(m)
		n, ok := strings.CutPrefix(string(raw), "awsemu:")
		if offset, err = strconv.Atoi(n); err != nil || !ok || offset < 0 {
			return 0, 0, errInvalidInput("Invalid Marker: %s", m)
		}
	}
	return limit, offset, nil
}

// urlEncode encodes a policy document as IAM returns it (RFC 3986).
func urlEncode(s string) string { return strings.ReplaceAll(url.QueryEscape(s), "+", "%20") }

func iamDate(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// Response elements; fields are named as the XML elements.
type xmlRole struct {
	Path, RoleName                            string
	RoleID                                    string `xml:"RoleId"`
	Arn, CreateDate, AssumeRolePolicyDocument string
	MaxSessionDuration                        int
}

func (r *iamRoleRec) xml() xmlRole {
	return xmlRole{r.path, r.name, r.id, r.arn, iamDate(r.created), urlEncode(r.trust), 3600}
}

type xmlInstanceProfile struct {
	Path, InstanceProfileName string
	InstanceProfileID         string `xml:"InstanceProfileId"`
	Arn, CreateDate           string
	Roles                     []xmlRole `xml:"Roles>member"`
}

type xmlPolicy struct {
	PolicyName       string
	PolicyID         string `xml:"PolicyId"`
	Arn, Path        string
	DefaultVersionID string `xml:"DefaultVersionId"`
	AttachmentCount  int
	IsAttachable     bool
	CreateDate       string
	UpdateDate       string
}

type xmlPolicyVersion struct {
	Document         string
	VersionID        string `xml:"VersionId"`
	IsDefaultVersion bool
	CreateDate       string
}

type xmlAttachedPolicy struct{ PolicyName, PolicyArn string }

func (t *iamService) handle(_ context.Context, action string, form url.Values) (any, *apiError) {
	if action == "SimulatePrincipalPolicy" {
		return t.simulatePrincipalPolicy(form)
	}
	names := map[string]string{}
	for _, p := range iamParams[action] {
		if names[p] = form.Get(p); names[p] == "" {
			return nil, errValidation("Value null at '%s%s' failed to satisfy constraint: Member must not be null", strings.ToLower(p[:1]), p[1:])
		}
	}
	limit, offset, apiErr := iamPage(form)
	if apiErr != nil {
		return nil, apiErr
	}
	s := t.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := s.iam
	var r *iamRoleRec
	if name, ok := names["RoleName"]; ok {
		if r, apiErr = st.role(name); apiErr != nil {
			return nil, apiErr
		}
	}
	switch action {
	case "GetInstanceProfile":
		name := names["InstanceProfileName"]
		role, ok := st.profiles[name]
		if !ok {
			return nil, errNoSuchEntity("Instance Profile %s cannot be found.", name)
		}
		r, _ := st.role(role)
		return struct{ InstanceProfile xmlInstanceProfile }{xmlInstanceProfile{"/", name, iamID("AIPA", name), "arn:aws:iam::" + s.account + ":instance-profile/" + name,
			iamDate(r.created), []xmlRole{r.xml()}}}, nil
	case "GetRole":
		return struct{ Role xmlRole }{r.xml()}, nil
	case "ListAttachedRolePolicies":
		var all []xmlAttachedPolicy
		for _, arn := range r.attached {
			if p, _ := st.policies.get(arn); strings.HasPrefix(p.path, orDefault(form.Get("PathPrefix"), "/")) {
				all = append(all, xmlAttachedPolicy{p.name, arn})
			}
		}
		page, next := paginate(all, limit, offset)
		return struct {
			AttachedPolicies []xmlAttachedPolicy `xml:"AttachedPolicies>member"`
			IsTruncated      bool                `xml:"IsTruncated"`
			Marker           string              `xml:"Marker,omitempty"`
		}{page, next != "", next}, nil
	case "ListRolePolicies":
		page, next := paginate(sortedKeys(r.inline), limit, offset)
		return struct {
			PolicyNames []string `xml:"PolicyNames>member"`
			IsTruncated bool     `xml:"IsTruncated"`
			Marker      string   `xml:"Marker,omitempty"`
		}{page, next != "", next}, nil
	case "GetRolePolicy":
		p, ok := r.inline[names["PolicyName"]]
		if !ok {
			return nil, errNoSuchEntity("The role policy with name %s cannot be found.", names["PolicyName"])
		}
		return struct{ RoleName, PolicyName, PolicyDocument string }{r.name, names["PolicyName"], urlEncode(p.text)}, nil
	case "GetPolicy", "GetPolicyVersion":
		p, ok := st.policies.get(names["PolicyArn"])
		if !policyArnRE.MatchString(names["PolicyArn"]) {
			return nil, errInvalidInput("ARN %s is not valid.", names["PolicyArn"])
		} else if !ok {
			return nil, errNoSuchEntity("Policy %s does not exist or is not attachable.", names["PolicyArn"])
		}
		if action == "GetPolicy" {
			d := iamDate(p.created)
			return struct{ Policy xmlPolicy }{xmlPolicy{p.name, p.id, p.arn, p.path, p.version, p.attachments, true, d, d}}, nil
		}
		if v := names["VersionId"]; v != p.version {
			return nil, errNoSuchEntity("Policy %s version %s does not exist or is not attachable.", p.arn, v)
		}
		return struct{ PolicyVersion xmlPolicyVersion }{xmlPolicyVersion{urlEncode(p.text), p.version, true, iamDate(p.created)}}, nil
	}
	return nil, errInvalidAction(action, "iam")
}

// iamParams lists the required parameters of the read operations.
var iamParams = map[string][]string{
	"GetInstanceProfile":       {"InstanceProfileName"},
	"GetRole":                  {"RoleName"},
	"ListAttachedRolePolicies": {"RoleName"},
	"ListRolePolicies":         {"RoleName"},
	"GetRolePolicy":            {"RoleName", "PolicyName"},
	"GetPolicy":                {"PolicyArn"},
	"GetPolicyVersion":         {"PolicyArn", "VersionId"},
}
