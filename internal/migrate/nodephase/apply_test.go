package nodephase

import (
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/internal/preflight/nodechecks"
)

// fixture describes a node file tree of testdata/.
type fixture struct {
	name         string
	layout       Layout
	controlPlane bool
	kcm, api     string // manifests' node paths
	// kubeletFiles are the files kubelet-external edits.
	kubeletFiles []string
	providerID   string
	hostname     string
}

var fixtures = []fixture{
	{name: "kubeadm-control-plane", layout: LayoutKubeadm, controlPlane: true,
		kcm: "/etc/kubernetes/manifests/kube-controller-manager.yaml", api: "/etc/kubernetes/manifests/kube-apiserver.yaml",
		kubeletFiles: []string{"/var/lib/kubelet/kubeadm-flags.env"}, hostname: "ip-10-0-1-10.ec2.internal"},
	{name: "kubeadm-node", layout: LayoutKubeadm,
		kubeletFiles: []string{"/var/lib/kubelet/kubeadm-flags.env", "/etc/default/kubelet"}, providerID: "aws:///us-east-1a/i-0123456789abcdef0"},
	{name: "kops-control-plane", layout: LayoutKops, controlPlane: true,
		kcm: "/etc/kubernetes/manifests/kube-controller-manager.manifest", api: "/etc/kubernetes/manifests/kube-apiserver.manifest",
		kubeletFiles: []string{"/etc/sysconfig/kubelet"}, providerID: "aws:///eu-west-1a/i-0f1e2d3c4b5a69788"},
	{name: "kops-legacy-control-plane", layout: LayoutKops, controlPlane: true,
		kcm: "/etc/kubernetes/manifests/kube-controller-manager.manifest", api: "/etc/kubernetes/manifests/kube-apiserver.manifest",
		kubeletFiles: []string{"/etc/sysconfig/kubelet"}, hostname: "ip-172-20-1-10.eu-west-1.compute.internal"},
	{name: "kops-node", layout: LayoutKops,
		kubeletFiles: []string{"/etc/sysconfig/kubelet"}, providerID: "aws:///eu-west-1a/i-0a1b2c3d4e5f60718", hostname: "i-0a1b2c3d4e5f60718"},
}

// TestLifecycle runs every phase on every fixture, in the order a migration
// does, with a re-run, a rollback and a restore, checking the files with
// nodefiles and the node preflight checks.
func TestLifecycle(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			root := copyFixture(t, fx.name)
			original := snapshot(t, root)
			opts := func(p Phase) Options {
				return Options{Root: root, Phase: p, LeaderMigrationConfig: lmConfig(t), ProviderID: fx.providerID, HostnameOverride: fx.hostname}
			}
			if fx.controlPlane {
				testControlPlane(t, fx, root, opts, original)
			} else {
				_, err := Apply(opts(PhaseControlPlaneLeaderMigration))
				if err == nil || !strings.Contains(err.Error(), "control-plane nodes only") {
					t.Fatalf("control-plane phase on a worker: err = %v, want a clear refusal", err)
				}
				sameTree(t, snapshot(t, root), original)
			}
			testKubelet(t, fx, root, opts)

			// Restore: byte-identical files, no state, nothing left.
			r := mustApply(t, opts(PhaseRestore))
			if !r.Changed {
				t.Errorf("restore reported no change")
			}
			for _, f := range r.Files {
				if f.Action != ActionRestored && f.Action != ActionRemoved && f.Action != ActionUnchanged {
					t.Errorf("restore: %s %s", f.Path, f.Action)
				}
			}
			sameTree(t, snapshot(t, root), original)
			if r := mustApply(t, opts(PhaseRestore)); r.Changed || len(r.Files) > 0 {
				t.Errorf("second restore: %+v", r)
			}
			sameTree(t, snapshot(t, root), original)
		})
	}
}

