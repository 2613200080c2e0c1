package apply

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/awsccmctl/awsccmctl/internal/version"
)

// The inventory of an install is an ApplySet-style parent (kubectl's
// ApplySet, KEP-3659): a ConfigMap in the install's namespace that lists
// every object the install applied and whether the install created it or
// found it there (adopted). Uninstall deletes what it lists as created and
// nothing else. The members are listed in the parent, not labelled with
// applyset.kubernetes.io/part-of, because an adopted object is not ours to
// relabel.
//
// The names, keys and schema are read back by later versions of awsccmctl:
// they MUST NOT change.
const (
	// InventoryName is the parent ConfigMap's name.
	InventoryName = "awsccmctl-install"
	// LabelApplySetID carries the install's ID, computed as kubectl computes
	// an ApplySet's ID from its parent.
	LabelApplySetID = "applyset.kubernetes.io/id"
	// AnnotationTooling says which tool owns the parent; kubectl refuses to
	// prune with a parent whose tooling is not kubectl's.
	AnnotationTooling = "applyset.kubernetes.io/tooling"
	// AnnotationContainsGroupKinds lists the member kinds, as kubectl does.
	AnnotationContainsGroupKinds = "applyset.kubernetes.io/contains-group-kinds"
	// InventoryKey is the ConfigMap key of the InventoryDocument.
	InventoryKey = "inventory.json"
	// InventoryAPIVersion and InventoryKind version the document.
	InventoryAPIVersion = "install.awsccmctl.io/v1"
	InventoryKind       = "Inventory"

	toolingName = "awsccmctl"
)

var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// Member is one object of an install.
type Member struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	// Adopted: the object existed before the install and was not made by
	// awsccmctl; the install applied its fields over it, and uninstall
	// leaves it in place.
	Adopted bool `json:"adopted,omitempty"`
}

// Inventory is what an install applied, read from or written to its parent.
type Inventory struct {
	// ID is the install's ApplySet ID (LabelApplySetID).
	ID string `json:"id"`
	// Namespace is the namespace the install was rendered for, where the
	// parent lives.
	Namespace string `json:"namespace"`
	// Members in apply order.
	Members []Member `json:"objects"`
}

// inventoryDocument is the versioned InventoryKey document.
type inventoryDocument struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Inventory
}

// InventoryID is the ApplySet ID of the install in namespace: kubectl's
// format, base64url(sha256("<name>.<namespace>.<kind>.<group>")) between
// "applyset-" and "-v1".
func InventoryID(namespace string) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{InventoryName, namespace, "ConfigMap", ""}, ".")))
	return "applyset-" + base64.RawURLEncoding.EncodeToString(sum[:]) + "-v1"
}

// memberOf names u as an inventory member.
func memberOf(u *unstructured.Unstructured) Member {
	return Member{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
}

// key identifies a member whatever its version.
func (m Member) key() string {
	return schema.FromAPIVersionAndKind(m.APIVersion, m.Kind).GroupKind().String() + "/" + m.Namespace + "/" + m.Name
}

// Ref names the member for people, as Ref names an object.
func (m Member) Ref() string { return Ref(m.object()) }

func (m Member) object() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(m.APIVersion)
	u.SetKind(m.Kind)
	u.SetNamespace(m.Namespace)
	u.SetName(m.Name)
	return u
}

// Lookup returns the member that is u, and whether there is one.
func (inv *Inventory) Lookup(u *unstructured.Unstructured) (Member, bool) {
	k := memberOf(u).key()
	for _, m := range inv.Members {
		if m.key() == k {
			return m, true
		}
	}
	return Member{}, false
}

func (inv *Inventory) parent() (*unstructured.Unstructured, error) {
	doc, err := json.MarshalIndent(inventoryDocument{APIVersion: InventoryAPIVersion, Kind: InventoryKind, Inventory: *inv}, "", "  ")
	if err != nil {
		return nil, err
	}
	var gks []string
	for _, m := range inv.Members {
		gk := schema.FromAPIVersionAndKind(m.APIVersion, m.Kind).GroupKind().String()
		if !slices.Contains(gks, gk) {
			gks = append(gks, gk)
		}
	}
	sort.Strings(gks)
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetNamespace(inv.Namespace)
	u.SetName(InventoryName)
	u.SetLabels(map[string]string{LabelApplySetID: inv.ID, ManagedByLabel: ManagedByValue})
	u.SetAnnotations(map[string]string{
		AnnotationTooling:            toolingName + "/" + version.Get().Version,
		AnnotationContainsGroupKinds: strings.Join(gks, ","),
	})
	if err := unstructured.SetNestedStringMap(u.Object, map[string]string{InventoryKey: string(doc) + "\n"}, "data"); err != nil {
		return nil, err
	}
	return u, nil
}

// inventoryFrom reads a parent; an unreadable one is an error naming it
// and the way out, never a guess at what it held.
func inventoryFrom(cm *unstructured.Unstructured) (*Inventory, error) {
	where := "ConfigMap " + cm.GetNamespace() + "/" + cm.GetName()
	data, _, _ := unstructured.NestedString(cm.Object, "data", InventoryKey)
	var doc inventoryDocument
	if err := json.Unmarshal([]byte(data), &doc); err != nil {
		return nil, fmt.Errorf("%s: the install's inventory (%s) does not parse: %w; it was edited by hand? restore it, or delete it and re-run install apply with the install's values", where, InventoryKey, err)
	}
	if doc.APIVersion != InventoryAPIVersion || doc.Kind != InventoryKind {
		return nil, fmt.Errorf("%s: the install's inventory is %s %s, this awsccmctl reads %s %s: use the awsccmctl that installed it", where, doc.APIVersion, doc.Kind, InventoryAPIVersion, InventoryKind)
	}
	if doc.Namespace != cm.GetNamespace() {
		return nil, fmt.Errorf("%s: the inventory records namespace %q: it was copied from another namespace? delete it and re-run install apply with the install's values", where, doc.Namespace)
	}
	for i, m := range doc.Members {
		if m.APIVersion == "" || m.Kind == "" || m.Name == "" {
			return nil, fmt.Errorf("%s: inventory object %d has no apiVersion, kind or name", where, i+1)
		}
	}
	return &doc.Inventory, nil
}

