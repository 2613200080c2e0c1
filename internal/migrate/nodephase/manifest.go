package nodephase

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"
)

// This file edits a static Pod manifest as text. yaml.v3 tells where the
// nodes are; the edits insert, replace or delete whole sequence items (or
// words inside a script) at those places, in the indentation and list style
// around them. The result is parsed again and must equal the original Pod
// with exactly the intended changes, or nothing is written.

// podEdit is what a phase changes in one static Pod.
type podEdit struct {
	component string
	ops       []flagOp
	// addLMVolume adds the leader-migration file's hostPath volume and its
	// read-only mount; removeLMVolume removes them by name.
	addLMVolume, removeLMVolume bool
}

// editManifest applies e to the manifest data read from node path p.
func editManifest(p string, data []byte, e podEdit) ([]byte, error) {
	m, err := parseManifest(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	out, err := m.apply(e)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return out, nil
}

// manifest is a static Pod manifest being edited.
type manifest struct {
	src        string
	lineStarts []int
	nl         string
	root       *yaml.Node // the top mapping
	// step is the mapping indentation; compact says whether block
	// sequences sit at their key's column ("key:\n- item").
	step    int
	compact bool
	// want is the original Pod as JSON, changed as the edits intend.
	want  map[string]any
	edits []textEdit
}

func parseManifest(data []byte) (*manifest, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("not valid YAML: %w", err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		return nil, errors.New("more than one YAML document")
	case !errors.Is(err, io.EOF):
		return nil, fmt.Errorf("more than one YAML document (or a trailing error: %w)", err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode || doc.Content[0].Style&yaml.FlowStyle != 0 {
		return nil, fmt.Errorf("not a block mapping at the top")
	}
	j, err := sigsyaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, fmt.Errorf("not valid YAML: %w", err)
	}
	var want map[string]any
	if err := json.Unmarshal(j, &want); err != nil {
		return nil, fmt.Errorf("not a Pod: %w", err)
	}
	if want["apiVersion"] != "v1" || want["kind"] != "Pod" {
		return nil, fmt.Errorf("apiVersion %v kind %v, want v1 Pod", want["apiVersion"], want["kind"])
	}
	m := &manifest{src: string(data), root: doc.Content[0], nl: "\n", step: 2, want: want}
	if strings.Contains(m.src, "\r\n") {
		m.nl = "\r\n"
	}
	m.lineStarts = []int{0}
	for i := 0; i < len(m.src); i++ {
		if m.src[i] == '\n' && i+1 < len(m.src) {
			m.lineStarts = append(m.lineStarts, i+1)
		}
	}
	for i := 0; i+1 < len(m.root.Content); i += 2 {
		if v := m.root.Content[i+1]; v.Kind == yaml.MappingNode && len(v.Content) > 0 && v.Line > m.root.Content[i].Line {
			m.step = v.Column - m.root.Content[i].Column
			break
		}
	}
	return m, nil
}

// offset returns the source offset of a 1-based line and column (columns
// count characters).
func (m *manifest) offset(line, col int) int {
	if line < 1 || line > len(m.lineStarts) {
		return len(m.src)
	}
	off := m.lineStarts[line-1]
	for c := 1; c < col && off < len(m.src) && m.src[off] != '\n'; c++ {
		_, w := utf8.DecodeRuneInString(m.src[off:])
		off += w
	}
	return off
}

// lineOf returns the 1-based line holding offset off.
func (m *manifest) lineOf(off int) int {
	line := 1
	for line < len(m.lineStarts) && m.lineStarts[line] <= off {
		line++
	}
	return line
}

// lineText returns line (1-based) without its line break.
func (m *manifest) lineText(line int) string {
	start := m.lineStarts[line-1]
	end := len(m.src)
	if line < len(m.lineStarts) {
		end = m.lineStarts[line]
	}
	return strings.TrimRight(m.src[start:end], "\r\n")
}

// nextLine returns the offset of the start of the line after line (or the
// end of the source).
func (m *manifest) nextLine(line int) int {
	if line < len(m.lineStarts) {
		return m.lineStarts[line]
	}
	return len(m.src)
}

// blockEnd returns where the block that starts on line ends: the start of
// the line after its last content line. The block's lines are indented more
// than indent; with seq, "- " items at indent too (a compact sequence).
func (m *manifest) blockEnd(line, indent int, seq bool) int {
	last := line
	for k := line + 1; k <= len(m.lineStarts); k++ {
		t := m.lineText(k)
		trimmed := strings.TrimLeft(t, " ")
		if trimmed == "" || trimmed[0] == '#' {
			continue
		}
		ind := len(t) - len(trimmed)
		if ind > indent || seq && ind == indent && (trimmed == "-" || strings.HasPrefix(trimmed, "- ")) {
			last = k
			continue
		}
		break
	}
	return m.nextLine(last)
}

// insertLines inserts whole lines at offset at (a line start).
func (m *manifest) insertLines(at int, lines ...string) {
	text := strings.Join(lines, m.nl) + m.nl
	if at == len(m.src) && !strings.HasSuffix(m.src, "\n") {
		text = m.nl + strings.TrimSuffix(text, m.nl)
	}
	m.edits = append(m.edits, textEdit{start: at, end: at, text: text})
}

// item returns the dash of the block sequence item n: its column and the
// text before n on its line ("    - ").
func (m *manifest) item(n *yaml.Node) (dashCol int, prefix string, err error) {
	start := m.offset(n.Line, n.Column)
	ls := m.lineStarts[n.Line-1]
	prefix = m.src[ls:start]
	t := strings.TrimLeft(prefix, " ")
	if !strings.HasPrefix(t, "-") || strings.TrimLeft(t[1:], " ") != "" {
		return 0, "", fmt.Errorf("line %d: only block sequence items written as \"- value\" on one line are supported", n.Line)
	}
	return len(prefix) - len(t), prefix, nil
}

// removeKey removes key k and its block value, which ends at end. A key
// that starts a sequence item ("- args:") keeps its line as "args: []".
func (m *manifest) removeKey(k *yaml.Node, end int) {
	ls := m.lineStarts[k.Line-1]
	keyAt := m.offset(k.Line, k.Column)
	if strings.TrimLeft(m.src[ls:keyAt], " ") == "" {
		m.edits = append(m.edits, textEdit{start: ls, end: end})
		return
	}
	colon := keyAt + len(k.Value)
	m.edits = append(m.edits, textEdit{start: colon + 1, end: colon + 1, text: " []"},
		textEdit{start: m.nextLine(k.Line), end: max(end, m.nextLine(k.Line))})
}

func lookup(m *yaml.Node, key string) (k, v *yaml.Node) {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

func (m *manifest) apply(e podEdit) ([]byte, error) {
	_, spec := lookup(m.root, "spec")
	if spec == nil || spec.Kind != yaml.MappingNode || spec.Style&yaml.FlowStyle != 0 {
		return nil, fmt.Errorf("spec is not a block mapping")
	}
	_, containers := lookup(spec, "containers")
	if containers == nil || containers.Kind != yaml.SequenceNode || containers.Style&yaml.FlowStyle != 0 || len(containers.Content) == 0 {
		return nil, fmt.Errorf("spec.containers is not a block sequence")
	}
	if dash, _, err := m.item(containers.Content[0]); err == nil {
		k, _ := lookup(spec, "containers")
		m.compact = dash == k.Column-1
	}
	c, err := m.findContainer(containers, e.component)
	if err != nil {
		return nil, err
	}
	if err := m.editCommand(c, e.ops); err != nil {
		return nil, err
	}
	switch {
	case e.addLMVolume:
		if err := m.addMount(c); err != nil {
			return nil, err
		}
		if err := m.addVolume(spec); err != nil {
			return nil, err
		}
	case e.removeLMVolume:
		if err := m.removeNamed(c.node, "volumeMounts", m.wantContainer(c)); err != nil {
			return nil, err
		}
		if err := m.removeNamed(spec, "volumes", m.want["spec"].(map[string]any)); err != nil {
			return nil, err
		}
	}
	out, err := applyTextEdits(m.src, m.edits)
	if err != nil {
		return nil, err
	}
	if err := m.verify(out); err != nil {
		return nil, err
	}
	return []byte(out), nil
}

// verify parses the edited text and compares it with the intended Pod.
func (m *manifest) verify(out string) error {
	j, err := sigsyaml.YAMLToJSONStrict([]byte(out))
	if err != nil {
		return fmt.Errorf("the edited manifest is not valid YAML (a bug; nothing was written): %w", err)
	}
	var got map[string]any
	if err := json.Unmarshal(j, &got); err != nil {
		return fmt.Errorf("the edited manifest is not a Pod (a bug; nothing was written): %w", err)
	}
	normalizePod(got)
	normalizePod(m.want)
	if !reflect.DeepEqual(got, m.want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(m.want)
		return fmt.Errorf("the text edit does not give the intended Pod (nothing was written): got %s, want %s", g, w)
	}
	return nil
}

// normalizePod drops empty lists the edits may leave as null or remove.
func normalizePod(pod map[string]any) {
	spec, _ := pod["spec"].(map[string]any)
	if spec == nil {
		return
	}
	dropEmpty(spec, "volumes")
	cs, _ := spec["containers"].([]any)
	for _, c := range cs {
		if c, ok := c.(map[string]any); ok {
			dropEmpty(c, "command", "args", "volumeMounts")
		}
	}
}

func dropEmpty(m map[string]any, keys ...string) {
	for _, k := range keys {
		if v, ok := m[k]; ok {
			if l, _ := v.([]any); len(l) == 0 {
				delete(m, k)
			}
		}
	}
}
