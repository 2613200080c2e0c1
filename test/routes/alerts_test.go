package routes

import (
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

// alertTimeline collects the CCM's metrics for the rendered PrometheusRule,
// one gather per step of a compressed timeline (as test/rbac's alert test
// does): Prometheus' rule engine (rule-check) then says which alerts fired.
type alertTimeline struct {
	rules   string
	start   time.Time
	scrapes []testbed.RuleScrape
}

// alertStep is the time between two gathers on the evaluation timeline.
const alertStep = 30 * time.Second

func newAlertTimeline(t *testing.T) *alertTimeline {
	t.Helper()
	testbed.Tool(t, testbed.RuleCheckBinary)
	v := install.Values{Monitoring: true}
	v.Default()
	objs, err := install.RenderObjects(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.Kind == "PrometheusRule" {
			var pr map[string]any
			if err := yaml.Unmarshal(o.YAML, &pr); err != nil {
				t.Fatal(err)
			}
			return &alertTimeline{rules: testbed.WriteRulesFile(t, pr), start: time.Now().Add(-time.Hour)}
		}
	}
	t.Fatal("no PrometheusRule rendered with monitoring")
	return nil
}

// scrape gathers the CCM's metrics at the timeline's next step.
func (a *alertTimeline) scrape(t *testing.T) {
	t.Helper()
	mfs, err := env.gather.Gather()
	if err != nil {
		t.Fatal(err)
	}
	at := a.start.Add(time.Duration(len(a.scrapes)) * alertStep)
	a.scrapes = append(a.scrapes, testbed.NewRuleScrape(at, mfs, map[string]string{"job": install.MetricsServiceName, "instance": "ccm"}))
}

// wantFiring: alert never went pending in the first quiet scrapes, and
// fired over all of them.
func (a *alertTimeline) wantFiring(t *testing.T, alert string, quiet int) {
	t.Helper()
	for _, c := range []struct {
		scrapes []testbed.RuleScrape
		fire    bool
	}{{a.scrapes[:quiet], false}, {a.scrapes, true}} {
		r := testbed.EvaluateRules(t, a.rules, alertStep, c.scrapes)
		found := false
		for _, got := range r.Alerts {
			if got.Name != alert {
				continue
			}
			found = true
			switch {
			case got.Error != "":
				t.Errorf("%s: evaluation error %s", alert, got.Error)
			case c.fire && got.FirstFiringMs == 0:
				t.Errorf("%s never fired over %d scrapes (last state %s)", alert, len(c.scrapes), got.FinalState)
			case !c.fire && got.FirstPendingMs != 0:
				t.Errorf("%s went pending before its condition was made", alert)
			}
		}
		if !found {
			t.Fatalf("rule-check did not evaluate %s", alert)
		}
	}
}