func (c *Client) parents(namespace string) dynamic.ResourceInterface {
	return c.dynamic.Resource(configMaps).Namespace(namespace)
}

// ReadInventory returns the inventory of the install in namespace, nil when
// none is recorded there.
func (c *Client) ReadInventory(ctx context.Context, namespace string) (*Inventory, error) {
	cm, err := c.parents(namespace).Get(ctx, InventoryName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read the install's inventory ConfigMap %s/%s: %w", namespace, InventoryName, err)
	}
	return inventoryFrom(cm)
}

// Inventories returns the inventories of every install recorded in the
// cluster, in any namespace.
func (c *Client) Inventories(ctx context.Context) ([]*Inventory, error) {
	list, err := c.dynamic.Resource(configMaps).List(ctx, metav1.ListOptions{LabelSelector: LabelApplySetID})
	if err != nil {
		return nil, fmt.Errorf("list the installs' inventory ConfigMaps: %w", err)
	}
	var out []*Inventory
	for i := range list.Items {
		cm := &list.Items[i]
		if cm.GetName() != InventoryName || !strings.HasPrefix(cm.GetAnnotations()[AnnotationTooling], toolingName+"/") {
			continue // another tool's ApplySet
		}
		inv, err := inventoryFrom(cm)
		if err != nil {
			return nil, err
		}
		out = append(out, inv)
	}
	return out, nil
}

// PlanInventory returns the inventory of installing objs in namespace over
// prev (nil for a first install): objs in apply order, each keeping what
// prev recorded of it, then prev's members objs no longer hold (an object
// an earlier apply created stays the install's until uninstall). An object
// new to the inventory is created by the install when it does not exist
// yet, or exists and was made by awsccmctl (CreatedByAwsccmctl: an install
// made before installs kept inventories, or whose inventory was lost); any
// other existing object is adopted.
func (c *Client) PlanInventory(ctx context.Context, namespace string, prev *Inventory, objs []*unstructured.Unstructured) (*Inventory, error) {
	inv := &Inventory{ID: InventoryID(namespace), Namespace: namespace}
	if prev == nil {
		prev = &Inventory{}
	}
	seen := map[string]bool{}
	for _, u := range objs {
		m := memberOf(u)
		if old, ok := prev.Lookup(u); ok {
			m.Adopted = old.Adopted
		} else {
			_, live, err := c.lookup(ctx, u)
			if err != nil {
				return nil, err
			}
			m.Adopted = live != nil && !CreatedByAwsccmctl(live)
		}
		if !seen[m.key()] {
			seen[m.key()] = true
			inv.Members = append(inv.Members, m)
		}
	}
	for _, m := range prev.Members {
		if !seen[m.key()] {
			seen[m.key()] = true
			inv.Members = append(inv.Members, m)
		}
	}
	return inv, nil
}

// Objects returns what installing objs under inv applies: objs, with the
// managed-by label left out of those inv records as adopted (the label
// says "created by awsccmctl"; see adopt.go).
func (inv *Inventory) Objects(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(objs))
	for i, u := range objs {
		out[i] = u
		if m, ok := inv.Lookup(u); ok && m.Adopted {
			out[i] = withoutManagedBy(u)
		}
	}
	return out
}

// WriteInventory writes inv's parent with server-side apply. It is written
// before the members are applied, so that an apply cut short has recorded
// every object it may have created. A client dry run writes nothing.
func (c *Client) WriteInventory(ctx context.Context, inv *Inventory, dryRun string) error {
	if dryRun == DryRunClient {
		return nil
	}
	u, err := inv.parent()
	if err != nil {
		return err
	}
	// Force: the parent is awsccmctl's own; nobody else's edits count.
	opts := metav1.ApplyOptions{FieldManager: FieldManager, Force: true}
	if dryRun == DryRunServer {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	if _, err := c.parents(inv.Namespace).Apply(ctx, InventoryName, u, opts); err != nil {
		return fmt.Errorf("write the install's inventory ConfigMap %s/%s: %w", inv.Namespace, InventoryName, err)
	}
	return nil
}

// UninstallInventory deletes the members inv records as created, in reverse
// apply order, hands the adopted ones back (release: the fields the install
// alone owned are removed, the object stays), then deletes the parent. A
// created member that lost the managed-by label is left too (deleteOne).
func (c *Client) UninstallInventory(ctx context.Context, inv *Inventory, o Options) ([]Result, error) {
	var results []Result
	for _, m := range slices.Backward(inv.Members) {
		var (
			r   Result
			err error
		)
		if m.Adopted {
			r, err = c.release(ctx, m, o)
		} else {
			r, err = c.deleteOne(ctx, m.object(), o)
		}
		if err != nil {
			return results, err
		}
		results = append(results, r)
		progress(o, r)
	}
	if o.DryRun == DryRunClient {
		return results, nil
	}
	opts := metav1.DeleteOptions{}
	if o.DryRun == DryRunServer {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	if err := c.parents(inv.Namespace).Delete(ctx, InventoryName, opts); err != nil && !apierrors.IsNotFound(err) {
		return results, fmt.Errorf("delete the install's inventory ConfigMap %s/%s: %w", inv.Namespace, InventoryName, err)
	}
	return results, nil
}
