package leadermigration

import (
	"strings"
	"testing"
)

func TestHealthzChecks(t *testing.T) {
	body := "[+]ping ok\n[+]log ok\n[+]leaderElection ok\n[+]cloud-node-controller ok\n[-]service-lb-controller failed: reason withheld\nhealthz check failed\n"
	got := strings.Join(HealthzChecks(body), ",")
	if got != "ping,log,leaderElection,cloud-node-controller" {
		t.Errorf("healthzChecks = %s", got)
	}
}
