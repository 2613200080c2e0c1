// Package ecrcredential is the kubelet image credential provider for
// Amazon ECR behind cmd/ecr-credential-provider.
//
// Since Kubernetes 1.27 the kubelet has no built-in ECR support; it runs an
// exec plugin named in its CredentialProviderConfig for images matching
// MatchImages. The plugin reads a credentialprovider.kubelet.k8s.io/v1
// CredentialProviderRequest on stdin (DecodeRequest, strict), parses the
// registry from the image's host (ParseImage): a private registry in every
// partition and endpoint form AWS documents, or ECR Public
// (public.ecr.aws, ecr-public.aws.com). It calls ecr:GetAuthorizationToken
// in the registry's region, or ECR Public's in us-east-1, and writes a
// CredentialProviderResponse keyed by the registry host, cached per
// registry for half the token's remaining lifetime as upstream's provider
// does (EncodeResponse, CacheDuration).
//
// AWS credentials are the SDK's standard chain (the node's instance role),
// except when the kubelet passes the Pod's service-account token
// (KEP-4412): then the role the service account's RoleARNAnnotation (or
// RoleARNEnv) names is assumed with it, and that role's policy decides
// (upstream's contract, provider.go).
//
// Install copies the binary into the kubelet's plugin directory atomically;
// the opt-in DaemonSet `awsccmctl install` renders runs it that way.
// KubeletConfig renders the kubelet's CredentialProviderConfig, with the
// tokenAttributes stanza when asked (TokenOptions).
package ecrcredential
