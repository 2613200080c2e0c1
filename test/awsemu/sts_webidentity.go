package awsemu

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// STS AssumeRoleWithWebIdentity, as AWS documents it ("AssumeRoleWithWebIdentity",
// "Creating a role for web identity or OIDC federation"): an unsigned
// call (the SDK sends it anonymously) carrying an OIDC token; STS checks
// the token, then the role's trust policy, and answers temporary
// credentials of the role. With IAM enforcement on, those credentials act
// as the role (its current policies), like AssumeRole's.
//
// What the emulator checks: the token is a JWT (three base64url parts, a
// JSON header and a JSON payload with iss, sub, aud and exp); exp is in
// the future; the role exists in the fixture; and its trust policy has an
// Allow for sts:AssumeRoleWithWebIdentity whose Principal.Federated is
// the IAM OIDC provider of the token's issuer
// (arn:aws:iam::<account>:oidc-provider/<issuer without https://>) and
// whose conditions hold on <issuer>:aud and <issuer>:sub, with no Deny
// matching. It does not model IAM OIDC provider objects (whose client IDs
// AWS also matches the audience against) nor fetch the issuer's keys: the
// signature is not verified, and an audience is accepted when the trust
// policy's <issuer>:aud condition accepts it.

// webIdentityAction is the trust-policy action of the call.
const webIdentityAction = "sts:AssumeRoleWithWebIdentity"

// sessionNameRE is STS's RoleSessionName pattern (2 to 64 characters).
var sessionNameRE = regexp.MustCompile(`^[\w+=,.@-]{2,64}$`)

type assumeRoleWithWebIdentityResult struct {
	SubjectFromWebIdentityToken string          `xml:"SubjectFromWebIdentityToken"`
	Audience                    string          `xml:"Audience"`
	AssumedRoleUser             assumedRoleUser `xml:"AssumedRoleUser"`
	Credentials                 stsCredentials  `xml:"Credentials"`
	Provider                    string          `xml:"Provider"`
}

// webIdentityClaims are the token claims STS reads.
type webIdentityClaims struct {
	iss, sub string
	aud      []string
	exp      time.Time
}

// errWebIdentityDenied is STS's answer when the trust policy does not
// allow the call (also for a role that does not exist: STS does not say
// which).
func errWebIdentityDenied() *apiError {
	return newAPIError(http.StatusForbidden, "AccessDenied", "Not authorized to perform %s", webIdentityAction)
}

func errInvalidIdentityToken(format string, args ...any) *apiError {
	return newAPIError(http.StatusBadRequest, "InvalidIdentityToken", format, args...)
}

