// Tools module: promop-crds (cmd/promop-crds) prints prometheus-operator's
// ServiceMonitor and PrometheusRule CustomResourceDefinitions, embedded in
// the operator's main module (example/crds.go), for the tests that validate
// the objects `install --monitoring` renders against them on the test bed.
// Kept apart from the product's go.mod: the operator's main module requires
// Prometheus itself and controller-runtime.
module github.com/awsccmctl/awsccmctl/hack/tools/promop

go 1.26.8

require (
	github.com/prometheus-operator/prometheus-operator v0.94.1
	sigs.k8s.io/yaml v1.6.0
)

require go.yaml.in/yaml/v2 v2.4.4 // indirect
