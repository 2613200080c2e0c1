package nodephase

import (
	"fmt"
	"slices"
)

// Phase is one step of the node-local migration.
type Phase string

// Phases. Their names are a contract: bootstrap scripts, SSM documents and
// the migration runner pass them to `migrate-from-intree node --phase`. They
// MUST NOT change.
const (
	// PhaseControlPlaneLeaderMigration adds leader migration to
	// kube-controller-manager, which keeps --cloud-provider=aws: the
	// --enable-leader-migration and --leader-migration-config flags, the
	// LeaderMigrationConfiguration file at LeaderMigrationConfigPath and a
	// read-only hostPath volume for it. kube-apiserver is left as it was
	// originally.
	PhaseControlPlaneLeaderMigration Phase = "control-plane-leader-migration"
	// PhaseControlPlaneExternal moves the control plane to the external
	// provider: kube-controller-manager gets --cloud-provider=external and
	// loses --cloud-config and leader migration (flags, volume, file);
	// kube-apiserver loses --cloud-provider, --cloud-config and the
	// PersistentVolumeLabel admission plugin.
	PhaseControlPlaneExternal Phase = "control-plane-external"
	// PhaseKubeletExternal gives the kubelet --cloud-provider=external,
	// removes --cloud-config and adds --provider-id and --hostname-override
	// when Options carry them.
	PhaseKubeletExternal Phase = "kubelet-external"
	// PhaseRestore puts every file the tool changed back byte for byte,
	// removes the files and directories it created, and then removes its
	// state directory.
	PhaseRestore Phase = "restore"
)

// Phases lists the phases in the order a migration runs them.
var Phases = []Phase{PhaseControlPlaneLeaderMigration, PhaseControlPlaneExternal, PhaseKubeletExternal, PhaseRestore}

// ParsePhase validates a --phase value.
func ParsePhase(s string) (Phase, error) {
	if p := Phase(s); slices.Contains(Phases, p) {
		return p, nil
	}
	return "", fmt.Errorf("phase %q: want one of %v", s, Phases)
}

// Node paths the tool writes. They are a contract with the migration runner,
// with operators and with a later run of the tool: they MUST NOT change.
const (
	// LeaderMigrationConfigPath is the LeaderMigrationConfiguration that
	// kube-controller-manager reads in PhaseControlPlaneLeaderMigration. The
	// static Pod mounts it at the same path.
	LeaderMigrationConfigPath = "/etc/kubernetes/awsccmctl/leader-migration.yaml"
	// LeaderMigrationVolumeName names the hostPath volume and the volume
	// mount of LeaderMigrationConfigPath in the static Pod and in
	// controllerManager.extraVolumes.
	LeaderMigrationVolumeName = "awsccmctl-leader-migration"
	// StateDir holds the backups and the state file. It is outside the
	// static Pod directory: the kubelet runs every file there whose name does
	// not start with a dot, a backup included.
	StateDir = "/var/lib/awsccmctl/migration"
	// BackupDir holds each original file under its node path:
	// BackupDir + "/etc/kubernetes/manifests/kube-controller-manager.yaml".
	BackupDir = StateDir + "/backup"
	// StateFile records the originals' hashes and modes, the files and
	// directories the tool created and the hashes of what it wrote.
	StateFile = StateDir + "/state.json"
)

// stateAPIVersion versions the state file; a change that breaks readers gets
// a new version.
const stateAPIVersion = "awsccmctl.io/nodephase/v1"

// SchemaVersion versions Result's JSON (`-o json`); a change that breaks
// readers gets a new version.
const SchemaVersion = "awsccmctl.io/migrate-node/v1"

// Action is what a phase did (or, in a dry run, would do) to one file.
type Action string

// Actions.
const (
	ActionModified  Action = "modified"
	ActionCreated   Action = "created"
	ActionRemoved   Action = "removed"
	ActionRestored  Action = "restored"
	ActionUnchanged Action = "unchanged"
)

// Layout is the tool that set the node up, as far as its files tell.
type Layout string

// Layouts.
const (
	LayoutKubeadm Layout = "kubeadm"
	LayoutKops    Layout = "kops"
	LayoutUnknown Layout = "unknown"
)

// Scope selects the files restore puts back.
type Scope string

// Scopes. The control-plane files are the kube-apiserver and
// kube-controller-manager manifests and the leader-migration file; the
// kubelet files are the environment files holding its flags.
const (
	ScopeAll          Scope = ""
	ScopeControlPlane Scope = "control-plane"
	ScopeKubelet      Scope = "kubelet"
)

// Flags and admission plugin the phases change.
const (
	flagCloudProvider         = "cloud-provider"
	flagCloudConfig           = "cloud-config"
	flagEnableLeaderMigration = "enable-leader-migration"
	flagLeaderMigrationConfig = "leader-migration-config"
	flagAdmissionPlugins      = "enable-admission-plugins"
	flagProviderID            = "provider-id"
	flagHostnameOverride      = "hostname-override"
	flagNodeLabels            = "node-labels"
	labelHostname             = "kubernetes.io/hostname"
	pluginPVL                 = "PersistentVolumeLabel"
	providerExternal          = "external"

	componentKCM       = "kube-controller-manager"
	componentAPIServer = "kube-apiserver"
)
