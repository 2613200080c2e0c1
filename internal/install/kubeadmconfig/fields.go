package kubeadmconfig

import (
	"embed"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// fieldFiles are the field trees of kubeadm's configuration kinds, written
// from kubeadm's own Go types by hack/gen-kubeadm-fields.sh (k8s.io/kubernetes
// cannot be imported here); hack/verify.sh fails when they are stale.
//
//go:embed fields/*.json
var fieldFiles embed.FS

// fieldNode is one place of a configuration: an object with its fields, a
// map of values, a list of items, or a value that is not walked (a scalar,
// or a type that decodes itself such as a duration).
type fieldNode struct {
	Kind   string                `json:"kind"`
	Fields map[string]*fieldNode `json:"fields"`
	Elem   *fieldNode            `json:"elem"`
}

const (
	nodeObject = "object"
	nodeMap    = "map"
	nodeList   = "list"
)

// fieldTrees are the trees by API version and kind; read once, never
// changed.
var fieldTrees = loadFieldTrees()

func loadFieldTrees() map[string]map[string]*fieldNode {
	trees := map[string]map[string]*fieldNode{}
	files, err := fieldFiles.ReadDir("fields")
	if err != nil {
		panic(err)
	}
	for _, f := range files {
		data, err := fieldFiles.ReadFile(path.Join("fields", f.Name()))
		if err != nil {
			panic(err)
		}
		var byVersion map[string]map[string]*fieldNode
		if err := json.Unmarshal(data, &byVersion); err != nil {
			panic(fmt.Sprintf("fields/%s: %v", f.Name(), err))
		}
		for v, kinds := range byVersion {
			trees[v] = kinds
		}
	}
	return trees
}

// checkFields decodes document i strictly against kubeadm's types when its
// kind is one kubeadm reads (kubeadm's own kinds, KubeletConfiguration,
// KubeProxyConfiguration): every field those types do not have (in any
// case: names are case-sensitive), every key given twice and every object
// given as something else is an error naming the document and the field's
// path. kubeadm refuses such a file; --merge would pass it on. Documents of
// other kinds are not checked.
func checkFields(d *document, i int) []error {
	tree := fieldTrees[d.apiVersion][d.kind]
	if tree == nil || d.node == nil {
		return nil
	}
	var errs []error
	walkFields(d.node.Content[0], tree, "", d.apiVersion, func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", d.name(i), fmt.Sprintf(format, args...)))
	})
	return errs
}

// walkFields checks n against want; at is n's path ("" for the document).
func walkFields(n *yaml.Node, want *fieldNode, at, apiVersion string, bad func(format string, args ...any)) {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	switch want.Kind {
	case nodeObject:
		if n.Kind != yaml.MappingNode {
			bad("%s: %s wants an object (field: value lines) here, not %s", where(at), apiVersion, shape(n))
			return
		}
		seen := map[string]bool{}
		eachPair(n, func(key string, value *yaml.Node) {
			field := join(at, key)
			f, known := want.Fields[key]
			switch {
			case seen[key]:
				bad("field %q given twice", field)
			case !known:
				bad("unknown field %q%s", field, caseHint(key, want))
			default:
				walkFields(value, f, field, apiVersion, bad)
			}
			seen[key] = true
		})
	case nodeMap:
		if n.Kind != yaml.MappingNode {
			bad("%s: %s wants a map (key: value lines) here, not %s", where(at), apiVersion, shape(n))
			return
		}
		seen := map[string]bool{}
		eachPair(n, func(key string, value *yaml.Node) {
			if seen[key] {
				bad("key %q given twice", join(at, key))
			}
			seen[key] = true
			walkFields(value, want.Elem, join(at, key), apiVersion, bad)
		})
	case nodeList:
		if n.Kind != yaml.SequenceNode {
			bad("%s: %s wants a list (- item lines) here, not %s", where(at), apiVersion, shape(n))
			return
		}
		for j, item := range n.Content {
			walkFields(item, want.Elem, fmt.Sprintf("%s[%d]", at, j), apiVersion, bad)
		}
	}
}

// eachPair calls f for every key of mapping n, YAML merge keys (<<)
// resolved into the mapping they merge.
func eachPair(n *yaml.Node, f func(key string, value *yaml.Node)) {
	for j := 0; j+1 < len(n.Content); j += 2 {
		k, v := n.Content[j], n.Content[j+1]
		if k.Tag == "!!merge" || k.Value == "<<" {
			for v.Kind == yaml.AliasNode && v.Alias != nil {
				v = v.Alias
			}
			merged := []*yaml.Node{v}
			if v.Kind == yaml.SequenceNode {
				merged = v.Content
			}
			for _, m := range merged {
				for m.Kind == yaml.AliasNode && m.Alias != nil {
					m = m.Alias
				}
				if m.Kind == yaml.MappingNode {
					eachPair(m, f)
				}
			}
			continue
		}
		f(k.Value, v)
	}
}

// caseHint names the field key differs from only in case.
func caseHint(key string, want *fieldNode) string {
	for name := range want.Fields {
		if name != key && strings.EqualFold(name, key) {
			return fmt.Sprintf(" (field names are case-sensitive: %s)", name)
		}
	}
	return ""
}

func join(at, key string) string {
	if at == "" {
		return key
	}
	return at + "." + key
}

func where(at string) string {
	if at == "" {
		return "the document"
	}
	return at
}

func shape(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "an object"
	default:
		// A scalar (or anything else) is named by its value.
	}
	return fmt.Sprintf("%q", n.Value)
}
