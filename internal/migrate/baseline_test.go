package migrate

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

// syntheticBaseline is the baseline of a cluster of n Nodes named and
// identified as EC2 names them, with random instance IDs and digests (which
// compress the least), lbs load balancers and a few Nodes not Ready.
func syntheticBaseline(n, lbs int) *Baseline {
	r := rand.New(rand.NewPCG(1, 2)) //nolint:gosec // repeatable test data, not a secret
	b := &Baseline{ProviderIDs: map[string]string{}, Hostnames: map[string]string{}, NodeFields: map[string]string{}}
	for i := range n {
		name := fmt.Sprintf("ip-10-%d-%d-%d.us-west-2.compute.internal", i>>16, (i>>8)&255, i&255)
		b.ProviderIDs[name] = fmt.Sprintf("aws:///us-west-2%c/i-%017x", 'a'+rune(i%3), r.Uint64()>>4)
		b.NodeFields[name] = fmt.Sprintf("%016x%08x", r.Uint64(), r.Uint32())
		if i%997 == 0 {
			b.NotReady = append(b.NotReady, name)
		}
	}
	for i := range lbs {
		b.Hostnames[fmt.Sprintf("team-%d/web-%d", i%40, i)] = fmt.Sprintf("a%032x-%d.us-west-2.elb.amazonaws.com", r.Uint64(), r.Uint32())
	}
	return b
}

// The baseline of a cluster far past 5,000 Nodes is stored by the real
// apiserver (which refuses a ConfigMap over 1 MiB) and read back whole, and
// the journal that points to it stays as small as at ten Nodes: the
// journal's baseline overflowed its ConfigMap past about 7,000 Nodes.
func TestBaselineFitsAnyClusterSize(t *testing.T) {
	client, err := kubernetes.NewForConfig(testbed.Get(t).Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, n := range []int{5_000, 30_000} {
		want := syntheticBaseline(n, n/10)
		ref, err := writeBaseline(ctx, client, want)
		if err != nil {
			t.Fatalf("%d Nodes: %v", n, err)
		}
		t.Cleanup(func() {
			for i := range ref.Pieces {
				_ = client.CoreV1().ConfigMaps(Namespace).Delete(ctx, baselinePieceName(i), metav1.DeleteOptions{})
			}
		})
		got, err := readBaseline(ctx, client, ref)
		if err != nil {
			t.Fatalf("%d Nodes: %v", n, err)
		}
		if !equality.Semantic.DeepEqual(got, want) {
			t.Errorf("%d Nodes: the baseline read back differs from the one written", n)
		}
		if ref.Nodes != n || ref.LoadBalancers != n/10 {
			t.Errorf("%d Nodes: ref counts %d Nodes, %d load balancers", n, ref.Nodes, ref.LoadBalancers)
		}
		inline, _ := json.MarshalIndent(want, "", "  ")
		j, _ := json.MarshalIndent(&Journal{Plan: "p", BaselineRef: ref}, "", "  ")
		if len(j) > 512 {
			t.Errorf("%d Nodes: the journal's reference takes %d bytes, want it independent of the cluster's size", n, len(j))
		}
		t.Logf("%d Nodes, %d load balancers: %d bytes gzipped in %d pieces; in the journal it was %d bytes", n, n/10, ref.Bytes, ref.Pieces, len(inline))
		if n == 30_000 && ref.Pieces < 2 {
			t.Errorf("30,000 Nodes fit one piece: the test no longer crosses a piece's size (%d bytes)", baselinePieceBytes)
		}
	}
}

// A piece changed or gone is refused, naming what is wrong, not read as a
// baseline the guards would then misjudge the cluster by.
func TestBaselineRefusesAChangedOrMissingPiece(t *testing.T) {
	defer func(n int) { baselinePieceBytes = n }(baselinePieceBytes)
	baselinePieceBytes = 1 << 10
	ctx := context.Background()
	cs := fake.NewClientset()
	ref, err := writeBaseline(ctx, cs, syntheticBaseline(200, 20))
	if err != nil {
		t.Fatal(err)
	}
	if ref.Pieces < 3 {
		t.Fatalf("%d pieces of 1 KiB: want several", ref.Pieces)
	}
	if _, err := readBaseline(ctx, cs, ref); err != nil {
		t.Fatalf("the baseline as written: %v", err)
	}
	cm, err := cs.CoreV1().ConfigMaps(Namespace).Get(ctx, baselinePieceName(1), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.BinaryData[baselineKey][10] ^= 1
	if _, err := cs.CoreV1().ConfigMaps(Namespace).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := readBaseline(ctx, cs, ref); err == nil || !strings.Contains(err.Error(), "it was changed after apply wrote it") {
		t.Errorf("a changed piece: %v, want the digest refusal", err)
	}
	if err := cs.CoreV1().ConfigMaps(Namespace).Delete(ctx, baselinePieceName(2), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := readBaseline(ctx, cs, ref); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("piece 3 of %d (ConfigMap kube-system/%s-2)", ref.Pieces, BaselineName)) {
		t.Errorf("a missing piece: %v, want it named", err)
	}
}

// A run reads the baseline from its ConfigMaps once; a journal begun by a
// version that kept the baseline in the journal is read as it is.
func TestRunReadsTheBaselineOnce(t *testing.T) {
	ctx := context.Background()
	want := syntheticBaseline(50, 5)
	cs := fake.NewClientset()
	ref, err := writeBaseline(ctx, cs, want)
	if err != nil {
		t.Fatal(err)
	}
	cs.ClearActions()
	e := &env{client: cs, journal: &Journal{BaselineRef: ref}}
	for range 3 {
		got, err := e.baseline(ctx)
		if err != nil || !equality.Semantic.DeepEqual(got, want) {
			t.Fatalf("baseline: %v (equal: %t)", err, equality.Semantic.DeepEqual(got, want))
		}
	}
	if n := len(cs.Actions()); n != ref.Pieces {
		t.Errorf("three looks at the baseline made %d requests, want %d (one read of each piece)", n, ref.Pieces)
	}

	legacy := &env{client: fake.NewClientset(), journal: &Journal{Baseline: want}}
	if got, err := legacy.baseline(ctx); err != nil || got != want {
		t.Errorf("a journal holding the baseline: %v, %v", got, err)
	}
	none := &env{client: fake.NewClientset(), journal: &Journal{}}
	if got, err := none.baseline(ctx); err != nil || got != nil {
		t.Errorf("before verify-cluster: %v, %v; want none", got, err)
	}
}
