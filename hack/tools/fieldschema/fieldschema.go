// Package fieldschema writes the field tree of configuration kinds from
// their Go types, as encoding/json (and so sigs.k8s.io/yaml, as kubeadm
// decodes) reads them: what awsccmctl install kubeadm --merge checks a
// user's file against (internal/install/kubeadmconfig/fields). The kubeadm
// tool modules hand it kubeadm's types; hack/gen-kubeadm-fields.sh runs them.
package fieldschema

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
)

// Write writes the field tree of kinds (API version → kind → a value of
// its type) to path as indented JSON.
func Write(path string, kinds map[string]map[string]any) error {
	data, err := json.MarshalIndent(schema(kinds), "", " ")
	if err != nil {
		return fmt.Errorf("encode the field tree: %w", err)
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// node is one place of a configuration: an object with its fields, a map
// of values, a list of items, or a value (a scalar, or a type that decodes
// itself, such as metav1.Duration, whose text is not walked).
type node struct {
	Kind   string           `json:"kind"`
	Fields map[string]*node `json:"fields,omitempty"`
	Elem   *node            `json:"elem,omitempty"`
}

var unmarshaler = reflect.TypeFor[json.Unmarshaler]()

// walk returns the node of t as encoding/json (and so sigs.k8s.io/yaml, as
// kubeadm decodes) reads it. open holds the types being walked: a type
// inside itself is a value, never walked twice.
func walk(t reflect.Type, open map[reflect.Type]bool) *node {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Implements(unmarshaler) || reflect.PointerTo(t).Implements(unmarshaler) || open[t] {
		return &node{Kind: "value"}
	}
	switch t.Kind() {
	case reflect.Struct:
		open[t] = true
		defer delete(open, t)
		n := &node{Kind: "object", Fields: map[string]*node{}}
		addFields(n, t, open)
		return n
	case reflect.Map:
		return &node{Kind: "map", Elem: walk(t.Elem(), open)}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return &node{Kind: "value"}
		}
		return &node{Kind: "list", Elem: walk(t.Elem(), open)}
	}
	return &node{Kind: "value"}
}

// addFields adds t's JSON fields to n, those of inline (embedded) structs
// included.
func addFields(n *node, t reflect.Type, open map[reflect.Type]bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && ft.Kind() == reflect.Struct && (name == "" || strings.Contains(opts, "inline")) {
			addFields(n, ft, open)
			continue
		}
		if name == "" {
			name = f.Name
		}
		n.Fields[name] = walk(f.Type, open)
	}
}

// schema returns the nodes of every kind, by API version and kind.
func schema(kinds map[string]map[string]any) map[string]map[string]*node {
	out := map[string]map[string]*node{}
	for apiVersion, byKind := range kinds {
		out[apiVersion] = map[string]*node{}
		for kind, v := range byKind {
			out[apiVersion][kind] = walk(reflect.TypeOf(v), map[reflect.Type]bool{})
		}
	}
	return out
}
