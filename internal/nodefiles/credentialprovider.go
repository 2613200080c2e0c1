package nodefiles

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// This file reads the kubelet's image credential providers the way the
// kubelet does at start (k8s.io/kubernetes pkg/credentialprovider/plugin:
// RegisterCredentialProviderPlugins, readCredentialProviderConfig, decode,
// validateCredentialProviderConfig) and matches images against their
// matchImages (pkg/credentialprovider: URLsMatchStr). Any problem found here
// makes the kubelet exit at start ("Failed to register CRI auth plugins").

// The kubelet flags that configure image credential providers; the kubelet
// registers providers when either is set.
const (
	FlagCredentialProviderConfig = "image-credential-provider-config"
	FlagCredentialProviderBinDir = "image-credential-provider-bin-dir"
)

// CredentialProviderConfig API: the group and kind the kubelet decodes, and
// the versions it knows. Wire values; they MUST NOT change.
const (
	credentialProviderKind  = "CredentialProviderConfig"
	credentialProviderGroup = "kubelet.config.k8s.io"
	// credentialProviderV1 is the only config version with tokenAttributes.
	credentialProviderV1 = credentialProviderGroup + "/v1"
	// providerAPIV1 is the only exec API version tokenAttributes work with.
	providerAPIV1 = "credentialprovider.kubelet.k8s.io/v1"
)

// CredentialProviderConfigVersions are the apiVersions the kubelet decodes.
var CredentialProviderConfigVersions = []string{credentialProviderV1, credentialProviderGroup + "/v1beta1", credentialProviderGroup + "/v1alpha1"}

// CredentialProviderAPIVersions are the exec plugin API versions a provider
// may ask for (its apiVersion field).
var CredentialProviderAPIVersions = []string{providerAPIV1, "credentialprovider.kubelet.k8s.io/v1beta1", "credentialprovider.kubelet.k8s.io/v1alpha1"}

// CredentialProviderConfig is a kubelet CredentialProviderConfig file.
type CredentialProviderConfig struct {
	APIVersion string               `json:"apiVersion"`
	Kind       string               `json:"kind"`
	Providers  []CredentialProvider `json:"providers"`
}

// CredentialProvider is one exec plugin of a CredentialProviderConfig. It
// has every field of the kubelet's type, so strict decoding rejects only
// what the kubelet rejects.
type CredentialProvider struct {
	// Name is the plugin's executable in the kubelet's
	// --image-credential-provider-bin-dir.
	Name string `json:"name"`
	// MatchImages are the image patterns the plugin serves (MatchImage).
	MatchImages          []string                       `json:"matchImages"`
	DefaultCacheDuration *metav1.Duration               `json:"defaultCacheDuration"`
	APIVersion           string                         `json:"apiVersion"`
	Args                 []string                       `json:"args,omitempty"`
	Env                  []ExecEnvVar                   `json:"env,omitempty"`
	TokenAttributes      *ServiceAccountTokenAttributes `json:"tokenAttributes,omitempty"`
}

// ExecEnvVar is an environment variable given to a plugin.
type ExecEnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// ServiceAccountTokenAttributes makes the kubelet pass the Pod's service
// account token to the plugin (kubelet.config.k8s.io/v1 only).
type ServiceAccountTokenAttributes struct {
	ServiceAccountTokenAudience          string   `json:"serviceAccountTokenAudience"`
	CacheType                            string   `json:"cacheType"`
	RequireServiceAccount                *bool    `json:"requireServiceAccount"`
	RequiredServiceAccountAnnotationKeys []string `json:"requiredServiceAccountAnnotationKeys,omitempty"`
	OptionalServiceAccountAnnotationKeys []string `json:"optionalServiceAccountAnnotationKeys,omitempty"`
}

