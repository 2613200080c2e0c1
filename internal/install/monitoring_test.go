package install

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/awsccmctl/awsccmctl/internal/fielderr"
)

const (
	metricsDoc = "../../docs/reference/metrics.md"
	alertsDoc  = "../../docs/reference/alerts.md"
)

// TestAlertsDocIsCurrent: docs/reference/alerts.md (go run ./hack/gen-docs)
// holds AlertsMarkdown, so the page and the PrometheusRule cannot drift
// apart between two runs of make verify.
func TestAlertsDocIsCurrent(t *testing.T) {
	doc, err := os.ReadFile(alertsDoc)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), AlertsMarkdown()) {
		t.Errorf("%s does not hold internal/install.Alerts: run go run ./hack/gen-docs", alertsDoc)
	}
}

// TestAlertsUseDocumentedMetrics: every metric an alert reads is one the
// metrics page documents, and every runbook names an existing page.
func TestAlertsUseDocumentedMetrics(t *testing.T) {
	doc, err := os.ReadFile(metricsDoc)
	if err != nil {
		t.Fatal(err)
	}
	metric := regexp.MustCompile(`\b(aws_ccm_[a-z_]+|workqueue_[a-z_]+|rest_client_[a-z_]+)\b`)
	names := map[string]bool{}
	for _, a := range Alerts() {
		if names[a.Name] || !strings.HasPrefix(a.Name, "AWSCCM") {
			t.Errorf("alert %s: duplicate, or not named AWSCCM...", a.Name)
		}
		names[a.Name] = true
		used := metric.FindAllString(a.Expr, -1)
		if len(used) == 0 {
			t.Errorf("alert %s reads no metric of the CCM: %s", a.Name, a.Expr)
		}
		for _, m := range used {
			if !strings.Contains(string(doc), "`"+m+"`") && !strings.Contains(string(doc), m+"{") && !strings.HasPrefix(m, "workqueue_") {
				t.Errorf("alert %s reads %s, which %s does not document", a.Name, m, metricsDoc)
			}
		}
		page, _, _ := strings.Cut(a.Runbook, "#")
		if _, err := os.Stat(filepath.Join("..", "..", page)); err != nil {
			t.Errorf("alert %s: runbook %s: %v", a.Name, a.Runbook, err)
		}
		if a.Severity != "critical" && a.Severity != "warning" {
			t.Errorf("alert %s: severity %q", a.Name, a.Severity)
		}
	}
}

// TestMonitoringBindAddress: monitoring moves the secure port's default to
// every address, and refuses a loopback one given explicitly, naming both
// settings.
func TestMonitoringBindAddress(t *testing.T) {
	v := Values{Image: testImage, Monitoring: true}
	v.Default()
	if v.BindAddress != MonitoringBindAddress {
		t.Errorf("monitoring: bindAddress defaults to %q, want %q", v.BindAddress, MonitoringBindAddress)
	}
	plain := Values{Image: testImage}
	plain.Default()
	if plain.BindAddress != DefaultBindAddress {
		t.Errorf("without monitoring: bindAddress defaults to %q, want %q", plain.BindAddress, DefaultBindAddress)
	}
	for _, addr := range []string{"127.0.0.1", "::1", "127.0.0.2"} {
		v := Values{Image: testImage, Monitoring: true, BindAddress: addr}
		v.Default()
		err := v.Validate()
		var fe *fielderr.Error
		if err == nil || !errors.As(err, &fe) || fe.Field != "bindAddress" || !strings.Contains(err.Error(), "monitoring") {
			t.Errorf("monitoring with bindAddress %s: %v, want a bindAddress error naming monitoring", addr, err)
		}
	}
	ok := Values{Image: testImage, Monitoring: true, BindAddress: "10.0.1.10"}
	ok.Default()
	if err := ok.Validate(); err != nil {
		t.Errorf("monitoring on a node address: %v", err)
	}
}

// TestMonitoringLabels: the labels a Prometheus selects by reach the
// ServiceMonitor and the PrometheusRule, and only them; labels that are
// not labels, the installer's own, or without monitoring are refused,
// naming monitoringLabels.
func TestMonitoringLabels(t *testing.T) {
	labels := map[string]string{"release": "kube-prometheus-stack", "example.com/team": "platform"}
	for _, o := range renderCase(t, Values{Image: testImage, Monitoring: true, MonitoringLabels: labels}) {
		var m struct {
			Metadata struct{ Labels map[string]string } `json:"metadata"`
		}
		if err := yaml.Unmarshal(o.YAML, &m); err != nil {
			t.Fatal(err)
		}
		got := m.Metadata.Labels
		selected := o.Kind == "ServiceMonitor" || o.Kind == "PrometheusRule"
		for k, v := range labels {
			if val, ok := got[k]; selected != (ok && val == v) {
				t.Errorf("%s %s: label %s=%q (set: %t); want it on the ServiceMonitor and PrometheusRule only", o.Kind, o.Name, k, val, ok)
			}
		}
		if selected && got[LabelManagedBy] != ManagedBy {
			t.Errorf("%s: the installer's labels are gone: %v", o.Kind, got)
		}
	}
	for name, tc := range map[string]struct {
		v    Values
		want string
	}{
		"without monitoring": {Values{Image: testImage, MonitoringLabels: map[string]string{"release": "x"}}, "turn monitoring on, or drop them"},
		"a bad key":          {Values{Image: testImage, Monitoring: true, MonitoringLabels: map[string]string{"not a key": "x"}}, `key "not a key"`},
		"a bad value":        {Values{Image: testImage, Monitoring: true, MonitoringLabels: map[string]string{"release": "a b"}}, `"release" value "a b"`},
		"the installer's":    {Values{Image: testImage, Monitoring: true, MonitoringLabels: map[string]string{LabelManagedBy: "me"}}, "set by the installer"},
	} {
		t.Run(name, func(t *testing.T) {
			tc.v.Default()
			err := tc.v.Validate()
			var fe *fielderr.Error
			if !errors.As(err, &fe) || fe.Field != "monitoringLabels" || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v, want a monitoringLabels error saying %q", err, tc.want)
			}
		})
	}
}
