package install

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Names of the objects Values.Monitoring adds. Like the other names, an
// upgrade applies over them: they MUST NOT change.
const (
	// MetricsServiceName is the headless Service in front of the CCM's
	// secure port, the ServiceMonitor and the PrometheusRule's name. The
	// ServiceMonitor's scrapes get job="<this name>", which the alerts on
	// client-go's generic metrics select on.
	MetricsServiceName = AppName
	// MetricsPortName names the Service's port and the ServiceMonitor's
	// endpoint.
	MetricsPortName = "https-metrics"
	// MetricsReaderName names the ClusterRole allowed to GET /metrics, the
	// ServiceAccount bound to it and their ClusterRoleBinding: Prometheus
	// scrapes with that ServiceAccount's token (MetricsTokenSecretName).
	MetricsReaderName = "aws-cloud-controller-manager-metrics-reader"
	// MetricsTokenSecretName is the service-account-token Secret of
	// MetricsReaderName that the ServiceMonitor's authorization names.
	MetricsTokenSecretName = MetricsReaderName + "-token"
	// MonitoringAPIGroup serves ServiceMonitor and PrometheusRule; it
	// exists once prometheus-operator's CRDs are installed.
	MonitoringAPIGroup = "monitoring.coreos.com"
	// AlertRuleGroup names the PrometheusRule's one rule group.
	AlertRuleGroup = "aws-cloud-controller-manager"
	// docsBaseURL is where runbook_url annotations point.
	docsBaseURL = "https://github.com/awsccmctl/awsccmctl/blob/main/"
)

// Alert is one alerting rule of the PrometheusRule. Alerts is the one list:
// the PrometheusRule, docs/reference/alerts.md (hack/gen-docs) and the
// tests that evaluate the rules all come from it.
type Alert struct {
	// Name is the alert name (the rule's alert:).
	Name string
	// Expr is the PromQL expression; the alert is pending while it returns
	// a series and firing once it has for For.
	Expr string
	// For is how long the condition must hold, a Prometheus duration.
	For string
	// Severity is the severity label: critical pages, warning tickets.
	Severity string
	// Summary and Description are the annotations of the same names.
	Summary, Description string
	// Runbook is the docs page and anchor, relative to the repository,
	// that says what to check (runbook_url).
	Runbook string
}

// Alerts returns the alerting rules `install --monitoring` renders, in
// order. Each one's condition is the one docs/reference/metrics.md explains
// under its Runbook anchor.
func Alerts() []Alert {
	return []Alert{
		{
			Name: "AWSCCMNodeDeletionBreakerTripped",
			Expr: `max(aws_ccm_node_deletion_breaker_tripped) == 1`,
			// A real mass absence (a cloud config naming another region,
			// VPC or account) does not clear by itself.
			For:         "5m",
			Severity:    "critical",
			Summary:     "The CCM withholds Node deletions: too many instances are missing at once.",
			Description: "The instances of more Nodes than --aws-max-absent-node-deletions are missing from EC2 while every call succeeds; the CCM deletes none of their Nodes. Check the cloud config's region and VPC and the credentials' account; see the AWSNodeDeletionWithheld events.",
			Runbook:     "docs/reference/metrics.md#node-deletion-breaker",
		},
		{
			Name: "AWSCCMAPIThrottled",
			// The SDK retries throttled calls, so a few are harmless; a
			// tenth of every attempt for a quarter of an hour slows every
			// controller and eats the account's budget other tools share.
			Expr: `sum by (service) (rate(aws_ccm_api_throttles_total[5m]))` +
				` / sum by (service) (rate(aws_ccm_api_requests_total[5m])) > 0.1`,
			For:         "15m",
			Severity:    "warning",
			Summary:     "AWS throttles {{ $labels.service }} calls of the CCM.",
			Description: "More than 10% of the CCM's {{ $labels.service }} attempts were throttled for 15 minutes ({{ $value | humanizePercentage }} now). Check aws_ccm_api_throttles_total by operation, other clients of the account's API budget, and the CCM's sizing flags.",
			Runbook:     "docs/reference/metrics.md#aws-api",
		},
		{
			Name: "AWSCCMLoadBalancerSyncFailing",
			// The service controller requeues a Service whose load
			// balancer failed to sync, with backoff up to 5 minutes: its
			// queue's retries keep growing while any sync fails.
			Expr:        `sum(rate(workqueue_retries_total{job="` + MetricsServiceName + `",name="service"}[15m])) > 0`,
			For:         "15m",
			Severity:    "warning",
			Summary:     "The CCM keeps failing to sync a load balancer.",
			Description: "The service controller has retried a Service's load balancer for 15 minutes. See the SyncLoadBalancerFailed events of type LoadBalancer Services (kubectl get events -A --field-selector reason=SyncLoadBalancerFailed).",
			Runbook:     "docs/load-balancers.md",
		},
		{
			Name:        "AWSCCMRouteLimitExceeded",
			Expr:        `sum(increase(aws_ccm_route_node_warnings_total{reason="AWSRouteLimitExceeded"}[15m])) > 0`,
			For:         "0s",
			Severity:    "warning",
			Summary:     "The route table is full: new Nodes get no pod route.",
			Description: "The route controller could not add a Node's pod route because the route table holds as many routes as VPC allows. Pods on those Nodes are unreachable from other Nodes; see the AWSRouteLimitExceeded events, raise the quota or move to a CNI that needs no VPC routes.",
			Runbook:     "docs/routes.md",
		},
		{
			Name:        "AWSCCMRouteTableProblem",
			Expr:        `max by (problem) (aws_ccm_route_table_problem) == 1`,
			For:         "10m",
			Severity:    "warning",
			Summary:     "The route controller has no one route table to manage ({{ $labels.problem }}).",
			Description: "No route is created or deleted while the problem holds. See the AWSRouteTableProblem events on the Nodes.",
			Runbook:     "docs/reference/metrics.md#routes",
		},
		{
			Name:        "AWSCCMInstanceTaggingDenied",
			Expr:        `sum by (outcome) (rate(aws_ccm_tagging_nodes_total{outcome=~"tag_limit_exceeded|unauthorized"}[15m])) > 0`,
			For:         "15m",
			Severity:    "warning",
			Summary:     "The tagging controller cannot tag some Nodes' instances ({{ $labels.outcome }}).",
			Description: "IAM or an SCP denies the tagging, or the instance has no room for more tags. See the InstanceTaggingFailed events on the Nodes.",
			Runbook:     "docs/reference/metrics.md#tagging-controller",
		},
		{
			Name:        "AWSCCMTaggingCallsFailing",
			Expr:        `sum(rate(aws_ccm_tagging_nodes_total{outcome="failed"}[15m])) > 0`,
			For:         "30m",
			Severity:    "warning",
			Summary:     "The tagging controller's EC2 calls keep failing.",
			Description: "Whole tagging batches fail (throttling, EC2 errors) and are retried with backoff; new Nodes wait for their tags.",
			Runbook:     "docs/reference/metrics.md#tagging-controller",
		},
		{
			Name:        "AWSCCMInstanceTopologyDenied",
			Expr:        `sum(increase(aws_ccm_instance_topology_denied_total{required="true"}[1h])) > 0`,
			For:         "0s",
			Severity:    "warning",
			Summary:     "Nodes join without their network topology labels.",
			Description: "IAM denies ec2:DescribeInstanceTopology for instance types that have a topology; grant it. See the AWSInstanceTopologyDenied events.",
			Runbook:     "docs/cloud-config.md#instance-topology-labels",
		},
	}
}

