package nodephase

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const kubeadmKCM = "/etc/kubernetes/manifests/kube-controller-manager.yaml"

func writeNodeFile(t *testing.T, root, p, content string) {
	t.Helper()
	h := filepath.Join(root, p)
	if err := os.MkdirAll(filepath.Dir(h), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestForeignEditRefused: a file changed by someone else since the tool
// edited it stops every phase, restore included, with the file and the way
// out named, and nothing is written.
func TestForeignEditRefused(t *testing.T) {
	root := copyFixture(t, "kubeadm-control-plane")
	o := Options{Root: root, Phase: PhaseControlPlaneLeaderMigration, LeaderMigrationConfig: lmConfig(t)}
	mustApply(t, o)
	edited := readFile(t, root, kubeadmKCM) + "# edited by hand\n"
	writeNodeFile(t, root, kubeadmKCM, edited)
	before := snapshot(t, root)
	for _, p := range []Phase{PhaseControlPlaneExternal, PhaseControlPlaneLeaderMigration, PhaseRestore} {
		t.Run(string(p), func(t *testing.T) {
			o.Phase = p
			_, err := Apply(o)
			if err == nil {
				t.Fatal("no error")
			}
			for _, want := range []string{kubeadmKCM, "someone else", backupPath(kubeadmKCM), "cp -p", "nothing was written"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			sameTree(t, snapshot(t, root), before)
		})
	}
	// The way out: put the original back, and the phases run again.
	writeNodeFile(t, root, kubeadmKCM, readFile(t, root, backupPath(kubeadmKCM)))
	o.Phase = PhaseControlPlaneExternal
	mustApply(t, o)
}

func TestForeignEditOfCreatedFileRefused(t *testing.T) {
	root := copyFixture(t, "kubeadm-control-plane")
	o := Options{Root: root, Phase: PhaseControlPlaneLeaderMigration, LeaderMigrationConfig: lmConfig(t)}
	mustApply(t, o)
	writeNodeFile(t, root, LeaderMigrationConfigPath, "leaderName: other\n")
	o.Phase = PhaseControlPlaneExternal
	if _, err := Apply(o); err == nil || !strings.Contains(err.Error(), LeaderMigrationConfigPath+" was created by awsccmctl") {
		t.Errorf("err = %v", err)
	}
}

// TestRefusals: bad input is an error, never a panic, and nothing is written.
func TestRefusals(t *testing.T) {
	cases := []struct {
		name    string
		fixture string
		prepare func(t *testing.T, root string)
		opts    Options
		want    string
	}{
		{name: "unparseable kube-controller-manager manifest", fixture: "kubeadm-control-plane",
			prepare: func(t *testing.T, root string) {
				writeNodeFile(t, root, kubeadmKCM, "apiVersion: v1\nkind: Pod\nspec: [\n")
			},
			opts: Options{Phase: PhaseControlPlaneExternal},
			want: "no kube-controller-manager static Pod in /etc/kubernetes/manifests: phase control-plane-external runs on control-plane nodes only (unreadable manifests: " + kubeadmKCM},
		{name: "kube-controller-manager manifest missing", fixture: "kubeadm-control-plane",
			prepare: func(t *testing.T, root string) { must(t, os.Remove(filepath.Join(root, kubeadmKCM))) },
			opts:    Options{Phase: PhaseControlPlaneExternal},
			want:    "control-plane nodes only"},
		{name: "control plane phase on a worker", fixture: "kops-node",
			opts: Options{Phase: PhaseControlPlaneExternal},
			want: "control-plane nodes only"},
		{name: "leader migration without its configuration", fixture: "kubeadm-control-plane",
			opts: Options{Phase: PhaseControlPlaneLeaderMigration},
			want: "needs the LeaderMigrationConfiguration"},
		{name: "leader migration with a bad configuration", fixture: "kubeadm-control-plane",
			opts: Options{Phase: PhaseControlPlaneLeaderMigration, LeaderMigrationConfig: []byte("kind: Foo\n")},
			want: "leader migration configuration"},
		{name: "unknown phase", fixture: "kubeadm-node", opts: Options{Phase: "kubelet"}, want: `phase "kubelet": want one of`},
		{name: "scope outside restore", fixture: "kubeadm-node", opts: Options{Phase: PhaseKubeletExternal, Scope: ScopeKubelet},
			want: "applies to phase restore only"},
		{name: "provider ID not canonical", fixture: "kubeadm-node", opts: Options{Phase: PhaseKubeletExternal, ProviderID: "i-0123456789abcdef0"},
			want: "want the canonical aws:///<zone>/<instance-id>"},
		{name: "hostname not a name", fixture: "kubeadm-node", opts: Options{Phase: PhaseKubeletExternal, HostnameOverride: "Bad Name"},
			want: "hostname override"},
		{name: "no kubelet", fixture: "kubeadm-node",
			prepare: func(t *testing.T, root string) {
				for _, d := range []string{"etc", "lib", "var"} {
					must(t, os.RemoveAll(filepath.Join(root, d)))
				}
			},
			opts: Options{Phase: PhaseKubeletExternal},
			want: "no kubelet found"},
		{name: "provider ID differs from the kubelet configuration's", fixture: "kubeadm-node",
			prepare: func(t *testing.T, root string) {
				writeNodeFile(t, root, "/var/lib/kubelet/config.yaml", readFile(t, root, "/var/lib/kubelet/config.yaml")+"providerID: aws:///us-east-1b/i-0123456789abcdef1\n")
			},
			opts: Options{Phase: PhaseKubeletExternal, ProviderID: "aws:///us-east-1a/i-0123456789abcdef0"},
			want: "does not change a Node's identity"},
		{name: "hostname override differs", fixture: "kops-node",
			opts: Options{Phase: PhaseKubeletExternal, HostnameOverride: "ip-10-0-0-1.ec2.internal"},
			want: "--hostname-override=i-0a1b2c3d4e5f60718"},
		{name: "hostname label differs from the one in --node-labels", fixture: "kubeadm-node",
			prepare: func(t *testing.T, root string) {
				writeNodeFile(t, root, "/etc/default/kubelet", "KUBELET_EXTRA_ARGS=--node-labels=kubernetes.io/hostname=other\n")
			},
			opts: Options{Phase: PhaseKubeletExternal, HostnameLabel: "ip-10-0-1-10"},
			want: "already has --node-labels with kubernetes.io/hostname=other, not ip-10-0-1-10"},
		{name: "hostname label not a label value", fixture: "kubeadm-node", opts: Options{Phase: PhaseKubeletExternal, HostnameLabel: "a b"},
			want: `hostname label "a b"`},
		{name: "cloud provider on the ExecStart= line", fixture: "kubeadm-node",
			prepare: func(t *testing.T, root string) {
				p := "/etc/systemd/system/kubelet.service.d/10-kubeadm.conf"
				writeNodeFile(t, root, p, strings.Replace(readFile(t, root, p), "ExecStart=/usr/bin/kubelet ", "ExecStart=/usr/bin/kubelet --cloud-provider=aws ", 1))
				writeNodeFile(t, root, "/var/lib/kubelet/kubeadm-flags.env", "KUBELET_KUBEADM_ARGS=\"--v=2\"\n")
			},
			opts: Options{Phase: PhaseKubeletExternal},
			want: "ExecStart= line of /etc/systemd/system/kubelet.service.d/10-kubeadm.conf"},
		{name: "kubelet variable with quotes inside", fixture: "kops-node",
			prepare: func(t *testing.T, root string) {
				writeNodeFile(t, root, "/etc/sysconfig/kubelet", "DAEMON_ARGS=\"--cloud-provider=aws --node-labels='a=b'\"\n")
			},
			opts: Options{Phase: PhaseKubeletExternal},
			want: "/etc/sysconfig/kubelet: DAEMON_ARGS: the value has quotes"},
		{name: "a symbolic link", fixture: "kubeadm-control-plane",
			prepare: func(t *testing.T, root string) {
				h := filepath.Join(root, kubeadmKCM)
				must(t, os.Rename(h, h+".real"))
				must(t, os.Symlink(filepath.Base(h)+".real", h))
			},
			opts: Options{Phase: PhaseControlPlaneExternal},
			want: "is a symbolic link"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := copyFixture(t, c.fixture)
			if c.prepare != nil {
				c.prepare(t, root)
			}
			before := snapshot(t, root)
			o := c.opts
			o.Root = root
			for _, dry := range []bool{true, false} {
				o.DryRun = dry
				_, err := Apply(o)
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("dry run %v: err = %v, want it to contain %q", dry, err, c.want)
				}
			}
			sameTree(t, snapshot(t, root), before)
		})
	}
}

// TestModeKept: files keep their mode through the phases and restore.
func TestModeKept(t *testing.T) {
	root := copyFixture(t, "kubeadm-control-plane")
	if err := os.Chmod(filepath.Join(root, kubeadmKCM), 0o600); err != nil {
		t.Fatal(err)
	}
	original := snapshot(t, root)
	o := Options{Root: root, Phase: PhaseControlPlaneLeaderMigration, LeaderMigrationConfig: lmConfig(t)}
	mustApply(t, o)
	fi, err := os.Stat(filepath.Join(root, kubeadmKCM))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode after the phase: %v, %v", fi.Mode(), err)
	}
	o.Phase = PhaseRestore
	mustApply(t, o)
	sameTree(t, snapshot(t, root), original)
}