// DecodeCredentialProviderConfig decodes one configuration file strictly, as
// the kubelet does: YAML or JSON, no duplicate or unknown fields (field names
// are case-sensitive), a known apiVersion and kind CredentialProviderConfig.
// It does not validate the providers (ValidateCredentialProviders).
func DecodeCredentialProviderConfig(data []byte) (*CredentialProviderConfig, error) {
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, fmt.Errorf("not valid YAML: %w", err)
	}
	var tm metav1.TypeMeta
	if err := kjson.UnmarshalCaseSensitivePreserveInts(j, &tm); err != nil {
		return nil, fmt.Errorf("not a %s: %w", credentialProviderKind, err)
	}
	if tm.Kind != credentialProviderKind || !slices.Contains(CredentialProviderConfigVersions, tm.APIVersion) {
		return nil, fmt.Errorf("apiVersion %q kind %q, want %s %s", tm.APIVersion, tm.Kind, strings.Join(CredentialProviderConfigVersions, ", "), credentialProviderKind)
	}
	var cfg CredentialProviderConfig
	strict, err := kjson.UnmarshalStrict(j, &cfg, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		return nil, fmt.Errorf("not a %s: %w", credentialProviderKind, err)
	}
	if len(strict) > 0 {
		return nil, fmt.Errorf("strict decoding: %w", errors.Join(strict...))
	}
	if cfg.APIVersion != credentialProviderV1 {
		for i, p := range cfg.Providers {
			if p.TokenAttributes != nil {
				return nil, fmt.Errorf("strict decoding: unknown field \"providers[%d].tokenAttributes\" (only in %s)", i, credentialProviderV1)
			}
		}
	}
	return &cfg, nil
}

// ValidateCredentialProviders checks the providers of every configuration
// file together, as the kubelet does before registering them, and returns
// every problem (with the KubeletServiceAccountTokenForCredentialProviders
// feature on, its default since 1.34).
func ValidateCredentialProviders(providers []CredentialProvider) []string {
	var out []string
	bad := func(i int, field, format string, a ...any) {
		out = append(out, fmt.Sprintf("providers[%d].%s: %s", i, field, fmt.Sprintf(format, a...)))
	}
	if len(providers) == 0 {
		out = append(out, "providers: at least one provider is required")
	}
	seen := map[string]bool{}
	for i, p := range providers {
		switch {
		case p.Name == "":
			bad(i, "name", "required")
		case strings.ContainsAny(p.Name, "/ "), p.Name == ".", p.Name == "..":
			bad(i, "name", "%q: must not contain '/' or spaces, nor be '.' or '..'", p.Name)
		case seen[p.Name]:
			bad(i, "name", "%q: duplicate provider name", p.Name)
		}
		seen[p.Name] = true
		if !slices.Contains(CredentialProviderAPIVersions, p.APIVersion) {
			bad(i, "apiVersion", "%q: want one of %s", p.APIVersion, strings.Join(CredentialProviderAPIVersions, ", "))
		}
		if len(p.MatchImages) == 0 {
			bad(i, "matchImages", "at least one image pattern is required")
		}
		for _, m := range p.MatchImages {
			if _, err := parseSchemeless(m); err != nil {
				bad(i, "matchImages", "%q: %v", m, err)
			}
		}
		switch {
		case p.DefaultCacheDuration == nil:
			bad(i, "defaultCacheDuration", "required")
		case p.DefaultCacheDuration.Duration < 0:
			bad(i, "defaultCacheDuration", "%s: must not be negative", p.DefaultCacheDuration.Duration)
		}
		if ta := p.TokenAttributes; ta != nil {
			if ta.ServiceAccountTokenAudience == "" {
				bad(i, "tokenAttributes.serviceAccountTokenAudience", "required")
			}
			if ta.RequireServiceAccount == nil {
				bad(i, "tokenAttributes.requireServiceAccount", "required")
			}
			if p.APIVersion != providerAPIV1 {
				bad(i, "tokenAttributes", "only supported with apiVersion %s", providerAPIV1)
			}
			if ta.CacheType != "ServiceAccount" && ta.CacheType != "Token" {
				bad(i, "tokenAttributes.cacheType", "%q: want ServiceAccount or Token", ta.CacheType)
			}
			if ta.RequireServiceAccount != nil && !*ta.RequireServiceAccount && len(ta.RequiredServiceAccountAnnotationKeys) > 0 {
				bad(i, "tokenAttributes.requiredServiceAccountAnnotationKeys", "requireServiceAccount cannot be false when requiredServiceAccountAnnotationKeys is set")
			}
			keys := map[string]string{}
			for _, l := range []struct {
				field string
				keys  []string
			}{{"requiredServiceAccountAnnotationKeys", ta.RequiredServiceAccountAnnotationKeys}, {"optionalServiceAccountAnnotationKeys", ta.OptionalServiceAccountAnnotationKeys}} {
				field := l.field
				for _, k := range l.keys {
					for _, msg := range validation.IsQualifiedName(strings.ToLower(k)) {
						bad(i, "tokenAttributes."+field, "%q: %s", k, msg)
					}
					if prev, dup := keys[k]; dup {
						bad(i, "tokenAttributes."+field, "%q: also in %s", k, prev)
					}
					keys[k] = field
				}
			}
		}
	}
	return out
}

