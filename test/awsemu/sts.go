package awsemu

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"time"
)

// stsService emulates STS (awsQuery, Version 2011-06-15).
type stsService struct{ s *Server }

func (*stsService) name() string        { return "sts" }
func (*stsService) signingName() string { return "sts" }
func (*stsService) apiVersion() string  { return "2011-06-15" }
func (*stsService) protocol() protocol  { return protoAWSQuery }
func (*stsService) xmlns() string       { return "https://sts.amazonaws.com/doc/2011-06-15/" }

type getCallerIdentityResult struct {
	Arn     string `xml:"Arn"`
	UserID  string `xml:"UserId"`
	Account string `xml:"Account"`
}

type assumedRoleUser struct {
	AssumedRoleID string `xml:"AssumedRoleId"`
	Arn           string `xml:"Arn"`
}

type stsCredentials struct {
	AccessKeyID     string `xml:"AccessKeyId"`
	SecretAccessKey string `xml:"SecretAccessKey"`
	SessionToken    string `xml:"SessionToken"`
	Expiration      string `xml:"Expiration"`
}

type assumeRoleResult struct {
	AssumedRoleUser assumedRoleUser `xml:"AssumedRoleUser"`
	Credentials     stsCredentials  `xml:"Credentials"`
}

var roleArnRE = regexp.MustCompile(`^arn:aws[a-z-]*:iam::(\d{12}):role/(?:[\w+=,.@-]+/)*([\w+=,.@-]+)$`)

func (t *stsService) handle(_ context.Context, action string, form url.Values) (any, *apiError) {
	s := t.s
	switch action {
	case "GetCallerIdentity":
		s.mu.RLock()
		defer s.mu.RUnlock()
		return getCallerIdentityResult{Arn: s.callerArn, UserID: s.callerUserID, Account: s.account}, nil
	case "AssumeRole":
		arn, session := form.Get("RoleArn"), form.Get("RoleSessionName")
		if arn == "" {
			return nil, errMissingParameter("RoleArn")
		}
		if session == "" {
			return nil, errMissingParameter("RoleSessionName")
		}
		m := roleArnRE.FindStringSubmatch(arn)
		if m == nil {
			return nil, newAPIError(http.StatusBadRequest, "ValidationError", "%s is invalid", arn)
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
		s.mu.Lock()
		s.idSeq++
		n := s.idSeq
		s.mu.Unlock()
		return assumeRoleResult{
			AssumedRoleUser: assumedRoleUser{
				AssumedRoleID: "AROAEMULATOREXAMPLEID:" + session,
				Arn:           fmt.Sprintf("arn:aws:sts::%s:assumed-role/%s/%s", m[1], m[2], session),
			},
			Credentials: stsCredentials{
				AccessKeyID:     fmt.Sprintf("ASIAEMULATOR%08d", n),
				SecretAccessKey: "awsemu-secret-access-key",
				SessionToken:    fmt.Sprintf("awsemu-session-token-%d", n),
				Expiration:      time.Now().Add(duration).UTC().Format(time.RFC3339),
			},
		}, nil
	}
	return nil, errInvalidAction(action, "sts")
}