// TestRestoreScope: restoring the kubelet files leaves the control plane
// as it is, and the rest of the state for a later restore.
func TestRestoreScope(t *testing.T) {
	root := copyFixture(t, "kubeadm-control-plane")
	original := snapshot(t, root)
	o := Options{Root: root, LeaderMigrationConfig: lmConfig(t)}
	for _, p := range []Phase{PhaseControlPlaneLeaderMigration, PhaseControlPlaneExternal, PhaseKubeletExternal} {
		o.Phase = p
		mustApply(t, o)
	}
	external := readFile(t, root, kubeadmKCM)
	o.Phase, o.Scope = PhaseRestore, ScopeKubelet
	r := mustApply(t, o)
	if a := actions(r); len(a) != 1 || a["/var/lib/kubelet/kubeadm-flags.env"] != ActionRestored {
		t.Errorf("restore kubelet: %v", a)
	}
	if readFile(t, root, "/var/lib/kubelet/kubeadm-flags.env") != original["/var/lib/kubelet/kubeadm-flags.env"][len("-rw-r--r-- "):] {
		t.Errorf("kubelet flags not restored")
	}
	if readFile(t, root, kubeadmKCM) != external {
		t.Errorf("the control plane changed")
	}
	o.Scope = ScopeAll
	mustApply(t, o)
	sameTree(t, snapshot(t, root), original)
}

