package nodephase

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
)

// fuzzEdits are the changes the phases make, for the fuzz targets.
var fuzzEdits = []podEdit{kcmLeaderMigration, kcmExternal, apiServerExternal}

// FuzzEditArgv: the flag editor never panics, never touches the command,
// gives the flags the phase asks for (as nodefiles reads them), agrees with
// the word-level text edit, and a second run changes nothing.
func FuzzEditArgv(f *testing.F) {
	for _, s := range []string{
		"--cloud-provider=aws --cloud-config=/c --v=2",
		"--cloud-provider aws -- --cloud-config x",
		"--enable-admission-plugins=A,PersistentVolumeLabel,B --enable-admission-plugins PersistentVolumeLabel",
		"--cloud_provider --leader-migration-config",
		"-1 --=x --_a - -- --",
	} {
		for i := range fuzzEdits {
			f.Add(s, uint8(i))
		}
	}
	f.Fuzz(func(t *testing.T, line string, which uint8) {
		toks := append([]string{"kcm"}, strings.Fields(line)...)
		e := fuzzEdits[int(which)%len(fuzzEdits)]
		edits, out, err := editArgv(toks, 1, e.ops)
		if err != nil {
			return
		}
		if out[0] != toks[0] {
			t.Fatalf("the command changed: %q", out)
		}
		flags := nodefiles.ParseFlags(out)
		for _, op := range e.ops {
			switch op.kind {
			case opSet:
				if v, _ := flags.Get(op.name); v != op.value {
					t.Fatalf("%q: --%s=%q, want %q", out, op.name, v, op.value)
				}
			case opRemove:
				if flags.Has(op.name) {
					t.Fatalf("%q still has --%s", out, op.name)
				}
			case opAddItem:
				found := false
				for _, v := range flags.Values(op.name) {
					found = found || slices.Contains(strings.Split(v, ","), op.value)
				}
				if !found {
					t.Fatalf("%q lacks %s in --%s", out, op.value, op.name)
				}
			case opRemoveItem:
				for _, v := range flags.Values(op.name) {
					for _, it := range strings.Split(v, ",") {
						if strings.TrimSpace(it) == op.value {
							t.Fatalf("%q still has %s", out, op.value)
						}
					}
				}
			}
		}
		spans, text := wordSpans(toks)
		te, err := wordEdits(spans, edits, 0)
		if err == nil {
			got, err := applyTextEdits(text, te)
			if err != nil || strings.Join(strings.Fields(got), " ") != strings.Join(out, " ") {
				t.Fatalf("text edit %q (%v), token edit %q", got, err, out)
			}
		}
		if again, _, err := editArgv(out, 1, e.ops); err != nil || len(again) > 0 {
			t.Fatalf("second run on %q: %v %v", out, again, err)
		}
	})
}

// FuzzEditEnvVar: editing one variable never panics, keeps the text before
// the value, and reads back with the intended flags.
func FuzzEditEnvVar(f *testing.F) {
	for _, s := range []string{
		"X=\"--cloud-provider=aws --v=2\"\n",
		"# c\nX='--cloud-config=/c'\nY=1\n",
		"X=--a --b\r\nX=\n",
		"X=\"a\\\"b\"\n",
		"X=\"\n",
	} {
		f.Add(s)
	}
	ops := []flagOp{setFlag(flagCloudProvider, providerExternal), removeFlag(flagCloudConfig)}
	f.Fuzz(func(t *testing.T, text string) {
		v, err := readEnvVar(text, "X")
		if err != nil {
			return
		}
		out, err := editEnvVar(text, "X", ops)
		if err != nil {
			return
		}
		start := v.emptyAt
		if len(v.spans) > 0 {
			start = min(start, v.spans[0].start)
		}
		if out[:start] != text[:start] {
			t.Fatalf("text before the value changed: %q -> %q", text, out)
		}
		w, err := readEnvVar(out, "X")
		if err != nil {
			t.Fatalf("%q: %v", out, err)
		}
		flags := nodefiles.ParseFlags(append([]string{"kubelet"}, w.words...))
		if v, _ := flags.Get(flagCloudProvider); v != providerExternal || flags.Has(flagCloudConfig) {
			t.Fatalf("%q: %v", out, flags)
		}
		if again, err := editEnvVar(out, "X", ops); err != nil || again != out {
			t.Fatalf("second edit: %q, %v", again, err)
		}
	})
}

// FuzzEditScript: editing a shell script never panics; a result is checked
// by parsing it again (inside editScript).
func FuzzEditScript(f *testing.F) {
	for _, s := range []string{
		"exec /usr/local/bin/kube-controller-manager --cloud-provider=aws --cloud-config=/c > /tmp/p 2>&1",
		"mkfifo /p; (tee -a /l < /p & ) ; exec kube-controller-manager \\\n --v=2 '--cloud-provider=aws' \"--cloud-config=$X\"",
		"kube-controller-manager $ARGS --cloud-provider=aws",
		"if true; then nice -n 10 kube-controller-manager --cloud-config /c; fi",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		for _, e := range []podEdit{kcmLeaderMigration, kcmExternal} {
			_, out, err := editScript(script, componentKCM, e.ops)
			if err != nil {
				continue
			}
			if _, again, err := editScript(out, componentKCM, e.ops); err != nil || again != out {
				t.Fatalf("second edit of %q: %q, %v", out, again, err)
			}
		}
	})
}

// FuzzEditManifest: a manifest never makes the editor panic; an edit that
// succeeds was checked against the intended Pod (inside editManifest) and
// a second edit changes nothing.
func FuzzEditManifest(f *testing.F) {
	for _, fx := range []string{"kubeadm-control-plane", "kops-control-plane", "kops-legacy-control-plane"} {
		dir := filepath.Join("testdata", fx, "etc", "kubernetes", "manifests")
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if data, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil {
				f.Add(data)
			}
		}
	}
	f.Add([]byte(podHead + "spec:\n  containers:\n  - command:\n    - kube-controller-manager\n    - \"--cloud-provider=aws\" # c\n    name: k\n"))
	f.Add([]byte(podHead + "spec:\n  containers:\n  - command: [sh, -c]\n    args:\n    - |\n      kube-controller-manager --cloud-config=/c\n    name: k\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, e := range fuzzEdits {
			out, err := editManifest("/m", data, e)
			if err != nil {
				continue
			}
			again, err := editManifest("/m", out, e)
			if err != nil || !bytes.Equal(again, out) {
				t.Fatalf("second edit:\n%s\n%v", unifiedDiff("first", "second", out, again, true, true), err)
			}
		}
	})
}

// FuzzEditClusterConfiguration: never panics; a phase's output is its own
// fixed point.
func FuzzEditClusterConfiguration(f *testing.F) {
	entries, _ := os.ReadDir(filepath.Join("testdata", "kubeadm-config"))
	for _, e := range entries {
		if data, err := os.ReadFile(filepath.Join("testdata", "kubeadm-config", e.Name())); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\ncontrollerManager:\n  extraArgs: []\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, p := range []Phase{PhaseControlPlaneLeaderMigration, PhaseControlPlaneExternal} {
			out, err := EditClusterConfiguration(data, p, "")
			if err != nil {
				continue
			}
			again, err := EditClusterConfiguration(out, p, "")
			if err != nil || !bytes.Equal(again, out) {
				t.Fatalf("%s: second edit:\n%s\n%v", p, unifiedDiff("first", "second", out, again, true, true), err)
			}
		}
	})
}
