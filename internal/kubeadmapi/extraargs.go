package kubeadmapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	yaml "go.yaml.in/yaml/v3"
)

// Arg is one extra argument: a flag name without dashes and its value.
type Arg struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// ExtraArgs decodes extraArgs in either form: the map
// (`cloud-provider: aws`) or v1beta4's list (`- {name: cloud-provider,
// value: aws}`, names may repeat). A map is read in name order.
type ExtraArgs []Arg

// UnmarshalJSON accepts both forms.
func (e *ExtraArgs) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || bytes.Equal(b, []byte("null")):
		*e = nil
	case b[0] == '{':
		var m map[string]string
		if err := json.Unmarshal(b, &m); err != nil {
			return fmt.Errorf("extraArgs as a map (v1beta3): %w", err)
		}
		*e = make(ExtraArgs, 0, len(m))
		for k, v := range m {
			*e = append(*e, Arg{Name: k, Value: v})
		}
		sort.Slice(*e, func(i, j int) bool { return (*e)[i].Name < (*e)[j].Name })
	case b[0] == '[':
		var l []Arg
		if err := json.Unmarshal(b, &l); err != nil {
			return fmt.Errorf("extraArgs as a list of {name, value} (v1beta4): %w", err)
		}
		*e = l
	default:
		return fmt.Errorf("extraArgs: want a map (v1beta3) or a list of {name, value} (v1beta4), got %.20s", b)
	}
	return nil
}

// Values returns every value given for name, in order.
func (e ExtraArgs) Values(name string) []string {
	var out []string
	for _, a := range e {
		if a.Name == name {
			out = append(out, a.Value)
		}
	}
	return out
}

// NodeValues returns the values given to flag in an extraArgs node of a
// yaml.v3 tree, for callers that edit the document in place: a map holds
// at most one, a list may name the flag more than once.
func NodeValues(n *yaml.Node, flag string) []string {
	var vals []string
	if n == nil {
		return nil
	}
	if n.Kind == yaml.MappingNode {
		if v := MapValue(n, flag); v != nil {
			vals = append(vals, Scalar(v))
		}
		return vals
	}
	for _, item := range n.Content {
		if item.Kind == yaml.MappingNode && Scalar(MapValue(item, "name")) == flag {
			vals = append(vals, Scalar(MapValue(item, "value")))
		}
	}
	return vals
}

// ItemName returns the name of a v1beta4 list item ({name, value}), "" when
// it has none.
func ItemName(item *yaml.Node) string { return Scalar(MapValue(item, "name")) }

// ItemValue returns the value of a v1beta4 list item ({name, value}).
func ItemValue(item *yaml.Node) string { return Scalar(MapValue(item, "value")) }

// MapValue returns the value of key in mapping m, or nil (also when m is
// nil or not a mapping).
func MapValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// Scalar returns a scalar node's value, "" for nil or another kind.
func Scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}