// TestLocked: a second run while one holds the lock is refused.
func TestLocked(t *testing.T) {
	root := copyFixture(t, "kubeadm-node")
	fsys := nodeFS{root: root}
	if err := fsys.mkdirAll(StateDir); err != nil {
		t.Fatal(err)
	}
	unlock, err := lockDir(fsys.host(StateDir))
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	_, err = Apply(Options{Root: root, Phase: PhaseKubeletExternal})
	if err == nil || !strings.Contains(err.Error(), "another `migrate-from-intree node` run") {
		t.Errorf("err = %v", err)
	}
}

// TestWriteAtomicCleansUp: a failed write leaves no temporary file.
func TestWriteAtomicCleansUp(t *testing.T) {
	root := t.TempDir()
	fsys := nodeFS{root: root}
	if err := os.MkdirAll(filepath.Join(root, "etc/x/target"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := fsys.writeAtomic("/etc/x/target", []byte("a"), 0o644); err == nil {
		t.Fatal("replacing a directory did not fail")
	}
	entries, _ := os.ReadDir(filepath.Join(root, "etc/x"))
	if len(entries) != 1 {
		t.Errorf("left: %v", entries)
	}
	if err := fsys.writeAtomic("/etc/x/file", []byte("a"), 0o600); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(root, "etc/x/file")); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
}

// TestCrashBeforeWrite: when a run stopped after recording a change but
// before writing the file, the next run accepts the file and goes on.
func TestCrashBeforeWrite(t *testing.T) {
	root := copyFixture(t, "kubeadm-control-plane")
	o := Options{Root: root, Phase: PhaseControlPlaneLeaderMigration, LeaderMigrationConfig: lmConfig(t)}
	mustApply(t, o)
	lm := readFile(t, root, kubeadmKCM)
	o.Phase = PhaseControlPlaneExternal
	mustApply(t, o)
	// The external manifest was recorded; put the leader-migration one
	// back as if the write had not happened.
	writeNodeFile(t, root, kubeadmKCM, lm)
	must(t, os.Chmod(filepath.Join(root, kubeadmKCM), 0o644))
	r := mustApply(t, o)
	if a := actions(r); a[kubeadmKCM] != ActionModified {
		t.Errorf("actions %v", a)
	}
}

// must fails the test on a fixture edit that did not happen, so a case
// never passes on a tree it did not prepare.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
