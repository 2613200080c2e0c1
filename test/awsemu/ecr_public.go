package awsemu

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"time"
)

// ECR Public (JSON 1.1, target prefix SpencerFrontendService, signing name
// ecr-public): GetAuthorizationToken, what a kubelet credential provider
// calls for public.ecr.aws images. AWS serves it in us-east-1 (a request
// signed for another region gets UnsupportedCommandException); an
// authenticated pull gets the higher rate limit of an AWS account. The
// answer is one authorizationData (not a list, unlike private ECR's): a
// base64 "AWS:<password>" token valid for ECRTokenLifetime. IAM requires
// two permissions for it ("Amazon ECR Public: registry authentication",
// the managed policy AmazonElasticContainerRegistryPublicReadOnly):
// ecr-public:GetAuthorizationToken and sts:GetServiceBearerToken, the
// latter with sts:AWSServiceName = ecr-public.amazonaws.com
// (enforce_actions.go).

// ecrPublicServiceName is sts:AWSServiceName of ECR Public's bearer token.
const ecrPublicServiceName = "ecr-public.amazonaws.com"

func ecrPublicService(c *common) *service {
	s := &ecrState{c}
	return &service{
		name: "ecr-public", signingName: "ecr-public", protocol: protoJSON11,
		targetPrefix: "SpencerFrontendService",
		// Tokens are served in us-east-1 only (other regions answer
		// UnsupportedCommandException, as AWS documents for the action).
		regions: []string{"us-east-1"},
		jsonActions: map[string]jsonHandler{
			"GetAuthorizationToken": s.getPublicAuthorizationToken,
		},
	}
}

func (s *ecrState) getPublicAuthorizationToken(body []byte) (any, *apiError) {
	var in struct{}
	if err := strictJSON(body, &in); err != nil {
		return nil, newAPIError(http.StatusBadRequest, "SerializationException", "%v", err)
	}
	password := fmt.Sprintf("awsemu-ecr-public-password-%d", s.seq.Add(1))
	var out struct {
		AuthorizationData struct {
			AuthorizationToken string  `json:"authorizationToken"`
			ExpiresAt          float64 `json:"expiresAt"`
		} `json:"authorizationData"`
	}
	out.AuthorizationData.AuthorizationToken = base64.StdEncoding.EncodeToString([]byte(ECRTokenUser + ":" + password))
	out.AuthorizationData.ExpiresAt = float64(time.Now().Add(ECRTokenLifetime).Truncate(time.Second).Unix())
	return out, nil
}
