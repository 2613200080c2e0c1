package install

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

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
