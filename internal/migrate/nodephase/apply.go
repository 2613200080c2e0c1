package nodephase

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/awsccmctl/awsccmctl/internal/leadermigration"
	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
	"github.com/awsccmctl/awsccmctl/pkg/providerid"
)

// Options configure one run of a phase on one node.
type Options struct {
	// Root is the node's file system root: "/" on the node itself.
	Root  string
	Phase Phase
	// DryRun computes the result and the diffs and writes nothing.
	DryRun bool
	// LeaderMigrationConfig is the LeaderMigrationConfiguration that
	// PhaseControlPlaneLeaderMigration writes to LeaderMigrationConfigPath
	// (leadermigration.Render(leadermigration.ComponentKCM)); required by
	// that phase.
	LeaderMigrationConfig []byte
	// ProviderID (aws:///<zone>/<instance-id>) and HostnameOverride, when
	// set, are added to the kubelet's flags by PhaseKubeletExternal. A
	// different value already set (a flag, or providerID in the kubelet
	// configuration file) is an error: the Node's identity must not change.
	ProviderID       string
	HostnameOverride string
	// HostnameLabel, when set, is the Node's kubernetes.io/hostname label
	// to keep: PhaseKubeletExternal adds it to --node-labels (merged into
	// the last --node-labels there is), since the kubelet labels its Node
	// with its host name, --hostname-override included, at each start. A
	// different value already in --node-labels is an error.
	HostnameLabel string
	// Scope limits PhaseRestore to the control-plane or the kubelet files;
	// ScopeAll (the default) restores everything.
	Scope Scope
}

