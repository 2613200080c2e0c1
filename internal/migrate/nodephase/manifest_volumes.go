package nodephase

import (
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// This file adds and removes the leader-migration file's hostPath volume
// and volume mount, written as kubeadm and kops write theirs (keys in
// alphabetical order, the document's indentation and sequence style).

func spaces(n int) string { return strings.Repeat(" ", max(n, 0)) }

// scalarValue returns the value of key in mapping n when it is a scalar, and
// "" when it is absent or not a scalar.
func scalarValue(n *yaml.Node, key string) string {
	_, v := lookup(n, key)
	if v == nil || v.Kind != yaml.ScalarNode {
		return ""
	}
	return v.Value
}

// blockSeq checks that v, the value of key, is a block sequence of
// mappings, and returns where its items' dashes and keys are.
func (m *manifest) blockSeq(k, v *yaml.Node) (dashCol, keyCol int, err error) {
	if v.Kind != yaml.SequenceNode || v.Style&yaml.FlowStyle != 0 || len(v.Content) == 0 {
		return 0, 0, fmt.Errorf("line %d: %s is not a block sequence; write it as one (\"- name: ...\" items) and run again", k.Line, k.Value)
	}
	first := v.Content[0]
	if first.Kind != yaml.MappingNode || first.Style&yaml.FlowStyle != 0 {
		return 0, 0, fmt.Errorf("line %d: the items of %s are not block mappings", first.Line, k.Value)
	}
	dashCol, _, err = m.item(first)
	return dashCol, first.Column - 1, err
}

// newSeqCols returns where a new sequence under a key at keyCol of mapping
// n puts its dashes and its items' keys: as n's other block sequences do,
// else as the document's.
func (m *manifest) newSeqCols(n *yaml.Node, keyCol int) (dashCol, itemCol int) {
	offset := m.step
	if m.compact {
		offset = 0
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if v.Kind != yaml.SequenceNode || v.Style&yaml.FlowStyle != 0 || len(v.Content) == 0 {
			continue
		}
		if dash, _, err := m.item(v.Content[0]); err == nil {
			offset = dash - (k.Column - 1)
			break
		}
	}
	return keyCol + offset, keyCol + offset + 2
}

// itemLines renders a sequence item whose first line is first: the dash at
// dashCol, the item's keys at itemCol.
func itemLines(dashCol, itemCol int, first string, rest ...string) []string {
	lines := []string{spaces(dashCol) + "-" + spaces(itemCol-dashCol-1) + first}
	for _, r := range rest {
		lines = append(lines, spaces(itemCol)+r)
	}
	return lines
}

// addMount adds the read-only mount of the leader-migration file to the
// container, unless it is there already.
func (m *manifest) addMount(c *podContainer) error {
	p, name := LeaderMigrationConfigPath, LeaderMigrationVolumeName
	k, v := lookup(c.node, "volumeMounts")
	if v != nil {
		dashCol, itemCol, err := m.blockSeq(k, v)
		if err != nil {
			return err
		}
		for _, it := range v.Content {
			n := scalarValue(it, "name")
			mp := scalarValue(it, "mountPath")
			switch {
			case n == name && mp == p:
				return nil
			case n == name || mp == p:
				return fmt.Errorf("line %d: a volume mount %s at %s is in the way of the leader-migration file's mount %s at %s; remove it and run again", it.Line, n, mp, name, p)
			}
		}
		m.insertLines(m.blockEnd(k.Line, k.Column-1, true),
			itemLines(dashCol, itemCol, "mountPath: "+p, "name: "+name, "readOnly: true")...)
	} else {
		dash, _, err := m.item(c.node)
		if err != nil {
			return err
		}
		keyCol := c.node.Column - 1
		dashCol, itemCol := m.newSeqCols(c.node, keyCol)
		lines := append([]string{spaces(keyCol) + "volumeMounts:"},
			itemLines(dashCol, itemCol, "mountPath: "+p, "name: "+name, "readOnly: true")...)
		m.insertLines(m.blockEnd(c.node.Line, dash, false), lines...)
	}
	want := m.wantContainer(c)
	mounts, _ := want["volumeMounts"].([]any)
	want["volumeMounts"] = append(mounts, map[string]any{"mountPath": p, "name": name, "readOnly": true})
	return nil
}

// addVolume adds the leader-migration file's hostPath volume to the Pod,
// unless it is there already.
func (m *manifest) addVolume(spec *yaml.Node) error {
	p, name := LeaderMigrationConfigPath, LeaderMigrationVolumeName
	k, v := lookup(spec, "volumes")
	nested := m.step
	if v != nil {
		dashCol, itemCol, err := m.blockSeq(k, v)
		if err != nil {
			return err
		}
		for _, it := range v.Content {
			n := scalarValue(it, "name")
			hk, hp := lookup(it, "hostPath")
			path := scalarValue(hp, "path")
			switch {
			case n == name && path == p:
				return nil
			case n == name:
				return fmt.Errorf("line %d: a volume named %s is in the way of the leader-migration file's volume; remove it and run again", it.Line, n)
			}
			if hp != nil && hp.Kind == yaml.MappingNode && len(hp.Content) > 0 && hp.Line > hk.Line {
				nested = hp.Column - hk.Column
			}
		}
		m.insertLines(m.blockEnd(k.Line, k.Column-1, true),
			itemLines(dashCol, itemCol, "hostPath:", spaces(nested)+"path: "+p, spaces(nested)+"type: File", "name: "+name)...)
	} else {
		sk, _ := lookup(m.root, "spec")
		keyCol := spec.Content[0].Column - 1
		dashCol, itemCol := m.newSeqCols(spec, keyCol)
		lines := append([]string{spaces(keyCol) + "volumes:"},
			itemLines(dashCol, itemCol, "hostPath:", spaces(nested)+"path: "+p, spaces(nested)+"type: File", "name: "+name)...)
		m.insertLines(m.blockEnd(sk.Line, sk.Column-1, false), lines...)
	}
	spec2 := m.want["spec"].(map[string]any)
	vols, _ := spec2["volumes"].([]any)
	spec2["volumes"] = append(vols, map[string]any{"hostPath": map[string]any{"path": p, "type": "File"}, "name": name})
	return nil
}

// removeNamed removes the items named LeaderMigrationVolumeName from the
// sequence under key in mapping n (and the key when no item is left); want
// is n's intended JSON.
func (m *manifest) removeNamed(n *yaml.Node, key string, want map[string]any) error {
	k, v := lookup(n, key)
	if v == nil || v.Kind != yaml.SequenceNode {
		return nil
	}
	var drop []*yaml.Node
	for _, it := range v.Content {
		if name := scalarValue(it, "name"); name == LeaderMigrationVolumeName {
			drop = append(drop, it)
		}
	}
	if len(drop) == 0 {
		return nil
	}
	if v.Style&yaml.FlowStyle != 0 {
		return fmt.Errorf("line %d: %s is a flow-style sequence; write it as a block sequence and run again", k.Line, key)
	}
	if len(drop) == len(v.Content) {
		m.removeKey(k, m.blockEnd(k.Line, k.Column-1, true))
	} else {
		for _, it := range drop {
			dash, _, err := m.item(it)
			if err != nil {
				return err
			}
			m.edits = append(m.edits, textEdit{start: m.lineStarts[it.Line-1], end: m.blockEnd(it.Line, dash, false)})
		}
	}
	list, _ := want[key].([]any)
	var kept []any
	for _, it := range list {
		if e, ok := it.(map[string]any); !ok || e["name"] != LeaderMigrationVolumeName {
			kept = append(kept, it)
		}
	}
	want[key] = kept
	return nil
}
