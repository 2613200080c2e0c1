package awsemu

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// IAM enforcement. Off by default: the emulator answers every signed
// request. AddPrincipal turns it on: from then on every API request (EC2,
// ELB, ELBv2, IAM, STS, ECR; not IMDS) must be signed with a known access key,
// and each authorization the request needs (enforce_actions.go) is
// evaluated against the caller's identity-based policies with the same
// evaluator SimulatePrincipalPolicy uses (iam_policy.go). A denied request
// gets AWS's error shape: EC2's UnauthorizedOperation with an encoded
// authorization message, AccessDenied naming user, action and resource
// elsewhere.

// DefaultAccessKeyID is the access key Emulator.Env hands the SDKs, so
// AddPrincipal(Principal{AccessKeyID: DefaultAccessKeyID, ...}) puts a
// process started with Env under a policy.
const DefaultAccessKeyID = "AKIDAWSEMULATOR"

// Principal is a caller of an emulator that enforces IAM.
type Principal struct {
	// AccessKeyID is the key the caller signs with (required).
	AccessKeyID string
	// Arn is who the caller is: the User of AccessDenied messages and what
	// GetCallerIdentity returns (default: the fixture's CallerArn).
	Arn string
	// Policies are the caller's identity-based policy documents (JSON); at
	// least one. Each is validated as IAM's PutRolePolicy does.
	Policies []string
}

// authState holds the principals; enforcement is on when there is one.
type authState struct {
	mu         sync.RWMutex
	principals map[string]*principal // by access key ID
}

// principal is a caller: a fixed set of policies (AddPrincipal), or an
// AssumeRole session, evaluated with its role's current policies.
type principal struct {
	arn, userID string
	policies    []policySource
	role        string // sessions: the role's name
}

// AddPrincipal turns IAM enforcement on (it stays on for the server's
// life) and adds p, replacing a principal with the same access key.
func (s *Server) AddPrincipal(p Principal) error {
	if p.AccessKeyID == "" {
		return errors.New("awsemu: AddPrincipal: AccessKeyID is required")
	}
	if len(p.Policies) == 0 {
		return fmt.Errorf("awsemu: AddPrincipal %s: at least one policy is required", p.AccessKeyID)
	}
	pr := &principal{arn: p.Arn, userID: "AIDAEMULATOR" + p.AccessKeyID}
	if pr.arn == "" {
		pr.arn, pr.userID = s.common.callerArn, s.common.callerUserID
	}
	for i, doc := range p.Policies {
		parsed, err := parsePolicy([]byte(doc))
		if err != nil {
			return fmt.Errorf("awsemu: AddPrincipal %s: policy %d: %w", p.AccessKeyID, i+1, err)
		}
		pr.policies = append(pr.policies, policySource{fmt.Sprintf("policy%d", i+1), "user", parsed})
	}
	s.auth.put(p.AccessKeyID, pr)
	return nil
}

func (a *authState) put(key string, p *principal) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.principals == nil {
		a.principals = map[string]*principal{}
	}
	a.principals[key] = p
}

// lookup returns whether enforcement is on and the key's principal.
func (a *authState) lookup(key string) (on bool, p *principal) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return len(a.principals) > 0, a.principals[key]
}

// sources returns the policies the principal's requests are evaluated with.
func (s *Server) sources(p *principal) []policySource {
	if p.role == "" {
		return p.policies
	}
	s.iam.mu.RLock()
	defer s.iam.mu.RUnlock()
	r, apiErr := s.iam.role(p.role)
	if apiErr != nil {
		return nil // the role is gone: its sessions may do nothing
	}
	return s.iam.sources(r)
}

// authz is one authorization a request needs: an IAM action on a
// resource, with the request context its conditions are evaluated in
// (lower-case keys).
type authz struct {
	action, resource string
	ctx              map[string][]string
}

// authorize checks the request against the caller's policies. It returns
// the caller (nil with enforcement off) or the error to answer with.
func (s *Server) authorize(r *http.Request, svc *service, action string) (*principal, *apiError) {
	on, p := s.auth.lookup(accessKeyID(r))
	if !on {
		return nil, nil
	}
	if p == nil {
		if svc.protocol == protoEC2Query {
			return nil, newAPIError(http.StatusUnauthorized, "AuthFailure", "AWS was not able to validate the provided access credentials")
		}
		return nil, newAPIError(http.StatusForbidden, "InvalidClientTokenId", "The security token included in the request is invalid.")
	}
	sources := s.sources(p)
	for _, a := range s.required(svc, action, r.Form) {
		a.ctx["aws:principalarn"] = []string{p.arn}
		a.ctx["aws:requestedregion"] = []string{s.common.region}
		if ev := evaluate(sources, a.action, a.resource, a.ctx); ev.decision != "allowed" {
			return p, denied(svc, p, a, ev)
		}
	}
	return p, nil
}