// MatchImage reports whether image matches the matchImages pattern as the
// kubelet matches them: both are read as URLs without a scheme; the hosts
// must have the same number of dot-separated labels and each pattern label
// must glob-match (path.Match) the image's, so "*" stands for one whole
// label or part of one, never for several ("*.io" does not match
// "k8s.gcr.io"); the ports must be equal; the pattern's path must be a prefix
// of the image's. An invalid pattern is an error, as in the kubelet.
func MatchImage(pattern, image string) (bool, error) {
	p, err := parseSchemeless(pattern)
	if err != nil {
		return false, err
	}
	img, err := parseSchemeless(image)
	if err != nil {
		return false, err
	}
	pLabels, pPort := splitHost(p)
	iLabels, iPort := splitHost(img)
	if pPort != iPort || len(pLabels) != len(iLabels) || !strings.HasPrefix(img.Path, p.Path) {
		return false, nil
	}
	for i, l := range pLabels {
		ok, err := path.Match(l, iLabels[i])
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// parseSchemeless parses a URL that has no scheme, as the kubelet does.
func parseSchemeless(s string) (*url.URL, error) {
	u, err := url.Parse("https://" + s)
	if err != nil {
		return nil, err
	}
	u.Scheme = ""
	return u, nil
}

// splitHost splits a URL's host into its labels and port.
func splitHost(u *url.URL) ([]string, string) {
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		host, port = u.Host, ""
	}
	return strings.Split(host, "."), port
}

// CredentialProviders is the kubelet's image credential provider setup.
type CredentialProviders struct {
	// ConfigPath and BinDir are the kubelet's
	// --image-credential-provider-config and
	// --image-credential-provider-bin-dir; "" when not given.
	ConfigPath, BinDir string
	// Files lists the configuration files decoded, as node paths: the file,
	// or the *.json, *.yaml and *.yml files of the directory ConfigPath
	// names, in the kubelet's (lexicographic) order.
	Files []string
	// Providers are the providers of every file, in order.
	Providers []CredentialProvider
	// Executables maps the name of each provider whose executable was found
	// to its node path.
	Executables map[string]string
	// Problems lists, each as "path: reason", what makes the kubelet exit at
	// start. They are never silently ignored.
	Problems []string
}

// Configured reports whether the kubelet registers credential providers:
// when either flag is given.
func (c *CredentialProviders) Configured() bool { return c.ConfigPath != "" || c.BinDir != "" }

// Matching returns the providers with a matchImages pattern that matches
// image, in order.
func (c *CredentialProviders) Matching(image string) []CredentialProvider {
	var out []CredentialProvider
	for _, p := range c.Providers {
		if slices.ContainsFunc(p.MatchImages, func(m string) bool { ok, _ := MatchImage(m, image); return ok }) {
			out = append(out, p)
		}
	}
	return out
}

// CredentialProviders reads the kubelet's image credential provider setup
// under the node's root: the configuration file or directory, and each
// provider's executable. It returns an empty setup when the node has no
// kubelet or the kubelet has neither flag.
func (n *Node) CredentialProviders() *CredentialProviders {
	c := &CredentialProviders{Executables: map[string]string{}}
	if n.Kubelet == nil {
		return c
	}
	c.ConfigPath, _ = n.Kubelet.Flags.Get(FlagCredentialProviderConfig)
	c.BinDir, _ = n.Kubelet.Flags.Get(FlagCredentialProviderBinDir)
	if !c.Configured() {
		return c
	}
	r := fsRoot{dir: n.Root}
	problem := func(p, format string, a ...any) {
		c.Problems = append(c.Problems, p+": "+fmt.Sprintf(format, a...))
	}
	binDirOK := false
	if c.BinDir == "" {
		problem("--"+FlagCredentialProviderBinDir, "not set, but --%s is", FlagCredentialProviderConfig)
	} else if _, err := r.stat(c.BinDir); err != nil {
		problem(c.BinDir, "plugin binary directory (--%s): %v", FlagCredentialProviderBinDir, notExist(err))
	} else {
		binDirOK = true
	}
	if c.ConfigPath == "" {
		problem("--"+FlagCredentialProviderConfig, "not set, but --%s is", FlagCredentialProviderBinDir)
		return c
	}
	if !c.readConfig(r, problem) {
		return c
	}
	for _, v := range ValidateCredentialProviders(c.Providers) {
		problem(c.ConfigPath, "%s", v)
	}
	if !binDirOK {
		return c
	}
	for _, p := range c.Providers {
		if p.Name == "" || strings.ContainsAny(p.Name, "/ ") || p.Name == "." || p.Name == ".." {
			continue // reported by validation
		}
		exe := path.Join(c.BinDir, p.Name)
		switch fi, err := r.stat(exe); {
		case err != nil:
			problem(exe, "executable of provider %s: %v", p.Name, notExist(err))
		case fi.IsDir():
			problem(exe, "executable of provider %s is a directory", p.Name)
		case fi.Mode()&0o111 == 0:
			problem(exe, "executable of provider %s is not executable (mode %s): `chmod +x %s`", p.Name, fi.Mode(), exe)
		default:
			c.Executables[p.Name] = exe
		}
	}
	return c
}

// readConfig decodes the configuration file, or every *.json, *.yaml and
// *.yml file of the directory, and merges their providers. It reports
// whether all of them decoded.
func (c *CredentialProviders) readConfig(r fsRoot, problem func(p, format string, a ...any)) bool {
	fi, err := r.stat(c.ConfigPath)
	if err != nil {
		problem(c.ConfigPath, "credential provider configuration (--%s): %v", FlagCredentialProviderConfig, notExist(err))
		return false
	}
	files := []string{c.ConfigPath}
	if fi.IsDir() {
		names, err := r.readDir(c.ConfigPath)
		if err != nil {
			problem(c.ConfigPath, "%v", err)
			return false
		}
		files = nil
		for _, name := range names {
			if ext := path.Ext(name); ext == ".json" || ext == ".yaml" || ext == ".yml" {
				files = append(files, path.Join(c.ConfigPath, name))
			}
		}
		if len(files) == 0 {
			problem(c.ConfigPath, "no *.json, *.yaml or *.yml configuration file in the directory")
			return false
		}
	}
	ok := true
	for _, f := range files {
		data, err := r.readFile(f)
		if err != nil {
			problem(f, "%v", err)
			ok = false
			continue
		}
		cfg, err := DecodeCredentialProviderConfig(data)
		if err != nil {
			problem(f, "%v", err)
			ok = false
			continue
		}
		c.Files = append(c.Files, f)
		c.Providers = append(c.Providers, cfg.Providers...)
	}
	return ok
}

// notExist words a missing file the way the kubelet's error does.
func notExist(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return errors.New("does not exist")
	}
	return err
}

// stat returns what p resolves to under the root, following links.
func (r fsRoot) stat(p string) (fs.FileInfo, error) {
	h, err := r.resolve(p)
	if err != nil {
		return nil, err
	}
	return os.Stat(h)
}
