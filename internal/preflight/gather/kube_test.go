package gather

import (
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// TestClientConfig: preflight's cluster client gets its own rate limit
// unless the kubeconfig's config sets one, the rest of the config is kept,
// and the caller's config is left alone.
func TestClientConfig(t *testing.T) {
	cases := []struct {
		name                string
		qps                 float32
		burst               int
		wantQPS             float32
		wantBurst           int
		contentType, accept string
	}{
		{"defaults", 0, 0, kubeQPS, kubeBurst, "", ""},
		{"QPS given", 7, 9, 7, 9, "", ""},
		{"no limit given", -1, 0, -1, 0, "", ""},
		{"content types kept", 0, 0, kubeQPS, kubeBurst, "application/json", "application/json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := &rest.Config{Host: "https://127.0.0.1:6443", QPS: tc.qps, Burst: tc.burst,
				ContentConfig: rest.ContentConfig{ContentType: tc.contentType, AcceptContentTypes: tc.accept}}
			got := clientConfig(in)
			if got.QPS != tc.wantQPS || got.Burst != tc.wantBurst {
				t.Errorf("QPS %v burst %d, want %v and %d", got.QPS, got.Burst, tc.wantQPS, tc.wantBurst)
			}
			if got.Host != in.Host || got.ContentType != tc.contentType || got.AcceptContentTypes != tc.accept {
				t.Errorf("host %q content type %q accept %q, want %q, %q and %q", got.Host, got.ContentType, got.AcceptContentTypes, in.Host, tc.contentType, tc.accept)
			}
			if in.QPS != tc.qps || in.Burst != tc.burst {
				t.Errorf("the caller's config changed: QPS %v burst %d", in.QPS, in.Burst)
			}
		})
	}
	limiter := flowcontrol.NewTokenBucketRateLimiter(1, 1)
	if got := clientConfig(&rest.Config{RateLimiter: limiter}); got.RateLimiter != limiter || got.QPS != 0 {
		t.Errorf("a given RateLimiter was replaced or joined by QPS %v", got.QPS)
	}
}
