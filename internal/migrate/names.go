package migrate

import (
	"time"

	"github.com/awsccmctl/awsccmctl/internal/leaderlease"
)

// Step names: stable, used by --until, rollback --to, the journal and
// scripts. Node-group steps are StepKubeletExternal + "/" + group name.
const (
	StepVerifyCluster      = "verify-cluster"
	StepMigrationRBAC      = "migration-rbac"
	StepKCMLeaderMigration = "kcm-leader-migration"
	StepInstallCCM         = "install-ccm"
	StepCutOver            = "cut-over"
	StepKCMExternal        = "kcm-external"
	StepKubeadmConfig      = "kubeadm-config"
	StepFinalize           = "finalize"
	StepKubeletExternal    = "kubelet-external"
)

// stepOrder is the order of the step kinds in each mode.
var stepOrder = map[Mode][]string{
	// finalize comes last: it removes the reports ConfigMap the kubelet
	// steps' node reports go to.
	ModeLeaderMigration: {StepVerifyCluster, StepMigrationRBAC, StepKCMLeaderMigration, StepInstallCCM, StepCutOver, StepKubeadmConfig, StepKubeletExternal, StepFinalize},
	// Restart mode needs no migration lease, but its node steps report
	// too: migration-rbac creates only the reports ConfigMap and its Role
	// there, and finalize removes them.
	ModeRestart: {StepVerifyCluster, StepMigrationRBAC, StepKCMExternal, StepInstallCCM, StepKubeadmConfig, StepKubeletExternal, StepFinalize},
}

// Node phases (internal/migrate/nodephase): the names scripts call.
const (
	PhaseControlPlaneLeaderMigration = "control-plane-leader-migration"
	PhaseControlPlaneExternal        = "control-plane-external"
	PhaseKubeletExternal             = "kubelet-external"
	PhaseRestore                     = "restore"
	// ScopeControlPlane and ScopeKubelet select what a restore puts back.
	ScopeControlPlane = "control-plane"
	ScopeKubelet      = "kubelet"
)

// Objects the migration keeps in the cluster. Their names are a contract
// between apply, status, resume, rollback and the node step.
const (
	// Namespace holds the journal, the reports and the migration RBAC.
	Namespace = "kube-system"
	// JournalName is the ConfigMap holding the journal.
	JournalName = "awsccmctl-migration"
	// JournalKey is the journal's key in it.
	JournalKey = "journal.json"
	// BaselineName is the first ConfigMap of the guards' baseline; more
	// are BaselineName-1, -2, ... (baselinePieceName).
	BaselineName = "awsccmctl-migration-baseline"
	// ReportsName is the ConfigMap the node step writes its reports to,
	// one key per node; nodes may write it (migration-rbac grants
	// system:nodes get and patch on it alone), never the journal.
	ReportsName = "awsccmctl-migration-reports"
	// ReportShards is how many ConfigMaps hold the reports: ReportsName
	// and ReportsName-1 ... -7 (reportShardName). A kubelet-external report
	// takes about 520 bytes and a ConfigMap's data at most 1 MiB, so one
	// ConfigMap held about 2,000 nodes' reports; of eight, the fullest
	// holds 329 KB at 5,000 nodes and 790 KB at 12,000
	// (TestReportShardsHoldLargeClusters). Each node writes only its own
	// (reportShardOf).
	ReportShards = 8
	// MigrationRoleName names the Role and RoleBinding on the migration
	// lease for kube-controller-manager and the CCM.
	MigrationRoleName = "awsccmctl:leader-migration"
	// ReportsRoleName names the Role and RoleBinding that let nodes write
	// their reports.
	ReportsRoleName = "awsccmctl:migration-reports"
	// NodesGroup is the group of every kubelet's credentials.
	NodesGroup = "system:nodes"
	// DefaultKCMIdentity is the user kube-controller-manager authenticates as
	// on kubeadm and kops control planes.
	DefaultKCMIdentity = "system:kube-controller-manager"
	// LabelManagedBy marks the objects the migration creates.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "awsccmctl-migrate"
)

// Kubernetes and leader-election facts the plan relies on.
const (
	// MaxInTreeMinor is the last minor whose kube-controller-manager has the
	// in-tree AWS provider.
	MaxInTreeMinor = 26
	// MinLeaderMigrationMinor: leader migration's v1 configuration needs
	// kube-controller-manager 1.24 or later.
	MinLeaderMigrationMinor = 24
	// DefaultLeaseDuration and DefaultRetryPeriod are both managers'
	// leader-election defaults (the duration is leaderlease's, the one
	// home of what a Lease says).
	DefaultLeaseDuration = leaderlease.DefaultDuration
	DefaultRetryPeriod   = 2 * time.Second
	// HolderStaleAfter: a run whose heartbeat is older no longer holds the
	// journal; resume takes it over.
	HolderStaleAfter = 45 * time.Second
	// heartbeatEvery is how often a run renews its hold on the journal.
	heartbeatEvery = 10 * time.Second
	// guardEvery is how often the guards look while a gate waits.
	guardEvery = 5 * time.Second
)

// Labels of the CCM's workload, and where the Pods serve /healthz.
const (
	labelControlPlane  = "node-role.kubernetes.io/control-plane"
	taintUninitialized = "node.cloudprovider.kubernetes.io/uninitialized"
)
