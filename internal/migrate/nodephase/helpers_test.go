package nodephase

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/awsccmctl/awsccmctl/internal/leadermigration"
	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/internal/preflight/nodechecks"
)

// copyFixture copies testdata/<name> into a new root and returns it.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	root := t.TempDir()
	src := filepath.Join("testdata", name)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		dst := filepath.Join(root, rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, fi.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// snapshot returns every file and directory under root: path -> mode and
// content ("dir" for directories).
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			out["/"+rel] = "dir " + fi.Mode().Perm().String()
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out["/"+filepath.ToSlash(rel)] = fi.Mode().Perm().String() + " " + string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// nodeFiles drops the tool's state directory from a snapshot.
func nodeFiles(snap map[string]string) map[string]string {
	out := map[string]string{}
	for p, v := range snap {
		if !isUnder(p, StateDir) {
			out[p] = v
		}
	}
	return out
}

// sameTree fails the test when the trees differ, naming the paths.
func sameTree(t *testing.T, got, want map[string]string) {
	t.Helper()
	for p, w := range want {
		if g, ok := got[p]; !ok {
			t.Errorf("%s is missing", p)
		} else if g != w {
			t.Errorf("%s differs:\n%s", p, unifiedDiff("want", "got", []byte(w), []byte(g), true, true))
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s is left over", p)
		}
	}
}

func lmConfig(t *testing.T) []byte {
	t.Helper()
	data, err := leadermigration.Render(leadermigration.ComponentKCM)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func mustApply(t *testing.T, o Options) *Result {
	t.Helper()
	r, err := Apply(o)
	if err != nil {
		t.Fatalf("Apply(%s): %v", o.Phase, err)
	}
	b, err := json.Marshal(r)
	if err != nil || !strings.Contains(string(b), `"schemaVersion"`) {
		t.Fatalf("result JSON: %s, %v", b, err)
	}
	return r
}

func readNode(t *testing.T, root string) *nodefiles.Node {
	t.Helper()
	n, err := nodefiles.Read(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(n.Problems) > 0 {
		t.Fatalf("node files have problems: %q", n.Problems)
	}
	return n
}

func readFile(t *testing.T, root, p string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, p))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func exists(root, p string) bool {
	_, err := os.Lstat(filepath.Join(root, p))
	return err == nil
}

// readPod decodes a static Pod manifest.
func readPod(t *testing.T, root, p string) *corev1.Pod {
	t.Helper()
	var pod corev1.Pod
	if err := sigsyaml.UnmarshalStrict([]byte(readFile(t, root, p)), &pod); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return &pod
}

// checkStatuses runs the node preflight checks in post-install mode and
// returns the status of each.
func checkStatuses(t *testing.T, root string) map[string]preflight.Finding {
	t.Helper()
	in := nodechecks.Input{Node: readNode(t, root), Mode: preflight.ModePostInstall}
	rep, err := preflight.Run(context.Background(), nodechecks.Checks(in), preflight.Options{Mode: preflight.ModePostInstall})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]preflight.Finding{}
	for _, f := range rep.Findings {
		out[f.ID] = f
	}
	return out
}

// actions maps each reported file to its action.
func actions(r *Result) map[string]Action {
	out := map[string]Action{}
	for _, f := range r.Files {
		out[f.Path] = f.Action
	}
	return out
}

func flagValue(t *testing.T, f nodefiles.Flags, name string) string {
	t.Helper()
	v, ok := f.Get(name)
	if !ok {
		t.Fatalf("--%s missing from %s", name, f)
	}
	return v
}
