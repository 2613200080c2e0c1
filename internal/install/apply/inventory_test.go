package apply

import (
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestInventoryID: kubectl's ApplySet ID of a ConfigMap parent, so that
// kubectl recognises the parent (and, seeing another tooling, leaves it).
func TestInventoryID(t *testing.T) {
	sum := sha256.Sum256([]byte("awsccmctl-install.kube-system.ConfigMap."))
	want := "applyset-" + base64.RawURLEncoding.EncodeToString(sum[:]) + "-v1"
	if got := InventoryID("kube-system"); got != want {
		t.Errorf("InventoryID = %q, want %q", got, want)
	}
	if InventoryID("a") == InventoryID("b") {
		t.Error("two namespaces share an ID")
	}
}

func TestInventoryParentRoundTrip(t *testing.T) {
	inv := &Inventory{ID: InventoryID("ccm"), Namespace: "ccm", Members: []Member{
		{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "system:cloud-controller-manager", Adopted: true},
		{APIVersion: "v1", Kind: "ServiceAccount", Namespace: "ccm", Name: "cloud-controller-manager"},
		{APIVersion: "apps/v1", Kind: "DaemonSet", Namespace: "ccm", Name: "aws-cloud-controller-manager"},
	}}
	u, err := inv.parent()
	if err != nil {
		t.Fatal(err)
	}
	if u.GetNamespace() != "ccm" || u.GetName() != InventoryName || u.GetLabels()[LabelApplySetID] != inv.ID ||
		!strings.HasPrefix(u.GetAnnotations()[AnnotationTooling], "awsccmctl/") ||
		u.GetAnnotations()[AnnotationContainsGroupKinds] != "ClusterRole.rbac.authorization.k8s.io,DaemonSet.apps,ServiceAccount" {
		t.Errorf("parent metadata: %v %v", u.GetLabels(), u.GetAnnotations())
	}
	back, err := inventoryFrom(u)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Members) != 3 || !back.Members[0].Adopted || back.Members[1].Adopted || back.ID != inv.ID {
		t.Errorf("read back %+v", back)
	}
	// Lookup ignores the version: an apply of another version of a kind is
	// the same object.
	ds := &unstructured.Unstructured{}
	ds.SetAPIVersion("apps/v1beta2")
	ds.SetKind("DaemonSet")
	ds.SetNamespace("ccm")
	ds.SetName("aws-cloud-controller-manager")
	if _, ok := back.Lookup(ds); !ok {
		t.Error("Lookup of the DaemonSet failed")
	}
	ds.SetNamespace("other")
	if _, ok := back.Lookup(ds); ok {
		t.Error("Lookup matched the DaemonSet of another namespace")
	}
}

// TestInventoryFromInvalid: a parent edited into nonsense is an error
// naming it, never a panic and never an empty inventory (which would make
// uninstall delete nothing while claiming success).
func TestInventoryFromInvalid(t *testing.T) {
	for _, tc := range []struct{ name, data, ns, want string }{
		{"invalid-not-json", "{", "ccm", "does not parse"},
		{"invalid-missing", "", "ccm", "does not parse"},
		{"invalid-version", `{"apiVersion":"install.awsccmctl.io/v9","kind":"Inventory","namespace":"ccm"}`, "ccm", "this awsccmctl reads install.awsccmctl.io/v1"},
		{"invalid-copied", `{"apiVersion":"install.awsccmctl.io/v1","kind":"Inventory","namespace":"other"}`, "ccm", `records namespace "other"`},
		{"invalid-member", `{"apiVersion":"install.awsccmctl.io/v1","kind":"Inventory","namespace":"ccm","objects":[{"kind":"ConfigMap"}]}`, "ccm", "inventory object 1 has no apiVersion"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": InventoryName, "namespace": tc.ns}}}
			if tc.data != "" {
				u.Object["data"] = map[string]any{InventoryKey: tc.data}
			}
			_, err := inventoryFrom(u)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "ConfigMap "+tc.ns+"/"+InventoryName) {
				t.Errorf("error %v, want one naming the ConfigMap and %q", err, tc.want)
			}
		})
	}
}