// Validate returns every problem with the options at once.
func (o Options) Validate() error {
	var problems []string
	if o.Root == "" {
		problems = append(problems, "root: empty (use \"/\" on the node)")
	}
	if _, err := ParsePhase(string(o.Phase)); err != nil {
		problems = append(problems, err.Error())
	}
	if o.Phase == PhaseControlPlaneLeaderMigration {
		if len(o.LeaderMigrationConfig) == 0 {
			problems = append(problems, "phase "+string(o.Phase)+" needs the LeaderMigrationConfiguration for kube-controller-manager")
		} else if err := leadermigration.Validate(o.LeaderMigrationConfig, leadermigration.ComponentKCM); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if o.ProviderID != "" {
		if id, err := providerid.Parse(o.ProviderID); err != nil {
			problems = append(problems, fmt.Sprintf("provider ID %q: %v", o.ProviderID, err))
		} else if id.Zone == "" || id.String() != o.ProviderID {
			problems = append(problems, fmt.Sprintf("provider ID %q: want the canonical aws:///<zone>/<instance-id>", o.ProviderID))
		}
	}
	if o.HostnameLabel != "" {
		for _, m := range validation.IsValidLabelValue(o.HostnameLabel) {
			problems = append(problems, fmt.Sprintf("hostname label %q: %s", o.HostnameLabel, m))
		}
	}
	if o.HostnameOverride != "" {
		for _, m := range validation.IsDNS1123Subdomain(o.HostnameOverride) {
			problems = append(problems, fmt.Sprintf("hostname override %q: %s", o.HostnameOverride, m))
		}
	}
	switch {
	case o.Scope != ScopeAll && o.Scope != ScopeControlPlane && o.Scope != ScopeKubelet:
		problems = append(problems, fmt.Sprintf("scope %q: want %q, %q or empty (everything)", o.Scope, ScopeControlPlane, ScopeKubelet))
	case o.Scope != ScopeAll && o.Phase != PhaseRestore:
		problems = append(problems, fmt.Sprintf("scope %q applies to phase %s only", o.Scope, PhaseRestore))
	}
	if len(problems) > 0 {
		return fmt.Errorf("migrate-from-intree node: %s", strings.Join(problems, "; "))
	}
	return nil
}

// Result is what a phase did, or would do in a dry run. It is the JSON of
// `-o json`; SchemaVersion versions it.
type Result struct {
	SchemaVersion string `json:"schemaVersion"`
	Phase         Phase  `json:"phase"`
	Root          string `json:"root"`
	DryRun        bool   `json:"dryRun"`
	Layout        Layout `json:"layout"`
	// Changed is true when at least one file was (or would be) changed.
	Changed bool         `json:"changed"`
	Files   []FileResult `json:"files"`
}

// FileResult is one file's change.
type FileResult struct {
	// Path is the node path.
	Path   string `json:"path"`
	Action Action `json:"action"`
	// Backup is where the original is kept, when the file had one.
	Backup string `json:"backup,omitempty"`
	// Diff is the unified diff of the change; "" when unchanged.
	Diff string `json:"diff,omitempty"`
}

// ChangedPaths returns the node paths of the files changed.
func (r *Result) ChangedPaths() []string {
	out := []string{}
	for _, f := range r.Files {
		if f.Action != ActionUnchanged {
			out = append(out, f.Path)
		}
	}
	return out
}

// Apply runs o.Phase on the node under o.Root. It computes every file's
// target from its original, refuses (writing nothing) when a file was
// edited by someone else or cannot be edited, and otherwise writes the
// changes: a backup of each file before its first edit, then atomic writes.
func Apply(o Options) (*Result, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	fsys := nodeFS{root: o.Root}
	p, err := makePlan(fsys, o)
	if err != nil {
		return nil, err
	}
	if o.DryRun || !p.changes() {
		return p.result(), nil
	}
	created := fsys.missingDirs(StateDir)
	if err := fsys.mkdirPrivate(StateDir); err != nil {
		return nil, err
	}
	unlock, err := lockDir(fsys.host(StateDir))
	if err != nil {
		return nil, err
	}
	defer unlock()
	// Plan again under the lock: another run may have finished meanwhile.
	if p, err = makePlan(fsys, o); err != nil {
		return nil, err
	}
	if !p.changes() {
		for i := len(created) - 1; i >= 0; i-- {
			_, _ = fsys.removeEmptyDir(created[i])
		}
		return p.result(), nil
	}
	if p.st == nil {
		p.st = &state{APIVersion: stateAPIVersion, CreatedDirs: created}
	}
	if err := p.commit(fsys); err != nil {
		return nil, fmt.Errorf("phase %s: %w (files written so far are recorded in %s; run the phase again or restore)", o.Phase, err, StateFile)
	}
	return p.result(), nil
}

// plan is a phase's computed change.
type plan struct {
	o      Options
	st     *state // nil when the tool has no state on the node yet
	layout Layout
	files  []*planned
}

// planned is one file's change.
type planned struct {
	path  string
	scope Scope
	entry *fileState // nil when the tool never changed the file
	cur   fileContent
	orig  fileContent
	// target is what the phase makes of the file; accept lists the
	// outputs of every phase from the original; acceptAbsent says a phase
	// may remove the file.
	target       fileContent
	accept       [][]byte
	acceptAbsent bool
	// report keeps the file in the result when it is unchanged.
	report bool
	// variables are the environment variables edited (kubelet files).
	variables []string
	action    Action
}

func makePlan(fsys nodeFS, o Options) (*plan, error) {
	st, err := loadState(fsys)
	if err != nil {
		return nil, err
	}
	node, err := nodefiles.Read(o.Root)
	if err != nil {
		return nil, err
	}
	p := &plan{o: o, st: st, layout: detectLayout(node)}
	switch o.Phase {
	case PhaseControlPlaneLeaderMigration, PhaseControlPlaneExternal:
		err = p.controlPlane(fsys, node)
	case PhaseKubeletExternal:
		err = p.kubelet(fsys, node)
	case PhaseRestore:
		err = p.restore(fsys)
	}
	if err != nil {
		return nil, fmt.Errorf("phase %s: %w", o.Phase, err)
	}
	if err := p.finish(); err != nil {
		return nil, fmt.Errorf("phase %s: %w", o.Phase, err)
	}
	return p, nil
}

// add plans node path file: it reads the current content and the original.
func (p *plan) add(fsys nodeFS, file string, scope Scope) (*planned, error) {
	for _, f := range p.files {
		if f.path == file {
			return f, nil
		}
	}
	f := &planned{path: file, scope: scope}
	var err error
	if f.cur, err = fsys.read(file); err != nil {
		return nil, err
	}
	f.orig = f.cur
	if p.st != nil {
		if f.entry = p.st.file(file); f.entry != nil {
			if f.orig, err = fsys.original(f.entry); err != nil {
				return nil, err
			}
		}
	}
	f.target = f.orig
	p.files = append(p.files, f)
	return f, nil
}

// others plans every other file of scope the tool changed back to its
// original.
func (p *plan) others(fsys nodeFS, scope Scope) error {
	if p.st == nil {
		return nil
	}
	for _, e := range p.st.Files {
		if e.Scope == scope && !slices.ContainsFunc(p.files, func(f *planned) bool { return f.path == e.Path }) {
			if _, err := p.add(fsys, e.Path, scope); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *plan) restore(fsys nodeFS) error {
	if p.st == nil {
		return nil
	}
	for _, e := range p.st.Files {
		if p.o.Scope == ScopeAll || e.Scope == p.o.Scope {
			f, err := p.add(fsys, e.Path, e.Scope)
			if err != nil {
				return err
			}
			f.report = true
		}
	}
	return nil
}

func sameContent(a, b fileContent) bool {
	return a.exists == b.exists && bytes.Equal(a.data, b.data)
}

// finish refuses files edited by someone else and sets each action.
func (p *plan) finish() error {
	var problems []string
	for _, f := range p.files {
		if f.entry != nil && !p.ours(f) {
			problems = append(problems, foreignEdit(f))
		}
		switch {
		case sameContent(f.cur, f.target):
			f.action = ActionUnchanged
		case !f.target.exists:
			f.action = ActionRemoved
		case f.entry != nil && sameContent(f.target, f.orig):
			f.action = ActionRestored
		case !f.cur.exists:
			f.action = ActionCreated
		default:
			f.action = ActionModified
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("nothing was written: %s", strings.Join(problems, "; "))
	}
	return nil
}

// ours reports whether a managed file is as the tool left it: the
// original, something the tool wrote, or the output of a phase.
func (p *plan) ours(f *planned) bool {
	if sameContent(f.cur, f.orig) || sameContent(f.cur, f.target) {
		return true
	}
	if !f.cur.exists {
		return f.acceptAbsent
	}
	if slices.Contains(f.entry.Written, hashOf(f.cur.data)) {
		return true
	}
	return slices.ContainsFunc(f.accept, func(a []byte) bool { return bytes.Equal(a, f.cur.data) })
}

func foreignEdit(f *planned) string {
	if !f.entry.Existed {
		return fmt.Sprintf("%s was created by awsccmctl and changed since by someone else: remove it (or put back what awsccmctl wrote) and run again", f.path)
	}
	if !f.cur.exists {
		return fmt.Sprintf("%s was removed since awsccmctl edited it: copy the original back (cp -p %s %s) and run again", f.path, f.entry.Backup, f.path)
	}
	return fmt.Sprintf("%s was changed by someone else since awsccmctl edited it: it is neither the original (kept in %s) nor what a phase makes of it. "+
		"Compare them (diff %s %s); undo that change, or copy the original back (cp -p %s %s) and run again, then redo the change if it is still wanted",
		f.path, f.entry.Backup, f.entry.Backup, f.path, f.entry.Backup, f.path)
}

// changes reports whether the plan writes anything: a file, or, on restore,
// the removal of the tool's state.
func (p *plan) changes() bool {
	if p.o.Phase == PhaseRestore && p.st != nil {
		return true
	}
	return slices.ContainsFunc(p.files, func(f *planned) bool { return f.action != ActionUnchanged })
}

func (p *plan) result() *Result {
	r := &Result{SchemaVersion: SchemaVersion, Phase: p.o.Phase, Root: p.o.Root, DryRun: p.o.DryRun, Layout: p.layout, Files: []FileResult{}}
	for _, f := range p.files {
		if f.action == ActionUnchanged && !f.report {
			continue
		}
		fr := FileResult{Path: f.path, Action: f.action}
		if f.entry != nil && f.entry.Existed {
			fr.Backup = f.entry.Backup
		} else if f.cur.exists && f.action != ActionUnchanged {
			fr.Backup = backupPath(f.path)
		}
		if f.action != ActionUnchanged {
			r.Changed = true
			fr.Diff = unifiedDiff("a"+f.path, "b"+f.path, f.cur.data, f.target.data, f.cur.exists, f.target.exists)
		}
		r.Files = append(r.Files, fr)
	}
	return r
}

// detectLayout tells kubeadm's files from kops's.
func detectLayout(node *nodefiles.Node) Layout {
	for _, f := range node.Files {
		if path.Dir(f) == nodefiles.ManifestsDir {
			switch {
			case strings.HasSuffix(f, ".manifest"):
				return LayoutKops
			case strings.HasSuffix(f, ".yaml"):
				return LayoutKubeadm
			}
		}
	}
	if node.Kubelet != nil {
		switch node.Kubelet.FlagFile().Variable {
		case "DAEMON_ARGS":
			return LayoutKops
		case "KUBELET_KUBEADM_ARGS":
			return LayoutKubeadm
		}
	}
	return LayoutUnknown
}

// fileMode returns the mode to write a planned file with: its own, else its
// original's, else 0644.
func (f *planned) fileMode() fs.FileMode {
	switch {
	case f.cur.exists:
		return f.cur.mode
	case f.orig.exists:
		return f.orig.mode
	}
	return 0o644
}
