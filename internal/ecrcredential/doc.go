// Package ecrcredential is the kubelet image credential provider for
// private Amazon ECR registries behind cmd/ecr-credential-provider.
//
// Since Kubernetes 1.27 the kubelet has no built-in ECR support; it runs an
// exec plugin named in its CredentialProviderConfig for images matching
// MatchImages. The plugin reads a credentialprovider.kubelet.k8s.io/v1
// CredentialProviderRequest on stdin (DecodeRequest, strict), parses the
// registry from the image's host in every partition and endpoint form AWS
// documents (ParseImage), calls ecr:GetAuthorizationToken in that region
// with the SDK's standard credential chain (the node's instance role), and
// writes a CredentialProviderResponse keyed by the registry host, cached per
// registry for the token's lifetime less SafetyMargin (EncodeResponse).
//
// Install copies the binary into the kubelet's plugin directory atomically;
// the opt-in DaemonSet `awsccmctl install` renders runs it that way.
package ecrcredential
