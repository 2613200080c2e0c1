package ecrcredential

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	credv1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1"
)

// TestDecodeRequest: the kubelet's v1 request decodes with every field it
// may send.
func TestDecodeRequest(t *testing.T) {
	req, err := DecodeRequest([]byte(`{"apiVersion":"credentialprovider.kubelet.k8s.io/v1","kind":"CredentialProviderRequest",` +
		`"image":"123456789012.dkr.ecr.us-west-2.amazonaws.com/app:v1","serviceAccountToken":"t","serviceAccountAnnotations":{"a":"b"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if req.Image != "123456789012.dkr.ecr.us-west-2.amazonaws.com/app:v1" || req.ServiceAccountAnnotations["a"] != "b" {
		t.Errorf("decoded %+v", req)
	}
}

// TestDecodeRequestIsStrict: other versions and kinds, unknown and
// duplicate fields, an empty image and non-JSON are refused with the reason.
func TestDecodeRequestIsStrict(t *testing.T) {
	const v1 = `"apiVersion":"credentialprovider.kubelet.k8s.io/v1","kind":"CredentialProviderRequest"`
	for _, c := range []struct{ name, in, want string }{
		{"v1beta1", `{"apiVersion":"credentialprovider.kubelet.k8s.io/v1beta1","kind":"CredentialProviderRequest","image":"x/y"}`,
			`apiVersion "credentialprovider.kubelet.k8s.io/v1beta1" kind "CredentialProviderRequest": this plugin reads only apiVersion credentialprovider.kubelet.k8s.io/v1 kind CredentialProviderRequest; set apiVersion: credentialprovider.kubelet.k8s.io/v1`},
		{"v1alpha1", `{"apiVersion":"credentialprovider.kubelet.k8s.io/v1alpha1","kind":"CredentialProviderRequest","image":"x/y"}`, "this plugin reads only apiVersion"},
		{"other kind", `{"apiVersion":"credentialprovider.kubelet.k8s.io/v1","kind":"CredentialProviderResponse","cacheKeyType":"Registry"}`, `kind "CredentialProviderResponse"`},
		{"no apiVersion", `{"image":"x/y"}`, `apiVersion "" kind ""`},
		{"unknown field", `{` + v1 + `,"image":"x/y","registry":"x"}`, `unknown field "registry"`},
		{"duplicate field", `{` + v1 + `,"image":"x/y","image":"x/z"}`, `duplicate field "image"`},
		{"empty image", `{` + v1 + `}`, "the image is empty"},
		{"not JSON", `image: x/y`, "not a JSON CredentialProviderRequest"},
		{"empty", ``, "not a JSON CredentialProviderRequest"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeRequest([]byte(c.in))
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "request on stdin: ") {
				t.Errorf("got %v\nwant an error with %q", err, c.want)
			}
		})
	}
}

// TestEncodeResponse writes apiVersion and kind and the v1 field names.
func TestEncodeResponse(t *testing.T) {
	out, err := EncodeResponse(&credv1.CredentialProviderResponse{
		CacheKeyType: credv1.RegistryPluginCacheKeyType, CacheDuration: &metav1.Duration{Duration: 90 * time.Minute},
		Auth: map[string]credv1.AuthConfig{"h": {Username: "AWS", Password: "p"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"kind":"CredentialProviderResponse","apiVersion":"credentialprovider.kubelet.k8s.io/v1","cacheKeyType":"Registry","cacheDuration":"1h30m0s","auth":{"h":{"username":"AWS","password":"p"}}}`
	if strings.TrimSpace(string(out)) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
}
