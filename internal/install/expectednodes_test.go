package install

import (
	"math"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/internal/install/sizing"
)

func TestExpectedNodesForCount(t *testing.T) {
	for _, tc := range []struct{ counted, want int }{
		{0, DefaultExpectedNodes}, {1, DefaultExpectedNodes}, {999, DefaultExpectedNodes}, {1000, 1000},
		{1001, 2000}, {2000, 2000}, {2001, 5000}, {4321, 5000}, {5001, 10000}, {12345, 20000},
		{math.MaxInt, math.MaxInt},
	} {
		if got := ExpectedNodesForCount(tc.counted); got != tc.want {
			t.Errorf("ExpectedNodesForCount(%d) = %d, want %d", tc.counted, got, tc.want)
		}
	}
}

// workloadOf renders v and returns the CCM's workload metadata and its
// container's arguments, decoded strictly.
func workloadOf(t *testing.T, v Values) (metav1.ObjectMeta, []string) {
	t.Helper()
	for _, obj := range decodeStrict(t, renderCase(t, v)) {
		switch o := obj.(type) {
		case *appsv1.DaemonSet:
			return o.ObjectMeta, o.Spec.Template.Spec.Containers[0].Args
		case *appsv1.Deployment:
			return o.ObjectMeta, o.Spec.Template.Spec.Containers[0].Args
		}
	}
	t.Fatal("no workload rendered")
	return metav1.ObjectMeta{}, nil
}

// argValues returns the rendered --name=value arguments by name, failing on
// a flag rendered twice.
func argValues(t *testing.T, args []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, a := range args {
		name, value, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if _, dup := out[name]; dup {
			t.Errorf("--%s rendered twice: %q", name, args)
		}
		out[name] = value
	}
	return out
}

// TestSizingIsRendered: the workload says what size it is sized for, and its
// arguments are sizing.ForNodes of that size, for both workloads.
func TestSizingIsRendered(t *testing.T) {
	for _, tc := range []struct {
		name  string
		v     Values
		nodes int
	}{
		{"default size", Values{Image: testImage}, DefaultExpectedNodes},
		{"small", Values{Image: testImage, ExpectedNodes: ptr(100)}, 100},
		{"large deployment", Values{Image: testImage, ExpectedNodes: ptr(5000), Workload: WorkloadDeployment}, 5000},
		{"one", Values{Image: testImage, ExpectedNodes: ptr(1)}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			meta, args := workloadOf(t, tc.v)
			if got := meta.Annotations[AnnotationSizedForNodes]; got != strconv.Itoa(tc.nodes) {
				t.Errorf("%s = %q, want %d", AnnotationSizedForNodes, got, tc.nodes)
			}
			got := argValues(t, args)
			for name, want := range sizing.ForNodes(tc.nodes).Values() {
				if got[name] != want {
					t.Errorf("--%s = %q, want %q (sized for %d)", name, got[name], want, tc.nodes)
				}
			}
		})
	}
}

// TestUserSizingFlagWins: a sizing flag in ExtraArgs is rendered once, with
// the user's value; the other sizing flags keep their computed values.
func TestUserSizingFlagWins(t *testing.T) {
	sized := sizing.ForNodes(5000).Values()
	for _, name := range sizing.FlagNames() {
		t.Run(name, func(t *testing.T) {
			v := Values{Image: testImage, ExpectedNodes: ptr(5000), ExtraArgs: map[string]string{name: "7"}}
			_, args := workloadOf(t, v)
			got := argValues(t, args)
			for _, other := range sizing.FlagNames() {
				want := sized[other]
				if other == name {
					want = "7"
				}
				if got[other] != want {
					t.Errorf("--%s = %q, want %q", other, got[other], want)
				}
			}
		})
	}
}
