package ecrcredential

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	kubeletv1 "k8s.io/kubelet/config/v1"
	credv1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1"

	"github.com/awsccmctl/awsccmctl/internal/mdfence"
)

// TestDocExamples: the guide's response decodes strictly as a v1
// CredentialProviderResponse keyed by its registry, and its
// CredentialProviderConfig excerpt decodes strictly and agrees with
// KubeletConfig.
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
	if len(jsons) != 1 {
		t.Fatalf("%d json blocks, want the one response", len(jsons))
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
	yamls := mdfence.Blocks(doc, "yaml")
	if len(yamls) != 1 {
		t.Fatalf("%d yaml blocks, want the CredentialProviderConfig", len(yamls))
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
}
