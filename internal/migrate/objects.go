package migrate

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/install/apply"
	"github.com/awsccmctl/awsccmctl/internal/leadermigration"
)

// ccmObjects renders the CCM exactly as `install` does (same renderer, same
// values), with the leader-migration file and flags when leaderMigration.
func ccmObjects(p *MigrationPlan, leaderMigration bool) ([]*unstructured.Unstructured, error) {
	v, err := p.Values()
	if err != nil {
		return nil, err
	}
	if leaderMigration {
		if v.LeaderMigrationConfig, err = leadermigration.Render(leadermigration.ComponentCCM); err != nil {
			return nil, err
		}
	}
	stream, err := install.Render(v)
	if err != nil {
		return nil, fmt.Errorf("render the CCM: %w", err)
	}
	return apply.Decode(stream)
}

// migrationRBAC grants what the bootstrap roles do not: get and update on
// the migration lease for kube-controller-manager's identity and the CCM's
// ServiceAccount (both already may create Leases), and get and update on the
// reports ConfigMap for every node (the ConfigMap is created here: nodes may
// not create ConfigMaps), and get on kube-controller-manager's two Leases for
// every node.
func migrationRBAC(p *MigrationPlan) ([]*unstructured.Unstructured, error) {
	labels := map[string]string{LabelManagedBy: ManagedBy}
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: Namespace, Labels: labels}
	}
	v, err := p.Values()
	if err != nil {
		return nil, err
	}
	v.Default()
	kcm := p.Spec.Cluster.KCMIdentity
	if kcm == "" {
		kcm = DefaultKCMIdentity
	}
	var objs []runtime.Object
	if p.Spec.Mode != ModeRestart {
		objs = append(objs, &rbacv1.Role{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
			ObjectMeta: meta(MigrationRoleName),
			Rules: []rbacv1.PolicyRule{{
				APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"},
				ResourceNames: []string{leadermigration.LeaseName}, Verbs: []string{"get", "update"},
			}},
		},
			&rbacv1.RoleBinding{
				TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
				ObjectMeta: meta(MigrationRoleName),
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: MigrationRoleName},
				Subjects: []rbacv1.Subject{
					{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: kcm},
					{Kind: rbacv1.ServiceAccountKind, Name: install.ServiceAccountName, Namespace: v.Namespace},
				},
			})
	}
	for _, name := range ReportConfigMaps() {
		objs = append(objs, &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: meta(name),
		})
	}
	objs = append(objs,
		&rbacv1.Role{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
			ObjectMeta: meta(ReportsRoleName),
			Rules: []rbacv1.PolicyRule{{
				APIGroups: []string{""}, Resources: []string{"configmaps"},
				ResourceNames: ReportConfigMaps(), Verbs: []string{"get", "patch"},
			}, {
				// Read only: a node tells which Leases its
				// kube-controller-manager holds before it restarts it.
				APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"},
				ResourceNames: releasable, Verbs: []string{"get"},
			}},
		},
		&rbacv1.RoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
			ObjectMeta: meta(ReportsRoleName),
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: ReportsRoleName},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: NodesGroup}},
		},
	)
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{Object: m}
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		out = append(out, u)
	}
	return out, nil
}
