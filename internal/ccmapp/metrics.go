package ccmapp

// client-go's own metrics on /metrics, as upstream's CCM serves them:
// rest_client_requests_total and rest_client_request_duration_seconds
// (the CCM's apiserver traffic, by code and verb), and client-go's
// workqueue, leader-election and FIFO metrics. Without these imports
// client-go records nothing: its metric hooks default to no-ops.
import (
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // registers client-go's metrics with the legacy registry
)
