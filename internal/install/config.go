package install

import (
	"errors"
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/awsccmctl/awsccmctl/pkg/cloudconfig"
)

// The InstallConfiguration file's type. The group and version are a contract
// with users' files: a new incompatible shape gets a new version.
const (
	ConfigAPIVersion = "awsccmctl.io/v1alpha1"
	ConfigKind       = "InstallConfiguration"
)

// Configuration is the versioned file (kind InstallConfiguration) `awsccmctl install --config`
// reads. Every field is optional; an unset field keeps the value below it in
// the precedence (defaults), and flags and AWSCCMCTL_* variables override
// it. Field meanings are those of Values.
type Configuration struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`

	Namespace   string `json:"namespace,omitempty"`
	Image       string `json:"image,omitempty"`
	ClusterName string `json:"clusterName,omitempty"`
	// Region sets [Global] Region of the cloud config (Values.Region).
	Region string `json:"region,omitempty"`
	// CloudConfig is the INI cloud-config file's text, read as the CCM
	// reads it (strictly: unknown keys are errors).
	CloudConfig          string            `json:"cloudConfig,omitempty"`
	Workload             Workload          `json:"workload,omitempty"`
	Replicas             *int32            `json:"replicas,omitempty"`
	ConfigureCloudRoutes *bool             `json:"configureCloudRoutes,omitempty"`
	AllocateNodeCIDRs    *bool             `json:"allocateNodeCIDRs,omitempty"`
	ClusterCIDR          string            `json:"clusterCIDR,omitempty"`
	Controllers          []string          `json:"controllers,omitempty"`
	LeaderElect          *bool             `json:"leaderElect,omitempty"`
	Verbosity            *int              `json:"verbosity,omitempty"`
	CPURequest           string            `json:"cpuRequest,omitempty"`
	MemoryRequest        string            `json:"memoryRequest,omitempty"`
	BindAddress          string            `json:"bindAddress,omitempty"`
	ExtraArgs            map[string]string `json:"extraArgs,omitempty"`
	// ExpectedNodes is Values.ExpectedNodes: the Node count the CCM is
	// sized for (docs/install-sizing.md).
	ExpectedNodes *int `json:"expectedNodes,omitempty"`
	// ECRCredentialProvider and ECRCredentialProviderBinDir are
	// Values.ECRCredentialProvider and Values.ECRCredentialProviderBinDir.
	ECRCredentialProvider       *bool  `json:"ecrCredentialProvider,omitempty"`
	ECRCredentialProviderBinDir string `json:"ecrCredentialProviderBinDir,omitempty"`
}

// DecodeConfig decodes an InstallConfiguration file strictly: the
// apiVersion and kind must be ConfigAPIVersion and ConfigKind, and unknown or
// duplicate fields are errors. It only decodes; ApplyTo, Values.Default and
// Values.Validate come next.
func DecodeConfig(data []byte) (*Configuration, error) {
	var tm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(data, &tm); err != nil {
		return nil, fmt.Errorf("not a YAML object: %w", err)
	}
	var errs []error
	if tm.APIVersion != ConfigAPIVersion {
		errs = append(errs, fmt.Errorf("apiVersion %q: want %s", tm.APIVersion, ConfigAPIVersion))
	}
	if tm.Kind != ConfigKind {
		errs = append(errs, fmt.Errorf("kind %q: want %s", tm.Kind, ConfigKind))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	var c Configuration
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", ConfigKind, err)
	}
	return &c, nil
}

// ApplyTo copies every field set in c onto v. The cloud config text is
// parsed (strictly, as the CCM does); it is defaulted and validated with the
// rest of v by Values.Validate.
func (c *Configuration) ApplyTo(v *Values) error {
	setString := func(dst *string, src string) {
		if src != "" {
			*dst = src
		}
	}
	setString(&v.Namespace, c.Namespace)
	setString(&v.Image, c.Image)
	setString(&v.ClusterName, c.ClusterName)
	setString((*string)(&v.Workload), string(c.Workload))
	setString(&v.ClusterCIDR, c.ClusterCIDR)
	setString(&v.CPURequest, c.CPURequest)
	setString(&v.MemoryRequest, c.MemoryRequest)
	setString(&v.BindAddress, c.BindAddress)
	setString(&v.ECRCredentialProviderBinDir, c.ECRCredentialProviderBinDir)
	if c.ECRCredentialProvider != nil {
		v.ECRCredentialProvider = *c.ECRCredentialProvider
	}
	if c.CloudConfig != "" {
		cc, err := cloudconfig.Parse([]byte(c.CloudConfig))
		if err != nil {
			// Every problem, the validation's of the values that did
			// parse included, not only the decoding's.
			return fmt.Errorf("cloudConfig: %w", cloudconfig.Check([]byte(c.CloudConfig)))
		}
		v.CloudConfig = cc
	}
	setString(&v.Region, c.Region)
	if c.Replicas != nil {
		v.Replicas = c.Replicas
	}
	if c.ConfigureCloudRoutes != nil {
		v.ConfigureCloudRoutes = *c.ConfigureCloudRoutes
	}
	if c.AllocateNodeCIDRs != nil {
		v.AllocateNodeCIDRs = *c.AllocateNodeCIDRs
	}
	if c.Controllers != nil {
		v.Controllers = c.Controllers
	}
	if c.LeaderElect != nil {
		v.LeaderElect = c.LeaderElect
	}
	if c.Verbosity != nil {
		v.Verbosity = c.Verbosity
	}
	if c.ExtraArgs != nil {
		v.ExtraArgs = c.ExtraArgs
	}
	if c.ExpectedNodes != nil {
		n := *c.ExpectedNodes
		v.ExpectedNodes = &n
	}
	return nil
}
