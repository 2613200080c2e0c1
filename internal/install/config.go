package install

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/awsccmctl/awsccmctl/internal/yamldocs"
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
	// PodOptions are Values.PodOptions, under upstream's chart's names.
	PodOptions `json:",inline"`
	// Monitoring is Values.Monitoring.
	Monitoring *bool `json:"monitoring,omitempty"`
	// MonitoringLabels is Values.MonitoringLabels.
	MonitoringLabels map[string]string `json:"monitoringLabels,omitempty"`
}

// DecodeConfig decodes an InstallConfiguration file strictly: the file is
// one YAML document, the apiVersion and kind must be ConfigAPIVersion and
// ConfigKind, and unknown or duplicate fields are errors. Field names are
// case-sensitive, as in Kubernetes objects: encoding/json (under
// yaml.UnmarshalStrict) would take "clustername" for clusterName, and the
// later of the two would win. It only decodes; ApplyTo, Values.Default and
// Values.Validate come next.
func DecodeConfig(data []byte) (*Configuration, error) {
	doc, err := oneDocument(data)
	if err != nil {
		return nil, err
	}
	// YAMLToJSONStrict refuses a key given twice.
	j, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return nil, fmt.Errorf("not a YAML object: %w", err)
	}
	var tm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(j, &tm); err != nil {
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
	strict, err := kjson.UnmarshalStrict(j, &c, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ConfigKind, err)
	}
	for _, e := range strict {
		errs = append(errs, fmt.Errorf("%s: %w%s", ConfigKind, e, caseHint(e)))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &c, nil
}

// oneDocument returns the file's only YAML document. A second one would be
// silently ignored (yaml.Unmarshal reads the first), so it is an error;
// documents of only comments and blank lines do not count.
func oneDocument(data []byte) ([]byte, error) {
	doc, err := yamldocs.One(data)
	if multi := (*yamldocs.MultipleError)(nil); errors.As(err, &multi) {
		return nil, fmt.Errorf("the file holds %d YAML documents, and an %s file is one: document 2 and later would be ignored; merge them into one, or remove the --- lines",
			multi.Documents, ConfigKind)
	}
	return doc, err
}

// unknownField is how sigs.k8s.io/json names an unknown field.
var unknownField = regexp.MustCompile(`^unknown field "(?:.*\.)?([^".]+)"$`)

// caseHint says which field an unknown field differs from only in case.
func caseHint(e error) string {
	m := unknownField.FindStringSubmatch(e.Error())
	if m == nil {
		return ""
	}
	t := reflect.TypeOf(Configuration{})
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != m[1] && strings.EqualFold(name, m[1]) {
			return fmt.Sprintf(" (field names are case-sensitive: %s)", name)
		}
	}
	return ""
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
	if c.Monitoring != nil {
		v.Monitoring = *c.Monitoring
	}
	if c.MonitoringLabels != nil {
		v.MonitoringLabels = c.MonitoringLabels
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
	c.applyTo(&v.PodOptions)
	return nil
}
