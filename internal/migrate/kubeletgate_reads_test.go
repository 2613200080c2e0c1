package migrate

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// TestKubeletGateReadsLessOftenOverThousands: over a few hundred nodes the
// gate reads the reports at every poll; over 5,000 once every 5 s, and a
// new run of the step reads at once.
func TestKubeletGateReadsLessOftenOverThousands(t *testing.T) {
	for _, tc := range []struct {
		nodes, polls, wantReads int
	}{
		{300, 10, 10},
		{5000, 10, 2}, // at 0 s and 5 s
	} {
		t.Run(fmt.Sprint(tc.nodes), func(t *testing.T) {
			cs := fake.NewClientset()
			reads := 0
			cs.PrependReactor("get", "configmaps", func(a k8stesting.Action) (bool, runtime.Object, error) {
				if a.(k8stesting.GetAction).GetName() == ReportsName {
					reads++ // every read takes ReportsName and the shards
				}
				return false, nil, nil
			})
			nodes := make([]string, tc.nodes)
			for i := range nodes {
				nodes[i] = fmt.Sprintf("ip-10-0-%d-%d.ec2.internal", i/250, i%250)
			}
			s := &Step{Name: StepKubeletExternal + "/workers", Phase: PhaseKubeletExternal, Nodes: nodes}
			start := time.Date(2026, 11, 28, 6, 0, 0, 0, time.UTC)
			now := start
			e := &env{client: cs, stepStarted: start, now: func() time.Time { return now }}
			for i := range tc.polls {
				now = start.Add(time.Duration(i) * time.Second)
				res, err := e.kubeletsGate(context.Background(), s, PhaseKubeletExternal)
				if err != nil || res.ok || len(res.evidence) == 0 {
					t.Fatalf("poll %d: %+v %v", i, res, err)
				}
			}
			if reads != tc.wantReads {
				t.Errorf("%d polls over %d nodes read the reports %d times, want %d", tc.polls, tc.nodes, reads, tc.wantReads)
			}
			// The step run again (a resume, an undo's redo) reads afresh.
			e.stepStarted = now.Add(time.Second)
			now = e.stepStarted
			if _, err := e.kubeletsGate(context.Background(), s, PhaseKubeletExternal); err != nil {
				t.Fatal(err)
			}
			if reads != tc.wantReads+1 {
				t.Errorf("a new run of the step did not read the reports")
			}
		})
	}
}
