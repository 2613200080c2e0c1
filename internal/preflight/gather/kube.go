package gather

import "k8s.io/client-go/rest"

// The cluster client's client-side rate limit. client-go's default (5
// requests a second, bursts of 10) is sized for controllers that run for
// ever beside many others. Under it a cluster-mode run over 5,000 Nodes (34
// requests: 10 Node pages, 16 nodes/proxy probes of the kubelets, one read
// of each other kind) took 5.5 s, mostly waiting for tokens (client-go logs
// "client-side throttling"); with this limit, 1.4 s.
//
// preflight is one short, read-only run whose concurrency its own code
// bounds: one list at a time per kind, at most 16 nodes/proxy reads in
// flight (clusterchecks' configz concurrency). The burst lets a whole run
// through unthrottled while the kubelets cannot be reached from the API
// server (a few dozen requests plus one page per 500 Nodes and Pods); when
// every kubelet answers, reading /configz of 5,000 Nodes is held to
// kubeQPS, about 50 s. The API server's Priority and Fairness still queues
// these requests with the other clients of the same user (users it exempts,
// such as system:masters, excepted).
const (
	kubeQPS   = 100
	kubeBurst = 300
)

// clientConfig is cfg for preflight's cluster client with its rate limit
// (kubeQPS, kubeBurst), unless cfg sets one. The caller's cfg is not
// changed. Content types are left as they are: client-go's typed requests
// already ask for protobuf first for the built-in kinds
// (rest.Request.UseProtobufAsDefault), Node lists included.
func clientConfig(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS == 0 && cfg.RateLimiter == nil {
		cfg.QPS, cfg.Burst = kubeQPS, kubeBurst
	}
	return cfg
}
