package apply

import (
	"context"
	"fmt"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

func ptrUID(u *unstructured.Unstructured) *types.UID {
	uid := u.GetUID()
	return &uid
}

// Diff returns a unified diff, object by object, between the live objects
// and what applying objs would make of them: the apiserver computes the
// result with a server-side dry run, so defaults, admission and field
// ownership are the real ones. Empty means nothing would change.
func (c *Client) Diff(ctx context.Context, objs []*unstructured.Unstructured) (string, error) {
	var b strings.Builder
	for _, u := range objs {
		ref := Ref(u)
		ri, live, err := c.lookup(ctx, u)
		if err != nil {
			return "", err
		}
		merged, err := ri.Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: FieldManager, DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return "", fmt.Errorf("%s: server dry run: %w", ref, err)
		}
		var before string
		if live != nil {
			if before, err = toYAML(live); err != nil {
				return "", err
			}
		}
		after, err := toYAML(merged)
		if err != nil {
			return "", err
		}
		d, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
			A: difflib.SplitLines(before), B: difflib.SplitLines(after),
			FromFile: "live/" + ref, ToFile: "applied/" + ref, Context: 3,
		})
		if err != nil {
			return "", err
		}
		b.WriteString(d)
	}
	return b.String(), nil
}

func toYAML(u *unstructured.Unstructured) (string, error) {
	b, err := yaml.Marshal(comparable(u))
	return string(b), err
}
