package kubeadmconfig

// The fields of Options as the validation's problems (*fielderr.Error) name
// them, so a command maps each problem to its flag without reading the
// message.
const (
	FieldProviderID               = "provider ID"
	FieldAPIVersion               = "kubeadm API version"
	FieldKubernetesVersion        = "kubernetes version"
	FieldCredentialProviderConfig = "credential provider config"
	FieldCredentialProviderBinDir = "credential provider bin dir"
)