func testControlPlane(t *testing.T, fx fixture, root string, opts func(Phase) Options, original map[string]string) {
	t.Helper()
	// Dry run: the diffs, nothing written.
	dry := opts(PhaseControlPlaneLeaderMigration)
	dry.DryRun = true
	r := mustApply(t, dry)
	if !r.DryRun || !r.Changed || r.Layout != fx.layout {
		t.Fatalf("dry run result: %+v", r)
	}
	if a := actions(r); a[fx.kcm] != ActionModified || a[LeaderMigrationConfigPath] != ActionCreated {
		t.Errorf("dry run actions: %v", a)
	}
	for _, f := range r.Files {
		if !strings.Contains(f.Diff, "+") {
			t.Errorf("dry run: no diff for %s", f.Path)
		}
	}
	sameTree(t, snapshot(t, root), original)

	// Leader migration.
	r = mustApply(t, opts(PhaseControlPlaneLeaderMigration))
	if a := actions(r); a[fx.kcm] != ActionModified || a[LeaderMigrationConfigPath] != ActionCreated || len(a) != 2 {
		t.Errorf("leader migration actions: %v", a)
	}
	checkLeaderMigration(t, fx, root)
	checkBackups(t, root)
	afterLM := snapshot(t, root)
	if r := mustApply(t, opts(PhaseControlPlaneLeaderMigration)); r.Changed {
		t.Errorf("second leader migration changed %v", r.ChangedPaths())
	}
	sameTree(t, nodeFiles(snapshot(t, root)), nodeFiles(afterLM))

	// External.
	r = mustApply(t, opts(PhaseControlPlaneExternal))
	if a := actions(r); a[fx.kcm] != ActionModified || a[fx.api] != ActionModified || a[LeaderMigrationConfigPath] != ActionRemoved {
		t.Errorf("external actions: %v", a)
	}
	checkExternal(t, fx, root)
	afterExternal := snapshot(t, root)
	if r := mustApply(t, opts(PhaseControlPlaneExternal)); r.Changed {
		t.Errorf("second external changed %v", r.ChangedPaths())
	}
	sameTree(t, nodeFiles(snapshot(t, root)), nodeFiles(afterExternal))

	// Rollback to leader migration: exactly the first run's files.
	r = mustApply(t, opts(PhaseControlPlaneLeaderMigration))
	if a := actions(r); a[fx.api] != ActionRestored || a[LeaderMigrationConfigPath] != ActionCreated {
		t.Errorf("rollback actions: %v", a)
	}
	sameTree(t, nodeFiles(snapshot(t, root)), nodeFiles(afterLM))
	// And forward again.
	mustApply(t, opts(PhaseControlPlaneExternal))
	sameTree(t, nodeFiles(snapshot(t, root)), nodeFiles(afterExternal))
}

func checkLeaderMigration(t *testing.T, fx fixture, root string) {
	t.Helper()
	n := readNode(t, root)
	kcm := n.StaticPods[componentKCM]
	if kcm == nil || kcm.Path != fx.kcm {
		t.Fatalf("kube-controller-manager static Pod: %+v", kcm)
	}
	if v := flagValue(t, kcm.Flags, "cloud-provider"); v != "aws" {
		t.Errorf("--cloud-provider=%s, want aws", v)
	}
	if v := flagValue(t, kcm.Flags, "enable-leader-migration"); v != "true" {
		t.Errorf("--enable-leader-migration=%s", v)
	}
	if v := flagValue(t, kcm.Flags, "leader-migration-config"); v != LeaderMigrationConfigPath {
		t.Errorf("--leader-migration-config=%s", v)
	}
	if got := readFile(t, root, LeaderMigrationConfigPath); got != string(lmConfig(t)) {
		t.Errorf("leader-migration file:\n%s", got)
	}
	pod := readPod(t, root, fx.kcm)
	vol := slices.IndexFunc(pod.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == LeaderMigrationVolumeName })
	if vol < 0 || pod.Spec.Volumes[vol].HostPath == nil || pod.Spec.Volumes[vol].HostPath.Path != LeaderMigrationConfigPath ||
		pod.Spec.Volumes[vol].HostPath.Type == nil || *pod.Spec.Volumes[vol].HostPath.Type != "File" {
		t.Errorf("volumes: %+v", pod.Spec.Volumes)
	}
	c := pod.Spec.Containers[0]
	m := slices.IndexFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == LeaderMigrationVolumeName })
	if m < 0 || c.VolumeMounts[m].MountPath != LeaderMigrationConfigPath || !c.VolumeMounts[m].ReadOnly {
		t.Errorf("volume mounts: %+v", c.VolumeMounts)
	}
	if api := n.StaticPods[componentAPIServer]; flagValue(t, api.Flags, "cloud-provider") != "aws" {
		t.Errorf("kube-apiserver changed in the leader-migration phase")
	}
}

