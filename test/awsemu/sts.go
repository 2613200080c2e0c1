package awsemu

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"time"
)

// stsState is STS: its answers come from the fixture's fixed caller and the
// shared ID sequence, so it has no state of its own.
type stsState struct{ *common }

// stsService serves STS (awsQuery, Version 2011-06-15).
func stsService(c *common) *service {
	s := &stsState{c}
	return &service{
		name: "sts", signingName: "sts", apiVersion: "2011-06-15",
		protocol: protoAWSQuery, xmlns: "https://sts.amazonaws.com/doc/2011-06-15/",
		actions: actionTable{
			"GetCallerIdentity": s.getCallerIdentity,
			"AssumeRole":        s.assumeRole,
			// Decodes this emulator's EC2 UnauthorizedOperation messages
			// (enforce.go).
			"DecodeAuthorizationMessage": s.decodeAuthorizationMessage,
		},
	}
}

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

func (s *stsState) getCallerIdentity(url.Values) (any, *apiError) {
	return getCallerIdentityResult{Arn: s.callerArn, UserID: s.callerUserID, Account: s.account}, nil
}

func (s *stsState) assumeRole(form url.Values) (any, *apiError) {
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
	n := s.seq.Add(1)
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

func (s *stsState) decodeAuthorizationMessage(form url.Values) (any, *apiError) {
	enc := form.Get("EncodedMessage")
	if enc == "" {
		return nil, errMissingParameter("EncodedMessage")
	}
	doc, ok := decodeAuthMessage(enc)
	if !ok {
		return nil, newAPIError(http.StatusBadRequest, "InvalidAuthorizationMessageException", "The encoded message is not valid.")
	}
	return struct {
		DecodedMessage string `xml:"DecodedMessage"`
	}{doc}, nil
}
