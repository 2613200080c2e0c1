package kubeadmconfig

import (
	"errors"
	"path"

	"github.com/awsccmctl/awsccmctl/internal/ecrcredential"
	"github.com/awsccmctl/awsccmctl/internal/fielderr"
)

// Kubelet flags of the image credential provider (KEP-2133).
const (
	argCredentialProviderConfig = "image-credential-provider-config"
	argCredentialProviderBinDir = "image-credential-provider-bin-dir"
)

// CredentialProvider says where a node keeps the kubelet's
// CredentialProviderConfig (ecrcredential.KubeletConfigYAML) and the
// ecr-credential-provider binary; Render passes both to the kubelet in
// Init- and JoinConfiguration's kubeletExtraArgs. The kubelet refuses to
// start when the file or the binary is missing, so both must be on the node
// before kubeadm init or join starts it.
type CredentialProvider struct {
	// ConfigPath is --image-credential-provider-config (default
	// ecrcredential.DefaultConfigPath).
	ConfigPath string
	// BinDir is --image-credential-provider-bin-dir (default
	// ecrcredential.DefaultBinDir).
	BinDir string
}

// validate checks both are absolute, clean paths (the kubelet resolves
// them on the node, not where awsccmctl runs). Each problem is a
// *fielderr.Error of its path's field.
func (c *CredentialProvider) validate() []error {
	var errs []error
	for _, p := range []struct{ field, value, example string }{
		{FieldCredentialProviderConfig, c.ConfigPath, ecrcredential.DefaultConfigPath},
		{FieldCredentialProviderBinDir, c.BinDir, ecrcredential.DefaultBinDir},
	} {
		if p.value == "" || !path.IsAbs(p.value) || path.Clean(p.value) != p.value {
			errs = append(errs, fielderr.Errorf(p.field, " %q: want an absolute, clean path on the node, e.g. %s", p.value, p.example))
		}
	}
	return errs
}

// kubeletArgs are the kubelet's flags in Init- and JoinConfiguration.
func (o Options) kubeletArgs() []arg {
	a := []arg{{argCloudProvider, external}}
	if o.ProviderID != "" {
		a = append(a, arg{argProviderID, o.ProviderID})
	}
	if c := o.CredentialProvider; c != nil {
		a = append(a, arg{argCredentialProviderConfig, c.ConfigPath}, arg{argCredentialProviderBinDir, c.BinDir})
	}
	return a
}

// ValidateNode checks what Options say about a node without the version
// (Merge takes the version from the file): the provider ID and the
// credential provider paths.
func (o Options) ValidateNode() error {
	var errs []error
	if err := ValidateProviderID(o.ProviderID); err != nil {
		errs = append(errs, err)
	}
	if o.CredentialProvider != nil {
		errs = append(errs, o.CredentialProvider.validate()...)
	}
	return errors.Join(errs...)
}
