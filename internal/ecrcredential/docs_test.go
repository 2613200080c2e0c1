package ecrcredential

import (
	stdjson "encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	kubeletv1 "k8s.io/kubelet/config/v1"
	credv1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/awsccmctl/awsccmctl/internal/mdfence"
)

// TestDocExamples: the guide's response decodes strictly as a v1
// CredentialProviderResponse keyed by its registry; its
// CredentialProviderConfig excerpt decodes strictly and agrees with
// KubeletConfig; its tokenAttributes excerpt is what KubeletConfigFor
// renders for sts.amazonaws.com; the trust policy is JSON whose audience
// is that one, and the RBAC grants the kubelets that audience.
func TestDocExamples(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "ecr-credential-provider.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	scheme := runtime.NewScheme()
	if err := credv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := kubeletv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	strict := func(yaml bool) *json.Serializer {
		return json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme, json.SerializerOptions{Yaml: yaml, Strict: true})
	}
	jsons := mdfence.Blocks(doc, "json")
	if len(jsons) != 2 {
		t.Fatalf("%d json blocks, want the response and the trust policy", len(jsons))
	}
	obj, _, err := strict(false).Decode([]byte(jsons[0].Text), nil, nil)
	resp, ok := obj.(*credv1.CredentialProviderResponse)
	if err != nil || !ok || resp.CacheKeyType != credv1.RegistryPluginCacheKeyType {
		t.Fatalf("the response example: %v %T", err, obj)
	}
	for host := range resp.Auth {
		if _, err := ParseImage(host + "/x"); err != nil {
			t.Errorf("auth key %s: %v", host, err)
		}
	}
	if d := resp.CacheDuration; d == nil || d.Duration != 6*time.Hour {
		t.Errorf("the response's cacheDuration %v: half of a fresh 12-hour token is 6h0m0s", d)
	}
	var trust map[string]any
	if err := stdjson.Unmarshal([]byte(jsons[1].Text), &trust); err != nil ||
		!strings.Contains(jsons[1].Text, `:aud":"sts.amazonaws.com"`) || !strings.Contains(jsons[1].Text, `"sts:AssumeRoleWithWebIdentity"`) {
		t.Errorf("the trust policy example (%v):\n%s", err, jsons[1].Text)
	}
	yamls := mdfence.Blocks(doc, "yaml")
	if len(yamls) != 3 {
		t.Fatalf("%d yaml blocks, want the CredentialProviderConfig, the RBAC and tokenAttributes", len(yamls))
	}
	obj, _, err = strict(true).Decode([]byte(yamls[0].Text), nil, nil)
	cfg, ok := obj.(*kubeletv1.CredentialProviderConfig)
	if err != nil || !ok || len(cfg.Providers) != 1 {
		t.Fatalf("the config example: %v %T", err, obj)
	}
	got, want := cfg.Providers[0], KubeletConfig().Providers[0]
	if got.Name != want.Name || got.APIVersion != want.APIVersion || *got.DefaultCacheDuration != *want.DefaultCacheDuration ||
		!slices.Equal(got.MatchImages, want.MatchImages[:len(got.MatchImages)]) {
		t.Errorf("the example %+v does not start as KubeletConfig %+v", got, want)
	}
	for _, w := range []string{"request-serviceaccounts-token-audience", `resources: ["sts.amazonaws.com"]`, "name: system:nodes"} {
		if !strings.Contains(yamls[1].Text, w) {
			t.Errorf("the RBAC example lacks %q", w)
		}
	}
	var attrs struct {
		TokenAttributes kubeletv1.ServiceAccountTokenAttributes `json:"tokenAttributes"`
	}
	if err := sigsyaml.UnmarshalStrict([]byte(yamls[2].Text), &attrs); err != nil {
		t.Fatalf("the tokenAttributes example: %v", err)
	}
	rendered, err := KubeletConfigFor(TokenAttributes{Audience: "sts.amazonaws.com"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&attrs.TokenAttributes, rendered.Providers[0].TokenAttributes) {
		t.Errorf("the tokenAttributes example %+v, rendered %+v", attrs.TokenAttributes, *rendered.Providers[0].TokenAttributes)
	}
}
