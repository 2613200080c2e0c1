package apply

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Unserved returns the kinds of objs the cluster does not serve (a CRD not
// installed), each once, in the order of objs, so that a caller can refuse
// before anything is written.
func (c *Client) Unserved(objs []*unstructured.Unstructured) ([]schema.GroupVersionKind, error) {
	var out []schema.GroupVersionKind
	for _, u := range objs {
		gvk := u.GroupVersionKind()
		if slices.Contains(out, gvk) {
			continue
		}
		_, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		switch {
		case meta.IsNoMatchError(err):
			out = append(out, gvk)
		case err != nil:
			return nil, fmt.Errorf("%s: discover the API of %s: %w", Ref(u), gvk, err)
		}
	}
	return out, nil
}
