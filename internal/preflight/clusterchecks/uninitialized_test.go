package clusterchecks

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

// TestUninitializedGrace: after install a Node that joined less than
// UninitializedGrace ago is being initialised, not stuck; before install
// every tainted Node counts.
func TestUninitializedGrace(t *testing.T) {
	cs := quietClient(testbed.Get(t).Config)
	now := time.Now()
	fresh, stale := now.Add(-UninitializedGrace+20*time.Second), now.Add(-UninitializedGrace-20*time.Second)
	cases := []struct {
		name   string
		mode   preflight.Mode
		added  []time.Time
		status preflight.Status
		text   string
	}{
		{"post-install, joining", preflight.ModePostInstall, []time.Time{fresh}, preflight.StatusPass,
			"no Node has waited longer than 2m for the CCM (1 Node); 1 Node joined in the last 2m and is being initialised"},
		{"post-install, stuck and joining", preflight.ModePostInstall, []time.Time{fresh, stale}, preflight.StatusFail,
			"still on 1 of 2 Nodes, oldest first: un-1 (for 2m20s); 1 Node joined in the last 2m and is being initialised"},
		{"pre-install, joining counts", preflight.ModePreInstall, []time.Time{fresh}, preflight.StatusWarn,
			"still on 1 of 1 Node, oldest first: un-0 (for 100s)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSeed(t, cs)
			for i, added := range tc.added {
				s.node(nodeSpec{name: "un-" + string(rune('0'+i)), kubelet: v137, providerID: "aws:///us-east-1a/i-0aaaaaaaaaaaaaaa1", uninitialized: &added})
			}
			checks := Checks(Input{Client: cs, Mode: tc.mode, Now: func() time.Time { return now }})
			rep, err := preflight.Run(context.Background(), checks, preflight.Options{Mode: tc.mode})
			if err != nil {
				t.Fatal(err)
			}
			f := finding(rep, IDNodesUninitialized)
			if f.Status != tc.status || !strings.Contains(f.Message, tc.text) {
				t.Errorf("got %s: %s\nwant %s containing %q", f.Status, f.Message, tc.status, tc.text)
			}
		})
	}
}
