package kubeadmapi

import (
	"fmt"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// ArgsEditor edits one component's extraArgs in a yaml.v3 tree in place,
// in the form of the document's API version (ArgsAreList): comments,
// order and the other keys stay as the operator wrote them. install's
// kubeadm merge and the migration's node phase both edit with it.
type ArgsEditor struct {
	// component is the mapping holding the field (controllerManager,
	// apiServer, nodeRegistration, ...); key is the field's name.
	component *yaml.Node
	key       string
	list      bool
}

// EditArgs returns the editor of component's extraArgs-style field key; list
// says the field is v1beta4's list of {name, value}, else a map.
func EditArgs(component *yaml.Node, key string, list bool) *ArgsEditor {
	return &ArgsEditor{component: component, key: key, list: list}
}

// ShapeError says the field holds something other than its version's form.
type ShapeError struct {
	Key  string
	Line int
	List bool
}

func (e *ShapeError) Error() string {
	want := "a map of flag: value"
	if e.List {
		want = "a list of {name, value}"
	}
	return fmt.Sprintf("line %d: %s is not %s", e.Line, e.Key, want)
}

// field returns the field's key and value nodes, nil when absent; a value
// of the wrong shape is a *ShapeError; a null value is returned as is
// (isNull), so that filling it keeps its comments.
func (e *ArgsEditor) field() (k, v *yaml.Node, err error) {
	for i := 0; i+1 < len(e.component.Content); i += 2 {
		if e.component.Content[i].Value != e.key {
			continue
		}
		k, v = e.component.Content[i], e.component.Content[i+1]
		want := yaml.MappingNode
		if e.list {
			want = yaml.SequenceNode
		}
		switch {
		case v.Kind == want:
			return k, v, nil
		case isNull(v):
			return k, v, nil
		default:
			return k, nil, &ShapeError{Key: e.key, Line: k.Line, List: e.list}
		}
	}
	return nil, nil, nil
}

// Check returns a *ShapeError when the field holds the wrong form.
func (e *ArgsEditor) Check() error {
	_, _, err := e.field()
	return err
}

// Values returns every value given to flag name, in order.
func (e *ArgsEditor) Values(name string) []string {
	_, v, err := e.field()
	if err != nil || v == nil || isNull(v) {
		return nil
	}
	return NodeValues(v, name)
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

// Set gives flag name the value: every item naming it in a list, the key
// in a map (added where kubeadm's sorted keys stay sorted), or a new item
// or key. It reports whether the document changed.
func (e *ArgsEditor) Set(name, value string) (bool, error) {
	k, v, err := e.field()
	if err != nil {
		return false, err
	}
	kind, tag := yaml.MappingNode, "!!map"
	if e.list {
		kind, tag = yaml.SequenceNode, "!!seq"
	}
	switch {
	case v == nil:
		v = &yaml.Node{Kind: kind, Tag: tag}
		InsertKey(e.component, e.key, v)
	case isNull(v):
		// In place, and the null's line comment moves to the key: a
		// block mapping or list keeps no line comment of its own.
		v.Kind, v.Tag, v.Value = kind, tag, ""
		if k.LineComment == "" {
			k.LineComment, v.LineComment = v.LineComment, ""
		}
	}
	if len(v.Content) == 0 {
		v.Style = 0 // "{}" or "[]" becomes a block when filled
	}
	if !e.list {
		if cur := MapValue(v, name); cur != nil {
			if cur.Kind == yaml.ScalarNode && cur.Value == value {
				return false, nil
			}
			setScalar(v, name, value)
			return true, nil
		}
		InsertKey(v, name, str(value))
		return true, nil
	}
	found, changed := false, false
	for _, item := range v.Content {
		if ItemName(item) != name {
			continue
		}
		found = true
		if cur := MapValue(item, "value"); cur != nil && cur.Kind == yaml.ScalarNode && cur.Value == value {
			continue
		}
		setScalar(item, "value", value)
		changed = true
	}
	if !found {
		v.Content = append(v.Content, &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map",
			Content: []*yaml.Node{str("name"), str(name), str("value"), str(value)}})
		changed = true
	}
	return changed, nil
}

// Remove removes flag name; with item, it removes that item of the flag's
// comma-separated list instead (and the flag when the list becomes empty).
// A field left empty is removed. It reports whether the document changed.
func (e *ArgsEditor) Remove(name, item string) (bool, error) {
	_, v, err := e.field()
	if err != nil || v == nil || isNull(v) {
		return false, err
	}
	// edit returns the new value and whether the flag stays.
	edit := func(value string) (string, bool) {
		if item == "" {
			return "", false
		}
		items := strings.Split(value, ",")
		kept := slices.DeleteFunc(slices.Clone(items), func(s string) bool { return strings.TrimSpace(s) == item })
		return strings.Join(kept, ","), len(kept) > 0
	}
	changed := false
	if e.list {
		var out []*yaml.Node
		for _, it := range v.Content {
			if ItemName(it) != name {
				out = append(out, it)
				continue
			}
			cur := ItemValue(it)
			nv, keep := edit(cur)
			if keep && nv == cur {
				out = append(out, it)
				continue
			}
			changed = true
			if keep {
				setScalar(it, "value", nv)
				out = append(out, it)
			}
		}
		v.Content = out
	} else if cur := MapValue(v, name); cur != nil {
		nv, keep := edit(cur.Value)
		if !keep || nv != cur.Value {
			changed = true
			if keep {
				setScalar(v, name, nv)
			} else {
				DeleteKey(v, name)
			}
		}
	}
	if changed && len(v.Content) == 0 {
		DeleteKey(e.component, e.key)
	}
	return changed, nil
}

// InsertKey adds key to mapping m: where it keeps sorted keys sorted (as
// kubeadm writes them), else at the end.
func InsertKey(m *yaml.Node, key string, v *yaml.Node) {
	var keys []string
	for i := 0; i+1 < len(m.Content); i += 2 {
		keys = append(keys, m.Content[i].Value)
	}
	at := len(m.Content)
	if slices.IsSorted(keys) {
		i, _ := slices.BinarySearch(keys, key)
		at = 2 * i
	}
	m.Content = slices.Insert(m.Content, at, str(key), v)
}

// SetKey puts v at key of mapping m, replacing a value already there, else
// at the end.
func SetKey(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, str(key), v)
}

// DeleteKey removes key from mapping m.
func DeleteKey(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = slices.Delete(m.Content, i, i+2)
			return
		}
	}
}

// setScalar sets key of mapping m to the string value, keeping the value's
// comments, or appends the key.
func setScalar(m *yaml.Node, key, value string) {
	if v := MapValue(m, key); v != nil {
		v.Kind, v.Tag, v.Value, v.Style, v.Content = yaml.ScalarNode, "!!str", value, 0, nil
		return
	}
	m.Content = append(m.Content, str(key), str(value))
}

func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }
