package awsemu

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"time"
)

// ECR (JSON 1.1, target prefix AmazonEC2ContainerRegistry_V20150921):
// GetAuthorizationToken, what a kubelet credential provider calls. The
// token is base64 "AWS:<password>" as ECR's, valid for ECRTokenLifetime;
// nothing checks it afterwards (the emulator serves no registry).

// ECRTokenLifetime is how long the emulator's ECR tokens are valid: 12
// hours, as AWS documents for GetAuthorizationToken.
const ECRTokenLifetime = 12 * time.Hour

// ECRTokenUser is the user name ECR tokens carry.
const ECRTokenUser = "AWS"

// ecrState is ECR: tokens come from the shared ID sequence, so it has no
// state of its own.
type ecrState struct{ *common }

func ecrService(c *common) *service {
	s := &ecrState{c}
	return &service{
		name: "ecr", signingName: "ecr", protocol: protoJSON11,
		targetPrefix: "AmazonEC2ContainerRegistry_V20150921",
		jsonActions: map[string]jsonHandler{
			"GetAuthorizationToken": s.getAuthorizationToken,
		},
	}
}

type ecrAuthorizationData struct {
	AuthorizationToken string  `json:"authorizationToken"`
	ExpiresAt          float64 `json:"expiresAt"` // epoch seconds, the JSON protocols' timestamp format
	ProxyEndpoint      string  `json:"proxyEndpoint"`
}

var ecrRegistryID = regexp.MustCompile(`^[0-9]{12}$`)

func (s *ecrState) getAuthorizationToken(body []byte) (any, *apiError) {
	var in struct {
		RegistryIDs []string `json:"registryIds"`
	}
	if err := strictJSON(body, &in); err != nil {
		return nil, newAPIError(http.StatusBadRequest, "SerializationException", "%v", err)
	}
	ids := in.RegistryIDs
	if len(ids) == 0 {
		ids = []string{s.account}
	}
	if len(ids) > 10 {
		return nil, newAPIError(http.StatusBadRequest, "InvalidParameterException", "registryIds: at most 10 registry IDs, got %d", len(ids))
	}
	var out struct {
		AuthorizationData []ecrAuthorizationData `json:"authorizationData"`
	}
	expires := time.Now().Add(ECRTokenLifetime).Truncate(time.Second)
	for _, id := range ids {
		if !ecrRegistryID.MatchString(id) {
			return nil, newAPIError(http.StatusBadRequest, "InvalidParameterException",
				"Invalid parameter at 'registryIds' failed to satisfy constraint: 'must satisfy regular expression '[0-9]{12}''")
		}
		password := fmt.Sprintf("awsemu-ecr-password-%d", s.seq.Add(1))
		out.AuthorizationData = append(out.AuthorizationData, ecrAuthorizationData{
			AuthorizationToken: base64.StdEncoding.EncodeToString([]byte(ECRTokenUser + ":" + password)),
			ExpiresAt:          float64(expires.Unix()),
			ProxyEndpoint:      "https://" + id + ".dkr.ecr." + s.region + "." + ecrDomain(s.region),
		})
	}
	return out, nil
}

// ecrDomain is the registry domain of region's partition (the emulator
// models the aws and aws-cn partitions).
func ecrDomain(region string) string {
	if awsPartition(region) == "aws-cn" {
		return "amazonaws.com.cn"
	}
	return "amazonaws.com"
}

// strictJSON decodes one JSON object into v, refusing unknown fields.
func strictJSON(body []byte, v any) error {
	if len(body) == 0 {
		body = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("the request body is not the operation's JSON input: %w", err)
	}
	return nil
}
