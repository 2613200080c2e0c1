package gather

import (
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// TestClientConfig: preflight's cluster client gets its own rate limit and
// protobuf unless the kubeconfig's config sets them, and the caller's
// config is left alone.
func TestClientConfig(t *testing.T) {
	const protobuf = "application/vnd.kubernetes.protobuf"
	cases := []struct {
		name                     string
		qps                      float32
		burst                    int
		accept                   string
		wantQPS                  float32
		wantBurst                int
		contentType, acceptTypes string
	}{
		{"defaults", 0, 0, "", kubeQPS, kubeBurst, protobuf, protobuf + ",application/json"},
		{"QPS given", 7, 9, "", 7, 9, protobuf, protobuf + ",application/json"},
		{"no limit given", -1, 0, "", -1, 0, protobuf, protobuf + ",application/json"},
		{"content types given", 0, 0, "application/json", kubeQPS, kubeBurst, "", "application/json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := &rest.Config{Host: "https://127.0.0.1:6443", QPS: tc.qps, Burst: tc.burst, ContentConfig: rest.ContentConfig{AcceptContentTypes: tc.accept}}
			got := clientConfig(in)
			if got.QPS != tc.wantQPS || got.Burst != tc.wantBurst {
				t.Errorf("QPS %v burst %d, want %v and %d", got.QPS, got.Burst, tc.wantQPS, tc.wantBurst)
			}
			if got.ContentType != tc.contentType || got.AcceptContentTypes != tc.acceptTypes {
				t.Errorf("content type %q accept %q, want %q and %q", got.ContentType, got.AcceptContentTypes, tc.contentType, tc.acceptTypes)
			}
			if got.Host != in.Host {
				t.Errorf("host %q, want %q", got.Host, in.Host)
			}
			if in.QPS != tc.qps || in.Burst != tc.burst || in.ContentType != "" || in.AcceptContentTypes != tc.accept {
				t.Errorf("the caller's config changed: QPS %v burst %d content %q accept %q", in.QPS, in.Burst, in.ContentType, in.AcceptContentTypes)
			}
		})
	}
	limiter := flowcontrol.NewTokenBucketRateLimiter(1, 1)
	if got := clientConfig(&rest.Config{RateLimiter: limiter}); got.RateLimiter != limiter || got.QPS != 0 {
		t.Errorf("a given RateLimiter was replaced or joined by QPS %v", got.QPS)
	}
}