// accessKeyID extracts the access key from the SigV4 credential scope.
func accessKeyID(r *http.Request) string {
	cred := r.Form.Get("X-Amz-Credential")
	if auth := r.Header.Get("Authorization"); auth != "" {
		_, after, _ := strings.Cut(auth, "Credential=")
		cred, _, _ = strings.Cut(after, ",")
	}
	key, _, _ := strings.Cut(strings.TrimSpace(cred), "/")
	return key
}

// denied builds the error AWS answers a denied request with.
func denied(svc *service, p *principal, a authz, ev evalResult) *apiError {
	if svc.protocol == protoEC2Query {
		// EC2 does not name the action or resource in the message; they
		// are in the encoded message, which sts:DecodeAuthorizationMessage
		// reveals.
		return newAPIError(http.StatusForbidden, "UnauthorizedOperation",
			"You are not authorized to perform this operation. Encoded authorization failure message: %s", encodeAuthMessage(p, a, ev))
	}
	why := "because no identity-based policy allows the " + a.action + " action"
	if ev.decision == "explicitDeny" {
		why = "with an explicit deny in an identity-based policy"
	}
	return newAPIError(http.StatusForbidden, "AccessDenied", "User: %s is not authorized to perform: %s on resource: %s %s", p.arn, a.action, a.resource, why)
}

// authMessage is the decoded form of an encoded authorization failure
// message, in the shape sts:DecodeAuthorizationMessage returns.
type authMessage struct {
	Allowed      bool `json:"allowed"`
	ExplicitDeny bool `json:"explicitDeny"`
	Context      struct {
		Principal struct {
			Arn string `json:"arn"`
		} `json:"principal"`
		Action     string `json:"action"`
		Resource   string `json:"resource"`
		Conditions struct {
			Items []authMessageCondition `json:"items"`
		} `json:"conditions"`
	} `json:"context"`
}

type authMessageCondition struct {
	Key    string `json:"key"`
	Values struct {
		Items []struct {
			Value string `json:"value"`
		} `json:"items"`
	} `json:"values"`
}

// authMessagePrefix marks the emulator's encoded messages (AWS's are
// opaque ciphertext; these are base64 JSON behind a marker).
const authMessagePrefix = "awsemu-"

func encodeAuthMessage(p *principal, a authz, ev evalResult) string {
	var m authMessage
	m.ExplicitDeny = ev.decision == "explicitDeny"
	m.Context.Principal.Arn, m.Context.Action, m.Context.Resource = p.arn, a.action, a.resource
	for _, k := range slices.Sorted(maps.Keys(a.ctx)) {
		c := authMessageCondition{Key: k}
		for _, v := range a.ctx[k] {
			c.Values.Items = append(c.Values.Items, struct {
				Value string `json:"value"`
			}{v})
		}
		m.Context.Conditions.Items = append(m.Context.Conditions.Items, c)
	}
	b, _ := json.Marshal(m) // plain structs: cannot fail
	return authMessagePrefix + base64.RawURLEncoding.EncodeToString(b)
}

// decodeAuthMessage reverses encodeAuthMessage.
func decodeAuthMessage(s string) (string, bool) {
	rest, ok := strings.CutPrefix(s, authMessagePrefix)
	if !ok {
		return "", false
	}
	b, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil || !json.Valid(b) {
		return "", false
	}
	return string(b), true
}

// DecodeAuthorizationMessage decodes the message of an EC2
// UnauthorizedOperation error from this emulator (as
// sts:DecodeAuthorizationMessage does, without needing permission): a JSON
// document naming the principal, the action, the resource and the request
// context.
func DecodeAuthorizationMessage(errorMessage string) (string, error) {
	_, enc, ok := strings.Cut(errorMessage, "Encoded authorization failure message: ")
	if !ok {
		enc = errorMessage
	}
	doc, ok := decodeAuthMessage(strings.TrimSpace(enc))
	if !ok {
		return "", errors.New("awsemu: not an encoded authorization message of this emulator")
	}
	return doc, nil
}

// addSession makes the credentials of a successful AssumeRole act as the
// role while enforcement is on.
func (s *Server) addSession(res assumeRoleResult, roleArn string) {
	m := roleArnRE.FindStringSubmatch(roleArn)
	if m == nil {
		return
	}
	s.auth.put(res.Credentials.AccessKeyID, &principal{arn: res.AssumedRoleUser.Arn, userID: res.AssumedRoleUser.AssumedRoleID, role: m[2]})
}

// asCaller adjusts the answers that depend on who calls, with enforcement
// on: GetCallerIdentity names the caller, and AssumeRole's credentials
// act as the role.
func (s *Server) asCaller(caller *principal, svc *service, form url.Values, resp any) any {
	if caller == nil || svc.name != "sts" {
		return resp
	}
	switch res := resp.(type) {
	case getCallerIdentityResult:
		res.Arn, res.UserID = caller.arn, caller.userID
		return res
	case assumeRoleResult:
		s.addSession(res, form.Get("RoleArn"))
	}
	return resp
}
