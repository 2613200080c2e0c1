package apply

import (
	"context"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// FieldManager is the server-side apply field manager of every write.
const FieldManager = "awsccmctl"

// DryRun modes.
const (
	DryRunNone   = ""
	DryRunClient = "client" // read the cluster, write nothing, send nothing to apply
	DryRunServer = "server" // the apiserver runs the apply (admission, validation) and persists nothing
)

// Client applies objects to one cluster.
type Client struct {
	dynamic dynamic.Interface
	mapper  meta.RESTMapper
}

// NewClient builds a Client for cfg.
func NewClient(cfg *rest.Config) (*Client, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Client{dynamic: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))}, nil
}

// Options of Apply and Uninstall.
type Options struct {
	// DryRun is DryRunNone, DryRunClient or DryRunServer.
	DryRun string
	// Force takes over fields another field manager owns (kubectl's
	// --force-conflicts); without it a conflict is an error naming them.
	Force bool
	// Progress receives one line per object; nil discards them.
	Progress io.Writer
}

// Result says what happened to one object.
type Result struct {
	// Ref is "kind/namespace/name" (or "kind/name" for cluster objects).
	Ref string `json:"ref"`
	// Action: created, configured, unchanged, deleted, not found, skipped.
	Action string `json:"action"`
}

// Ref names an object for people.
func Ref(u *unstructured.Unstructured) string {
	kind := u.GetKind()
	if u.GetNamespace() == "" {
		return kind + "/" + u.GetName()
	}
	return kind + "/" + u.GetNamespace() + "/" + u.GetName()
}

// resource returns the dynamic client for u's kind and namespace.
func (c *Client) resource(u *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := u.GroupVersionKind()
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	switch {
	case meta.IsNoMatchError(err):
		return nil, fmt.Errorf("%s: the cluster does not serve %s: %w", Ref(u), gvk, err)
	case err != nil:
		return nil, fmt.Errorf("%s: discover the API of %s: %w", Ref(u), gvk, err)
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		if u.GetNamespace() == "" {
			return nil, fmt.Errorf("%s: a namespaced object without metadata.namespace", Ref(u))
		}
		return c.dynamic.Resource(m.Resource).Namespace(u.GetNamespace()), nil
	}
	return c.dynamic.Resource(m.Resource), nil
}

// lookup returns the client of u's resource and u's live object, nil
// when there is none.
func (c *Client) lookup(ctx context.Context, u *unstructured.Unstructured) (dynamic.ResourceInterface, *unstructured.Unstructured, error) {
	ri, err := c.resource(u)
	if err != nil {
		return nil, nil, err
	}
	live, err := ri.Get(ctx, u.GetName(), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return ri, nil, nil
	case err != nil:
		return nil, nil, fmt.Errorf("%s: read the live object: %w", Ref(u), err)
	}
	return ri, live, nil
}

// Apply applies objs in order with server-side apply and reports what each
// became. It stops at the first error, which names the object; objects
// applied before it stay applied (re-running is safe).
func (c *Client) Apply(ctx context.Context, objs []*unstructured.Unstructured, o Options) ([]Result, error) {
	var results []Result
	for _, u := range objs {
		r, err := c.applyOne(ctx, u, o)
		if err != nil {
			return results, err
		}
		results = append(results, r)
		progress(o, r)
	}
	return results, nil
}

func (c *Client) applyOne(ctx context.Context, u *unstructured.Unstructured, o Options) (Result, error) {
	ref := Ref(u)
	ri, live, err := c.lookup(ctx, u)
	if err != nil {
		return Result{}, err
	}
	if o.DryRun == DryRunClient {
		if live == nil {
			return Result{Ref: ref, Action: "created"}, nil
		}
		return Result{Ref: ref, Action: "exists (--dry-run=server shows whether it would change)"}, nil
	}
	opts := metav1.ApplyOptions{FieldManager: FieldManager, Force: o.Force}
	if o.DryRun == DryRunServer {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	applied, err := ri.Apply(ctx, u.GetName(), u, opts)
	if err != nil {
		if apierrors.IsConflict(err) {
			return Result{}, fmt.Errorf("%s: fields are owned by another manager (someone changed them with kubectl or another tool): %w; re-run with --force-conflicts to take them over", ref, err)
		}
		return Result{}, fmt.Errorf("%s: apply: %w", ref, err)
	}
	switch {
	case live == nil:
		return Result{Ref: ref, Action: "created"}, nil
	case equality.Semantic.DeepEqual(comparable(live), comparable(applied)):
		return Result{Ref: ref, Action: "unchanged"}, nil
	default:
		return Result{Ref: ref, Action: "configured"}, nil
	}
}

// serverAnnotations are annotations the apiserver or a controller writes,
// not the install: the DaemonSet strategy's copy of the generation, the
// Deployment controller's revision.
var serverAnnotations = []string{"deprecated.daemonset.template.generation", "deployment.kubernetes.io/revision"}

// comparable strips what the server changes on every write, and what
// controllers write, so that two versions of an object compare (and diff)
// by the content the install gives them.
func comparable(u *unstructured.Unstructured) map[string]any {
	c := u.DeepCopy()
	for _, f := range [][]string{
		{"metadata", "managedFields"}, {"metadata", "resourceVersion"}, {"metadata", "generation"},
		{"metadata", "uid"}, {"metadata", "creationTimestamp"}, {"status"},
	} {
		unstructured.RemoveNestedField(c.Object, f...)
	}
	if a := c.GetAnnotations(); a != nil {
		for _, k := range serverAnnotations {
			delete(a, k)
		}
		if len(a) == 0 {
			unstructured.RemoveNestedField(c.Object, "metadata", "annotations")
		} else {
			c.SetAnnotations(a)
		}
	}
	return c.Object
}

func progress(o Options, r Result) {
	if o.Progress == nil {
		return
	}
	suffix := ""
	switch o.DryRun {
	case DryRunClient:
		suffix = " (dry run: client)"
	case DryRunServer:
		suffix = " (dry run: server)"
	}
	fmt.Fprintf(o.Progress, "%s %s%s\n", r.Ref, r.Action, suffix)
}
