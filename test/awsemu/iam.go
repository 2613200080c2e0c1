package awsemu

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
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

// iamState is the IAM model.
type iamState struct {
	*common
	mu       sync.RWMutex      // guards the tables
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
		for _, name := range slices.Sorted(maps.Keys(r.InlinePolicies)) {
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
func (s *iamState) role(name string) (*iamRoleRec, *apiError) {
	if r, ok := s.roles.get(strings.ToLower(name)); ok {
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
	s.iam.mu.Lock()
	defer s.iam.mu.Unlock()
	r, apiErr := s.iam.role(role)
	if apiErr != nil {
		return fmt.Errorf("awsemu: %w", apiErr)
	}
	r.inline[name] = p
	return nil
}

// iamService serves the IAM reads of the CCM's preflight and the policy
// simulator (awsQuery, Version 2010-05-08).
func iamService(s *iamState) *service {
	return &service{
		name: "iam", signingName: "iam", apiVersion: "2010-05-08",
		protocol: protoAWSQuery, xmlns: "https://iam.amazonaws.com/doc/2010-05-08/",
		actions: actionTable{
			"GetInstanceProfile":       s.read(s.getInstanceProfile, "InstanceProfileName"),
			"GetRole":                  s.read(s.getRole, "RoleName"),
			"ListAttachedRolePolicies": s.read(s.listAttachedRolePolicies, "RoleName"),
			"ListRolePolicies":         s.read(s.listRolePolicies, "RoleName"),
			"GetRolePolicy":            s.read(s.getRolePolicy, "RoleName", "PolicyName"),
			"GetPolicy":                s.read(s.getPolicy, "PolicyArn"),
			"GetPolicyVersion":         s.read(s.getPolicyVersion, "PolicyArn", "VersionId"),
			"SimulatePrincipalPolicy":  s.simulatePrincipalPolicy, // iam_policy.go
		},
	}
}

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
		raw, decodeErr := base64.RawURLEncoding.DecodeString(m)
		n, ok := strings.CutPrefix(string(raw), "awsemu:")
		var err error
		if offset, err = strconv.Atoi(n); decodeErr != nil || err != nil || !ok || offset < 0 {
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

// iamReadRequest is a read request as iamState.read checked it.
type iamReadRequest struct {
	form          url.Values
	param         map[string]string // the required parameters
	role          *iamRoleRec       // the role named by a required RoleName
	limit, offset int               // MaxItems and Marker
}

// read wraps a read operation: every required parameter must be set (in
// order; the first missing one is the ValidationError), MaxItems and
// Marker must be valid, and a required RoleName must name a role. fn runs
// under the read lock.
func (s *iamState) read(fn func(*iamReadRequest) (any, *apiError), required ...string) handler {
	return func(form url.Values) (any, *apiError) {
		req := &iamReadRequest{form: form, param: map[string]string{}}
		for _, p := range required {
			if req.param[p] = form.Get(p); req.param[p] == "" {
				return nil, errValidation("Value null at '%s%s' failed to satisfy constraint: Member must not be null", strings.ToLower(p[:1]), p[1:])
			}
		}
		var apiErr *apiError
		if req.limit, req.offset, apiErr = iamPage(form); apiErr != nil {
			return nil, apiErr
		}
		s.mu.RLock()
		defer s.mu.RUnlock()
		if name, ok := req.param["RoleName"]; ok {
			if req.role, apiErr = s.role(name); apiErr != nil {
				return nil, apiErr
			}
		}
		return fn(req)
	}
}

func (s *iamState) getInstanceProfile(req *iamReadRequest) (any, *apiError) {
	name := req.param["InstanceProfileName"]
	role, ok := s.profiles[name]
	if !ok {
		return nil, errNoSuchEntity("Instance Profile %s cannot be found.", name)
	}
	r, _ := s.role(role)
	return struct{ InstanceProfile xmlInstanceProfile }{xmlInstanceProfile{"/", name, iamID("AIPA", name), "arn:aws:iam::" + s.account + ":instance-profile/" + name,
		iamDate(r.created), []xmlRole{r.xml()}}}, nil
}

func (s *iamState) getRole(req *iamReadRequest) (any, *apiError) {
	return struct{ Role xmlRole }{req.role.xml()}, nil
}

func (s *iamState) listAttachedRolePolicies(req *iamReadRequest) (any, *apiError) {
	var all []xmlAttachedPolicy
	for _, arn := range req.role.attached {
		if p, _ := s.policies.get(arn); strings.HasPrefix(p.path, orDefault(req.form.Get("PathPrefix"), "/")) {
			all = append(all, xmlAttachedPolicy{p.name, arn})
		}
	}
	page, next := paginate(all, req.limit, req.offset)
	return struct {
		AttachedPolicies []xmlAttachedPolicy `xml:"AttachedPolicies>member"`
		IsTruncated      bool                `xml:"IsTruncated"`
		Marker           string              `xml:"Marker,omitempty"`
	}{page, next != "", next}, nil
}

func (s *iamState) listRolePolicies(req *iamReadRequest) (any, *apiError) {
	page, next := paginate(slices.Sorted(maps.Keys(req.role.inline)), req.limit, req.offset)
	return struct {
		PolicyNames []string `xml:"PolicyNames>member"`
		IsTruncated bool     `xml:"IsTruncated"`
		Marker      string   `xml:"Marker,omitempty"`
	}{page, next != "", next}, nil
}

func (s *iamState) getRolePolicy(req *iamReadRequest) (any, *apiError) {
	name := req.param["PolicyName"]
	p, ok := req.role.inline[name]
	if !ok {
		return nil, errNoSuchEntity("The role policy with name %s cannot be found.", name)
	}
	return struct{ RoleName, PolicyName, PolicyDocument string }{req.role.name, name, urlEncode(p.text)}, nil
}

// policy finds the managed policy named by PolicyArn.
func (s *iamState) policy(req *iamReadRequest) (*iamPolicyRec, *apiError) {
	arn := req.param["PolicyArn"]
	p, ok := s.policies.get(arn)
	if !policyArnRE.MatchString(arn) {
		return nil, errInvalidInput("ARN %s is not valid.", arn)
	} else if !ok {
		return nil, errNoSuchEntity("Policy %s does not exist or is not attachable.", arn)
	}
	return p, nil
}

func (s *iamState) getPolicy(req *iamReadRequest) (any, *apiError) {
	p, apiErr := s.policy(req)
	if apiErr != nil {
		return nil, apiErr
	}
	d := iamDate(p.created)
	return struct{ Policy xmlPolicy }{xmlPolicy{p.name, p.id, p.arn, p.path, p.version, p.attachments, true, d, d}}, nil
}

func (s *iamState) getPolicyVersion(req *iamReadRequest) (any, *apiError) {
	p, apiErr := s.policy(req)
	if apiErr != nil {
		return nil, apiErr
	}
	if v := req.param["VersionId"]; v != p.version {
		return nil, errNoSuchEntity("Policy %s version %s does not exist or is not attachable.", p.arn, v)
	}
	return struct{ PolicyVersion xmlPolicyVersion }{xmlPolicyVersion{urlEncode(p.text), p.version, true, iamDate(p.created)}}, nil
}