func checkExternal(t *testing.T, fx fixture, root string) {
	t.Helper()
	n := readNode(t, root)
	kcm, api := n.StaticPods[componentKCM], n.StaticPods[componentAPIServer]
	if v := flagValue(t, kcm.Flags, "cloud-provider"); v != "external" {
		t.Errorf("kube-controller-manager --cloud-provider=%s", v)
	}
	for _, f := range []string{"cloud-config", "enable-leader-migration", "leader-migration-config"} {
		if kcm.Flags.Has(f) {
			t.Errorf("kube-controller-manager still has --%s", f)
		}
	}
	for _, f := range []string{"cloud-provider", "cloud-config"} {
		if api.Flags.Has(f) {
			t.Errorf("kube-apiserver still has --%s", f)
		}
	}
	for _, v := range api.Flags.Values("enable-admission-plugins") {
		if strings.Contains(v, pluginPVL) || v == "" {
			t.Errorf("--enable-admission-plugins=%s", v)
		}
	}
	if exists(root, LeaderMigrationConfigPath) || exists(root, path.Dir(LeaderMigrationConfigPath)) {
		t.Errorf("the leader-migration file or its directory is left")
	}
	for _, v := range readPod(t, root, fx.kcm).Spec.Volumes {
		if v.Name == LeaderMigrationVolumeName {
			t.Errorf("the leader-migration volume is left")
		}
	}
	st := checkStatuses(t, root)
	for _, id := range []string{nodechecks.IDNodeFilesReadable, nodechecks.IDAPIServerCloudProvider, nodechecks.IDAPIServerCloudConfig,
		nodechecks.IDAPIServerAdmission, nodechecks.IDKCMCloudProvider, nodechecks.IDKCMLeaderElect} {
		if st[id].Status != preflight.StatusPass {
			t.Errorf("check %s: %s: %s", id, st[id].Status, st[id].Message)
		}
	}
}

func testKubelet(t *testing.T, fx fixture, root string, opts func(Phase) Options) {
	t.Helper()
	before := snapshot(t, root)
	dry := opts(PhaseKubeletExternal)
	dry.DryRun = true
	if r := mustApply(t, dry); !r.Changed || r.Layout != fx.layout {
		t.Errorf("kubelet dry run: changed %v, layout %s", r.Changed, r.Layout)
	}
	sameTree(t, snapshot(t, root), before)

	r := mustApply(t, opts(PhaseKubeletExternal))
	var changed []string
	for _, f := range r.Files {
		if f.Action == ActionModified {
			changed = append(changed, f.Path)
		}
	}
	slices.Sort(changed)
	want := slices.Sorted(slices.Values(fx.kubeletFiles))
	if !slices.Equal(changed, want) {
		t.Errorf("kubelet-external modified %v, want %v", changed, want)
	}
	n := readNode(t, root)
	k := n.Kubelet
	if v := flagValue(t, k.Flags, "cloud-provider"); v != "external" {
		t.Errorf("kubelet --cloud-provider=%s", v)
	}
	if k.Flags.Has("cloud-config") {
		t.Errorf("kubelet still has --cloud-config")
	}
	if fx.providerID != "" && flagValue(t, k.Flags, "provider-id") != fx.providerID {
		t.Errorf("kubelet --provider-id")
	}
	if fx.hostname != "" && flagValue(t, k.Flags, "hostname-override") != fx.hostname {
		t.Errorf("kubelet --hostname-override")
	}
	st := checkStatuses(t, root)
	for _, id := range []string{nodechecks.IDKubeletCloudProvider, nodechecks.IDKubeletNodeIdentity} {
		if st[id].Status != preflight.StatusPass {
			t.Errorf("check %s: %s: %s", id, st[id].Status, st[id].Message)
		}
	}
	checkBackups(t, root)
	after := snapshot(t, root)
	if r := mustApply(t, opts(PhaseKubeletExternal)); r.Changed {
		t.Errorf("second kubelet-external changed %v", r.ChangedPaths())
	}
	sameTree(t, nodeFiles(snapshot(t, root)), nodeFiles(after))
}