// alertRules is the PrometheusRule's rules list as plain maps, for the
// template (and a Helm chart fed the same field names).
func alertRules() []map[string]any {
	var out []map[string]any
	for _, a := range Alerts() {
		out = append(out, map[string]any{
			"alert":  a.Name,
			"expr":   a.Expr,
			"for":    a.For,
			"labels": map[string]string{"severity": a.Severity},
			"annotations": map[string]string{
				"summary":     a.Summary,
				"description": a.Description,
				"runbook_url": docsBaseURL + a.Runbook,
			},
		})
	}
	return out
}

// AlertsMarkdown is docs/reference/alerts.md's table of the alerts
// (hack/gen-docs writes the page; a test keeps it in step).
func AlertsMarkdown() string {
	var b strings.Builder
	b.WriteString("| alert | severity | for | expression | what to do |\n|---|---|---|---|---|\n")
	for _, a := range Alerts() {
		fmt.Fprintf(&b, "| `%s` | %s | %s | `%s` | %s [runbook](%s) |\n",
			a.Name, a.Severity, a.For, strings.ReplaceAll(a.Expr, "|", `\|`),
			strings.ReplaceAll(a.Description, "|", `\|`), docsLink(a.Runbook))
	}
	return b.String()
}

// docsLink makes a runbook path relative to docs/reference/, where the
// alerts page is.
func docsLink(runbook string) string {
	p := strings.TrimPrefix(runbook, "docs/")
	if rest, ok := strings.CutPrefix(p, "reference/"); ok {
		return rest
	}
	return "../" + p
}

// validateMonitoringLabels checks MonitoringLabels: label keys and values,
// none of the installer's own (uninstall selects on them), and only with
// Monitoring, which renders what they label.
func (v *Values) validateMonitoringLabels(add func(field, format string, args ...any)) {
	if len(v.MonitoringLabels) > 0 && !v.Monitoring {
		add("monitoringLabels", ": they label the ServiceMonitor and PrometheusRule that monitoring (--monitoring) renders; turn monitoring on, or drop them")
	}
	for _, k := range slices.Sorted(maps.Keys(v.MonitoringLabels)) {
		val := v.MonitoringLabels[k]
		for _, msg := range validation.IsQualifiedName(k) {
			add("monitoringLabels", " key %q: %s", k, msg)
		}
		for _, msg := range validation.IsValidLabelValue(val) {
			add("monitoringLabels", " %q value %q: %s", k, val, msg)
		}
		if _, ok := Labels()[k]; ok {
			add("monitoringLabels", " %q: set by the installer (uninstall selects on it); remove it", k)
		}
	}
}
