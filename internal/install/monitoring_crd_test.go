package install

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/yaml"

	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

// monitoringObject returns the rendered object of kind from a monitoring
// render.
func monitoringObject(t *testing.T, kind string) Object {
	t.Helper()
	for _, o := range renderCase(t, Values{Image: testImage, Monitoring: true}) {
		if o.Kind == kind {
			return o
		}
	}
	t.Fatalf("no %s rendered with monitoring", kind)
	return Object{}
}

// TestMonitoringObjectsMatchCRDs dry-runs the ServiceMonitor and the
// PrometheusRule against prometheus-operator's own CRDs (its release's
// schemas, hack/tools/promop) on the test bed's kube-apiserver, and shows
// the schemas have teeth: a field the schema forbids is refused.
func TestMonitoringObjectsMatchCRDs(t *testing.T) {
	testbed.InstallPrometheusOperatorCRDs(t, testbed.Get(t).Config)
	a, _ := newDryRunApplier(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, kind := range []string{"ServiceMonitor", "PrometheusRule"} {
		o := monitoringObject(t, kind)
		if err := a.apply(ctx, o.YAML); err != nil {
			t.Errorf("%s: server-side dry run against the CRD: %v", kind, err)
		}
	}
	for _, c := range []struct{ kind, from, to string }{
		{"ServiceMonitor", "scheme: https", "scheme: ftp"},
		{"PrometheusRule", "for: 5m", "for: five minutes"},
	} {
		o := monitoringObject(t, c.kind)
		broken := strings.Replace(string(o.YAML), c.from, c.to, 1)
		if broken == string(o.YAML) {
			t.Fatalf("%s: the test's edit %q did not apply", c.kind, c.from)
		}
		if err := a.apply(ctx, []byte(broken)); !apierrors.IsInvalid(err) {
			t.Errorf("%s with %q: dry run = %v, want Invalid", c.kind, c.to, err)
		}
	}
}

// ruleCheckOutput is rule-check's JSON (hack/tools/prometheus).
type ruleCheckOutput struct {
	Rules  int `json:"rules"`
	Alerts []struct {
		Name       string `json:"name"`
		FinalState string `json:"finalState"`
	} `json:"alerts"`
}

// TestAlertRulesParse parses the rendered PrometheusRule's groups with
// Prometheus' own rule-file parser (rulefmt, which parses every expr with
// the PromQL parser and checks the templates of the annotations), through
// rule-check; a broken expression is refused.
func TestAlertRulesParse(t *testing.T) {
	rules := prometheusRuleSpec(t)
	out, err := testbed.RuleCheck(t, "-rules", writeTemp(t, "rules.yaml", rules))
	if err != nil {
		t.Fatal(err)
	}
	var got ruleCheckOutput
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if got.Rules != len(Alerts()) {
		t.Errorf("rule-check read %d alerting rules, want %d:\n%s", got.Rules, len(Alerts()), out)
	}
	broken := strings.Replace(string(rules), "max(aws_ccm_node_deletion_breaker_tripped) == 1", "max(aws_ccm_node_deletion_breaker_tripped == 1", 1)
	if broken == string(rules) {
		t.Fatal("the test's edit did not apply")
	}
	if _, err := testbed.RuleCheck(t, "-rules", writeTemp(t, "broken.yaml", []byte(broken))); err == nil || !strings.Contains(err.Error(), "parse error") {
		t.Errorf("a broken expression: %v, want a parse error", err)
	}
}

// prometheusRuleSpec is the rendered PrometheusRule's spec: a Prometheus
// rules file (groups:).
func prometheusRuleSpec(t *testing.T) []byte {
	t.Helper()
	var pr struct {
		Spec map[string]any `json:"spec"`
	}
	if err := yaml.Unmarshal(monitoringObject(t, "PrometheusRule").YAML, &pr); err != nil {
		t.Fatal(err)
	}
	b, err := yaml.Marshal(pr.Spec)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