// checkBackups: the static Pod directory holds only manifests the kubelet
// should run (no backup, no temporary file), every backup is in BackupDir
// and matches its recorded hash, and the directories of the state and the
// backups are private (0700) while those the tool made for node files
// others read are 0755.
func checkBackups(t *testing.T, root string) {
	t.Helper()
	checkDirModes(t, root)
	entries, _ := os.ReadDir(filepath.Join(root, nodefiles.ManifestsDir))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || strings.Contains(e.Name(), "backup") || strings.Contains(e.Name(), "awsccmctl") {
			t.Errorf("%s/%s is not a manifest", nodefiles.ManifestsDir, e.Name())
		}
	}
	st, err := loadState(nodeFS{root: root})
	if err != nil || st == nil {
		t.Fatalf("state: %v, %v", st, err)
	}
	for _, f := range st.Files {
		if !f.Existed {
			continue
		}
		if !strings.HasPrefix(f.Backup, BackupDir+"/") || strings.HasPrefix(f.Backup, nodefiles.ManifestsDir) {
			t.Errorf("backup of %s at %s", f.Path, f.Backup)
		}
		if hashOf([]byte(readFile(t, root, f.Backup))) != f.SHA256 {
			t.Errorf("backup of %s does not match its hash", f.Path)
		}
	}
}

// checkDirModes checks the modes of the directories the tool made: 0700 for
// the state directory and everything under it, 0755 for the directory of
// the leader-migration configuration the kube-controller-manager reads.
func checkDirModes(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(filepath.Join(root, StateDir), func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v, want 0700", p, fi.Mode().Perm())
		}
		return nil
	})
	if err != nil {
		t.Errorf("walk %s: %v", StateDir, err)
	}
	// 0755 as the umask leaves it: what MkdirAll makes of 0755 here.
	ref := filepath.Join(t.TempDir(), "ref")
	if err := os.MkdirAll(ref, 0o755); err != nil {
		t.Fatal(err)
	}
	want, _ := os.Stat(ref)
	dir := filepath.Join(root, path.Dir(LeaderMigrationConfigPath))
	if fi, err := os.Stat(dir); err == nil && fi.Mode().Perm() != want.Mode().Perm() {
		t.Errorf("%s: mode %v, want %v (the kube-controller-manager reads it)", dir, fi.Mode().Perm(), want.Mode().Perm())
	}
}

// TestResultJSON pins the keys of `-o json`.
func TestResultJSON(t *testing.T) {
	root := copyFixture(t, "kubeadm-node")
	r := mustApply(t, Options{Root: root, Phase: PhaseKubeletExternal, DryRun: true})
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"schemaVersion":"awsccmctl.io/migrate-node/v1"`, `"phase":"kubelet-external"`, `"dryRun":true`,
		`"layout":"kubeadm"`, `"changed":true`, `"path":"/var/lib/kubelet/kubeadm-flags.env"`, `"action":"modified"`,
		`"backup":"/var/lib/awsccmctl/migration/backup/var/lib/kubelet/kubeadm-flags.env"`, `"diff":"--- a/var/lib/kubelet/kubeadm-flags.env`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON %s lacks %s", b, want)
		}
	}
	if got := r.ChangedPaths(); !slices.Equal(got, []string{"/var/lib/kubelet/kubeadm-flags.env", "/etc/default/kubelet"}) {
		t.Errorf("ChangedPaths() = %v", got)
	}
}

// TestIdentityKept: a providerID already in the kubelet configuration, or a
// --hostname-override already set, equal to the one asked for, is not added
// again.
func TestIdentityKept(t *testing.T) {
	root := copyFixture(t, "kubeadm-node")
	cfg := "/var/lib/kubelet/config.yaml"
	writeNodeFile(t, root, cfg, readFile(t, root, cfg)+"providerID: aws:///us-east-1a/i-0123456789abcdef0\n")
	mustApply(t, Options{Root: root, Phase: PhaseKubeletExternal, ProviderID: "aws:///us-east-1a/i-0123456789abcdef0"})
	if got := readFile(t, root, "/var/lib/kubelet/kubeadm-flags.env"); strings.Contains(got, "provider-id") || !strings.Contains(got, "--cloud-provider=external") {
		t.Errorf("kubeadm-flags.env: %s", got)
	}

	root = copyFixture(t, "kops-node")
	mustApply(t, Options{Root: root, Phase: PhaseKubeletExternal, HostnameOverride: "i-0a1b2c3d4e5f60718"})
	if n := strings.Count(readFile(t, root, "/etc/sysconfig/kubelet"), "--hostname-override="); n != 1 {
		t.Errorf("%d --hostname-override flags", n)
	}
}

// TestHostnameLabelKept: the Node's hostname label goes into the last
// --node-labels there is (merged: the kubelet merges its occurrences), or a
// new one in the flag file; a re-run changes nothing, and restore puts the
// files back byte for byte.
func TestHostnameLabelKept(t *testing.T) {
	root := copyFixture(t, "kubeadm-node")
	before := readFile(t, root, "/etc/default/kubelet")
	mustApply(t, Options{Root: root, Phase: PhaseKubeletExternal, HostnameOverride: "ip-10-0-1-10.ec2.internal", HostnameLabel: "ip-10-0-1-10"})
	if got := readFile(t, root, "/etc/default/kubelet"); !strings.Contains(got, "--node-labels=node.kubernetes.io/pool=general,kubernetes.io/hostname=ip-10-0-1-10\n") {
		t.Errorf("/etc/default/kubelet:\n%s", got)
	}
	if got := readFile(t, root, "/var/lib/kubelet/kubeadm-flags.env"); strings.Contains(got, "node-labels") || !strings.Contains(got, "--hostname-override=ip-10-0-1-10.ec2.internal") {
		t.Errorf("kubeadm-flags.env:\n%s", got)
	}
	if r := mustApply(t, Options{Root: root, Phase: PhaseKubeletExternal, HostnameOverride: "ip-10-0-1-10.ec2.internal", HostnameLabel: "ip-10-0-1-10"}); r.Changed {
		t.Errorf("the re-run changed %v", r.ChangedPaths())
	}
	mustApply(t, Options{Root: root, Phase: PhaseRestore})
	if got := readFile(t, root, "/etc/default/kubelet"); got != before {
		t.Errorf("restored /etc/default/kubelet:\n%s\nwant:\n%s", got, before)
	}

	root = copyFixture(t, "kops-node")
	mustApply(t, Options{Root: root, Phase: PhaseKubeletExternal, HostnameLabel: "ip-10-0-1-10"})
	if got := readFile(t, root, "/etc/sysconfig/kubelet"); strings.Count(got, "--node-labels=node-role.kubernetes.io/node=,kubernetes.io/hostname=ip-10-0-1-10 ") != 1 || strings.Count(got, "--node-labels") != 1 {
		t.Errorf("/etc/sysconfig/kubelet:\n%s", got)
	}
}

// TestStateDirMadePrivate: a state directory an earlier version left 0755
// is made 0700 by the next run that writes to it.
func TestStateDirMadePrivate(t *testing.T) {
	fx := fixtures[0]
	root := copyFixture(t, fx.name)
	dir := filepath.Join(root, filepath.FromSlash(StateDir))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	phase := PhaseKubeletExternal
	if fx.controlPlane {
		phase = PhaseControlPlaneLeaderMigration
	}
	mustApply(t, Options{Root: root, Phase: phase, LeaderMigrationConfig: lmConfig(t), ProviderID: fx.providerID, HostnameOverride: fx.hostname})
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("%s: %v, %v; want mode 0700", StateDir, fi.Mode().Perm(), err)
	}
}
