package migrate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/install/apply"
	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

func TestMain(m *testing.M) { os.Exit(testbed.Main(m, nil)) }

// The journal's guarantees need the real apiserver's optimistic
// concurrency: a fake clientset does not check resourceVersion.
func TestJournalHoldAndConcurrentUpdates(t *testing.T) {
	cp := testbed.Get(t)
	client, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	now := time.Now()
	clock := func() time.Time { return now }
	local := filepath.Join(t.TempDir(), "journal.json")
	a := &Store{Client: client, LocalPath: local, Now: clock}
	b := &Store{Client: client, Now: clock}
	j := &Journal{Plan: "p", PlanDigest: "d", Mode: ModeLeaderMigration, Steps: []StepRecord{{Name: "one", State: StatePending}}}
	if err := a.Create(ctx, j); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.CoreV1().ConfigMaps(Namespace).Delete(ctx, JournalName, metav1.DeleteOptions{}) })

	if _, err := a.Acquire(ctx, Holder{ID: "run-a", Host: "h", PID: 1}, false); err != nil {
		t.Fatal(err)
	}
	_, err = b.Acquire(ctx, Holder{ID: "run-b", Host: "h", PID: 2}, false)
	var held *HeldError
	if !errors.As(err, &held) || held.Holder.ID != "run-a" {
		t.Fatalf("a second run took a held journal: %v", err)
	}
	// A stale holder is replaced; the old run then loses its hold.
	now = now.Add(HolderStaleAfter + time.Second)
	if _, err := b.Acquire(ctx, Holder{ID: "run-b", Host: "h", PID: 2}, false); err != nil {
		t.Fatalf("take over a stale holder: %v", err)
	}
	if err := a.Heartbeat(ctx, "run-a"); !errors.As(err, &held) {
		t.Fatalf("the replaced run's heartbeat: %v", err)
	}

	// 20 concurrent read-modify-writes: none is lost.
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := b.Update(ctx, func(j *Journal) error {
				j.Steps = append(j.Steps, StepRecord{Name: "x", State: StateDone})
				return nil
			}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got, err := a.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Steps) != 21 {
		t.Errorf("%d steps after 20 concurrent appends to 1, want 21: updates were lost", len(got.Steps))
	}
	// The local mirror follows a's writes.
	if _, err := a.Update(ctx, func(j *Journal) error { j.Plan = "p"; return nil }); err != nil {
		t.Fatal(err)
	}
	m, err := ReadLocal(local)
	if err != nil || len(m.Steps) != 21 {
		t.Errorf("local mirror: %v, %d steps", err, len(m.Steps))
	}
	if err := a.Create(ctx, j); err == nil {
		t.Error("a second journal was created over the first")
	}
}

// Nodes report at once without conflicts, each with its own key, using
// nothing but get and patch on the reports ConfigMap.
func TestNodeReportsDoNotConflict(t *testing.T) {
	cp := testbed.Get(t)
	admin, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rbac, err := migrationRBAC(&MigrationPlan{Spec: PlanSpec{Install: install.Configuration{}}})
	if err != nil {
		t.Fatal(err)
	}
	applier, err := apply.NewClient(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := applier.Apply(ctx, rbac, apply.Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = applier.Uninstall(ctx, rbac, apply.Options{}) })
	var wg sync.WaitGroup
	const nodes = 30
	for i := 0; i < nodes; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("node-%02d", i)
			kc := filepath.Join(t.TempDir(), "kubeconfig")
			if err := cp.ClientCertKubeconfig(kc, "system:node:"+name, []string{NodesGroup}); err != nil {
				t.Error(err)
				return
			}
			cfg, err := clientcmd.BuildConfigFromFlags("", kc)
			if err != nil {
				t.Error(err)
				return
			}
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := WriteNodeReport(ctx, cs, NodeReport{Node: name, Phase: PhaseKubeletExternal, Time: metav1.NowMicro()}); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}()
	}
	wg.Wait()
	reports, _, err := readNodeReportsFound(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	if len(reports) != nodes {
		t.Errorf("%d reports, want %d", len(reports), nodes)
	}
	// Each in its own node's ConfigMap, which the nodes' Role lets them
	// patch: the reports are spread over them.
	used := map[string]bool{}
	for n := range reports {
		cm, err := admin.CoreV1().ConfigMaps(Namespace).Get(ctx, reportShardOf(n), metav1.GetOptions{})
		if err != nil || cm.Data[reportKey(n)] == "" {
			t.Errorf("%s's report is not in %s: %v", n, reportShardOf(n), err)
		}
		used[reportShardOf(n)] = true
	}
	if len(used) < 2 {
		t.Errorf("%d nodes' reports all in %v", nodes, used)
	}
	// One field manager for every node's writes: with one each, every write
	// costs the apiserver more for each manager the ConfigMap holds, which
	// at thousands of nodes times the writes out (WriteNodeReport).
	for name := range used {
		cm, err := admin.CoreV1().ConfigMaps(Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var managers []string
		for _, m := range cm.ManagedFields {
			if strings.HasPrefix(m.Manager, reportsFieldManager) {
				managers = append(managers, m.Manager)
			}
		}
		if len(managers) != 1 {
			t.Errorf("%s: the node reports' field managers are %v, want %s alone", name, managers, reportsFieldManager)
		}
	}
	// A node may not touch the journal.
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cp.ClientCertKubeconfig(kc, "system:node:intruder", []string{NodesGroup}); err != nil {
		t.Fatal(err)
	}
	cfg, _ := clientcmd.BuildConfigFromFlags("", kc)
	cs, _ := kubernetes.NewForConfig(cfg)
	if _, err := (&Store{Client: cs}).Load(ctx); !apierrors.IsForbidden(errors.Unwrap(err)) {
		t.Errorf("a node read the journal: %v", err)
	}
}

// The local mirror is the operator's own record: the file is 0600, and a
// directory made for it 0700.
func TestMirrorIsPrivate(t *testing.T) {
	local := filepath.Join(t.TempDir(), "new", "journal.json")
	s := &Store{LocalPath: local}
	if err := s.mirror(&Journal{Plan: "p"}); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{local: 0o600, filepath.Dir(local): 0o700} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}
}