// assumeRoleWithWebIdentity serves the call; it is a Server method because
// it reads IAM (the role's trust policy) and adds the session to the
// principals IAM enforcement knows.
func (s *Server) assumeRoleWithWebIdentity(form url.Values) (any, *apiError) {
	arn, session, token := form.Get("RoleArn"), form.Get("RoleSessionName"), form.Get("WebIdentityToken")
	for _, p := range []struct{ name, value string }{{"RoleArn", arn}, {"RoleSessionName", session}, {"WebIdentityToken", token}} {
		if p.value == "" {
			return nil, errMissingParameter(p.name)
		}
	}
	m := roleArnRE.FindStringSubmatch(arn)
	if m == nil {
		return nil, newAPIError(http.StatusBadRequest, "ValidationError", "%s is invalid", arn)
	}
	if !sessionNameRE.MatchString(session) {
		return nil, newAPIError(http.StatusBadRequest, "ValidationError",
			"1 validation error detected: Value '%s' at 'roleSessionName' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\w+=,.@-]*", session)
	}
	duration := time.Hour
	if v := form.Get("DurationSeconds"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 900 || n > 43200 {
			return nil, newAPIError(http.StatusBadRequest, "ValidationError",
				"1 validation error detected: Value '%s' at 'durationSeconds' failed to satisfy constraint", v)
		}
		duration = time.Duration(n) * time.Second
	}
	claims, apiErr := parseWebIdentityToken(token, time.Now())
	if apiErr != nil {
		return nil, apiErr
	}
	if m[1] != s.common.account {
		return nil, errWebIdentityDenied()
	}
	s.iam.mu.RLock()
	role, notFound := s.iam.role(m[2])
	var trust string
	if notFound == nil {
		trust = role.trust
	}
	s.iam.mu.RUnlock()
	if notFound != nil {
		return nil, errWebIdentityDenied()
	}
	issuer := strings.TrimPrefix(claims.iss, "https://")
	provider := "arn:" + awsPartition(s.common.region) + ":iam::" + s.common.account + ":oidc-provider/" + issuer
	ctx := map[string][]string{
		strings.ToLower(issuer + ":aud"): claims.aud,
		strings.ToLower(issuer + ":sub"): {claims.sub},
	}
	allowed, err := trustAllows(trust, webIdentityAction, "Federated", provider, ctx)
	if err != nil {
		return nil, newAPIError(http.StatusBadRequest, "MalformedPolicyDocument", "the trust policy of role %s: %v", m[2], err)
	}
	if !allowed {
		return nil, errWebIdentityDenied()
	}
	n := s.common.seq.Add(1)
	res := assumeRoleWithWebIdentityResult{
		SubjectFromWebIdentityToken: claims.sub,
		Audience:                    claims.aud[0],
		Provider:                    issuer,
		AssumedRoleUser: assumedRoleUser{
			AssumedRoleID: role.id + ":" + session,
			Arn:           fmt.Sprintf("arn:aws:sts::%s:assumed-role/%s/%s", m[1], m[2], session),
		},
		Credentials: stsCredentials{
			AccessKeyID:     fmt.Sprintf("ASIAEMULATORWEB%05d", n),
			SecretAccessKey: "awsemu-secret-access-key",
			SessionToken:    fmt.Sprintf("awsemu-web-identity-session-token-%d", n),
			Expiration:      time.Now().Add(duration).UTC().Format(time.RFC3339),
		},
	}
	if on, _ := s.auth.lookup(""); on {
		// The session acts as the role; with enforcement off every
		// signed request is answered anyway.
		s.auth.put(res.Credentials.AccessKeyID, &principal{arn: res.AssumedRoleUser.Arn, userID: res.AssumedRoleUser.AssumedRoleID, role: role.name})
	}
	return res, nil
}

// parseWebIdentityToken reads the claims of a JWT without verifying its
// signature (see the top of this file).
func parseWebIdentityToken(token string, now time.Time) (webIdentityClaims, *apiError) {
	var c webIdentityClaims
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return c, errInvalidIdentityToken("The web identity token that was passed could not be validated by AWS: it is not a JWT (header.payload.signature)")
	}
	var header struct {
		Alg string `json:"alg"`
	}
	var payload struct {
		Iss string          `json:"iss"`
		Sub string          `json:"sub"`
		Aud json.RawMessage `json:"aud"`
		Exp *float64        `json:"exp"`
	}
	for i, v := range []any{&header, &payload} {
		raw, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err == nil {
			err = json.Unmarshal(raw, v)
		}
		if err != nil {
			return c, errInvalidIdentityToken("The web identity token that was passed could not be validated by AWS: its %s is not base64url JSON", []string{"header", "payload"}[i])
		}
	}
	if header.Alg == "" || strings.EqualFold(header.Alg, "none") {
		return c, errInvalidIdentityToken("The web identity token that was passed could not be validated by AWS: it is not signed (alg %q)", header.Alg)
	}
	if u, err := url.Parse(payload.Iss); err != nil || u.Scheme != "https" || u.Host == "" {
		return c, errInvalidIdentityToken("The web identity token that was passed could not be validated by AWS: its issuer %q is not an https URL", payload.Iss)
	}
	var one string
	var many []string
	switch {
	case json.Unmarshal(payload.Aud, &one) == nil && one != "":
		c.aud = []string{one}
	case json.Unmarshal(payload.Aud, &many) == nil && len(many) > 0:
		c.aud = many
	default:
		return c, errInvalidIdentityToken("The web identity token that was passed could not be validated by AWS: it has no audience (aud)")
	}
	if payload.Sub == "" || payload.Exp == nil {
		return c, errInvalidIdentityToken("The web identity token that was passed could not be validated by AWS: it lacks sub or exp")
	}
	c.iss, c.sub, c.exp = payload.Iss, payload.Sub, time.Unix(int64(*payload.Exp), 0)
	if !c.exp.After(now) {
		return c, newAPIError(http.StatusBadRequest, "ExpiredTokenException", "Token expired: current date/time %s must be before the expiration date/time %s",
			now.UTC().Format(time.RFC3339), c.exp.UTC().Format(time.RFC3339))
	}
	return c, nil
}

// trustAllows evaluates a role's trust policy (a resource-based policy:
// statements name a Principal) for action by the principal of type typ
// (Federated, Service, AWS) and value, in ctx (lower-case keys): a
// matching Deny wins, else a matching Allow allows.
func trustAllows(doc, action, typ, value string, ctx map[string][]string) (bool, error) {
	var top struct {
		Statement json.RawMessage
	}
	if err := json.Unmarshal([]byte(doc), &top); err != nil {
		return false, err
	}
	var stmts []map[string]any
	if err := json.Unmarshal(top.Statement, &stmts); err != nil {
		var one map[string]any
		if err := json.Unmarshal(top.Statement, &one); err != nil {
			return false, errors.New("Statement is not an object or a list of objects") //nolint:staticcheck // ST1005: the policy document's key, spelt as in the JSON
		}
		stmts = []map[string]any{one}
	}
	allowed := false
	for i, st := range stmts {
		var errs []string
		bad := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
		actions, err := stringList(st["Action"], false)
		if err != nil {
			return false, fmt.Errorf("statement %d: Action: %w", i+1, err)
		}
		if !matchAny(lower(actions), strings.ToLower(action), false) || !principalMatches(st["Principal"], typ, value) {
			continue
		}
		ok := true
		if c, has := st["Condition"]; has {
			for _, cond := range parseConditions(c, bad) {
				vals, present := ctx[strings.ToLower(cond.key)]
				ok = ok && cond.eval(vals, present)
			}
		}
		if len(errs) > 0 {
			return false, fmt.Errorf("statement %d: %s", i+1, strings.Join(errs, "; "))
		}
		switch {
		case ok && st["Effect"] == "Deny":
			return false, nil
		case ok && st["Effect"] == "Allow":
			allowed = true
		}
	}
	return allowed, nil
}

// principalMatches reports whether a statement's Principal names value
// under typ ("*" matches everyone).
func principalMatches(p any, typ, value string) bool {
	if s, ok := p.(string); ok {
		return s == "*"
	}
	m, ok := p.(map[string]any)
	if !ok {
		return false
	}
	vals, err := stringList(m[typ], false)
	if err != nil {
		return false
	}
	for _, v := range vals {
		if v == "*" || v == value {
			return true
		}
	}
	return false
}

func lower(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = strings.ToLower(s)
	}
	return out
}

// WebIdentityToken returns a JWT shaped as a Kubernetes projected
// service-account token (RS256 header, iss, sub, aud, exp, iat) for tests
// of AssumeRoleWithWebIdentity. Its signature is not a real one: the
// emulator does not verify signatures.
func WebIdentityToken(issuer, subject string, audience []string, expires time.Time) string {
	enc := func(v any) string {
		b, _ := json.Marshal(v) // plain maps: cannot fail
		return base64.RawURLEncoding.EncodeToString(b)
	}
	header := enc(map[string]string{"alg": "RS256", "kid": "awsemu"})
	payload := enc(map[string]any{"iss": issuer, "sub": subject, "aud": audience, "exp": expires.Unix(), "iat": time.Now().Unix()})
	return header + "." + payload + "." + base64.RawURLEncoding.EncodeToString([]byte("awsemu-unverified-signature"))
}

// WebIdentityTrustPolicy is the trust policy IAM's "web identity" role
// wizard writes for an OIDC provider: it lets tokens of issuer with
// audience and subject assume the role (AWS's documented IRSA trust
// policy shape), for a role in a test fixture.
func WebIdentityTrustPolicy(account, issuer, audience, subject string) string {
	host := strings.TrimPrefix(issuer, "https://")
	doc := map[string]any{
		"Version": "2012-10-17",
		"Statement": []any{map[string]any{
			"Effect":    "Allow",
			"Principal": map[string]any{"Federated": "arn:aws:iam::" + account + ":oidc-provider/" + host},
			"Action":    webIdentityAction,
			"Condition": map[string]any{"StringEquals": map[string]any{host + ":aud": audience, host + ":sub": subject}},
		}},
	}
	b, _ := json.Marshal(doc) // plain maps: cannot fail
	return string(b)
}
