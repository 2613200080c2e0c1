package nodephase

import (
	"fmt"

	yaml "go.yaml.in/yaml/v3"

	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
)

// podContainer is the container that runs the component.
type podContainer struct {
	component string
	index     int
	node      *yaml.Node // the container's mapping
	// seqs are its command and args sequences, in that order, when present.
	seqs []commandSeq
	// toks is command + args; ref[i] says where toks[i] is written.
	toks []string
	refs []tokRef
	// start is the index of the first token after the binary, or of the
	// first after the binary inside the script at toks[script].
	start  int
	script int // -1 without a shell script
}

type commandSeq struct {
	name     string // "command" or "args"
	key, seq *yaml.Node
}

type tokRef struct {
	seq  int // index into podContainer.seqs
	node *yaml.Node
}

// findContainer returns the container whose command line runs component,
// directly, after a wrapper (kops's /go-runner) or in `sh -c`.
func (m *manifest) findContainer(containers *yaml.Node, component string) (*podContainer, error) {
	for ci, cn := range containers.Content {
		if cn.Kind != yaml.MappingNode {
			continue
		}
		c := &podContainer{component: component, index: ci, node: cn, script: -1}
		ok := true
		for _, name := range []string{"command", "args"} {
			k, s := lookup(cn, name)
			if s == nil || s.Kind == yaml.ScalarNode && s.Tag == "!!null" {
				continue
			}
			if s.Kind != yaml.SequenceNode {
				ok = false
				break
			}
			c.seqs = append(c.seqs, commandSeq{name: name, key: k, seq: s})
			for _, it := range s.Content {
				if it.Kind != yaml.ScalarNode {
					ok = false
					break
				}
				c.toks = append(c.toks, it.Value)
				c.refs = append(c.refs, tokRef{seq: len(c.seqs) - 1, node: it})
			}
		}
		if !ok {
			continue
		}
		if i, isScript := nodefiles.ShellScript(c.toks); isScript {
			if _, err := findScriptCall(c.toks[i], component); err == nil {
				c.script = i
			}
		} else if start, found := findBinary(c.toks, component); found {
			c.start = start
		} else {
			continue
		}
		if c.script < 0 && c.start == 0 {
			continue
		}
		for _, s := range c.seqs {
			if s.seq.Style&yaml.FlowStyle != 0 && len(s.seq.Content) > 0 {
				return nil, fmt.Errorf("line %d: %s of the %s container is a flow-style sequence ([a, b]); write it as a block sequence (one \"- item\" per line) and run again",
					s.seq.Line, s.name, component)
			}
		}
		return c, nil
	}
	return nil, fmt.Errorf("no container runs %s (looked for its binary in command and args, after /go-runner and in sh -c scripts)", component)
}

// wantContainer returns the intended container's JSON.
func (m *manifest) wantContainer(c *podContainer) map[string]any {
	spec := m.want["spec"].(map[string]any)
	return spec["containers"].([]any)[c.index].(map[string]any)
}

// scalarOf reads a sequence item's scalar.
func (m *manifest) scalarOf(n *yaml.Node) (*rawScalar, string, error) {
	dash, prefix, err := m.item(n)
	if err != nil {
		return nil, "", err
	}
	sc, err := readScalar(m.src, m.offset(n.Line, n.Column), n, dash)
	return sc, prefix, err
}

// editCommand applies ops to the container's command line.
func (m *manifest) editCommand(c *podContainer, ops []flagOp) error {
	if c.script >= 0 {
		return m.editScriptItem(c, ops)
	}
	edits, _, err := editArgv(c.toks, c.start, ops)
	if err != nil {
		return err
	}
	deleted := map[int]bool{}
	replaced := map[int]string{}
	inserts := map[int][]string{}
	for _, e := range edits {
		switch e.kind {
		case editDelete:
			deleted[e.index] = true
		case editReplace:
			replaced[e.index] = e.text
		case editInsert:
			inserts[e.index] = append(inserts[e.index], e.text)
		}
	}
	// The intended lists, and the text edits.
	lists := make([][]any, len(c.seqs))
	left := make([]int, len(c.seqs))
	for i, t := range c.toks {
		r := c.refs[i]
		if !deleted[i] {
			left[r.seq]++
			if s, ok := replaced[i]; ok {
				t = s
			}
			lists[r.seq] = append(lists[r.seq], t)
		}
		for _, s := range inserts[i] {
			lists[r.seq] = append(lists[r.seq], s)
			left[r.seq]++
		}
	}
	want := m.wantContainer(c)
	for si, s := range c.seqs {
		want[s.name] = lists[si]
		if left[si] == 0 && len(s.seq.Content) > 0 {
			// Every item goes: the key goes too.
			m.removeKey(s.key, m.blockEnd(s.key.Line, s.key.Column-1, true))
		}
	}
	for i := range c.toks {
		r := c.refs[i]
		_, ins := inserts[i]
		_, rep := replaced[i]
		if !deleted[i] && !ins && !rep {
			continue
		}
		sc, prefix, err := m.scalarOf(r.node)
		if err != nil {
			return err
		}
		if deleted[i] {
			if left[r.seq] > 0 {
				m.edits = append(m.edits, textEdit{start: m.lineStarts[r.node.Line-1], end: m.nextLine(m.lineOf(sc.end))})
			}
			continue
		}
		if rep {
			text, err := encodeScalar(sc.style, replaced[i])
			if err != nil {
				return err
			}
			m.edits = append(m.edits, textEdit{start: sc.start, end: sc.end, text: text})
		}
		var lines []string
		for _, s := range inserts[i] {
			style := sc.style
			if style != yaml.DoubleQuotedStyle && style != yaml.SingleQuotedStyle {
				style = 0
			}
			text, err := encodeScalar(style, s)
			if err != nil {
				return err
			}
			lines = append(lines, prefix+text)
		}
		if len(lines) > 0 {
			m.insertLines(m.nextLine(m.lineOf(sc.end)), lines...)
		}
	}
	return nil
}

// editScriptItem edits the words of the component's flags inside the
// script item, whatever the scalar's style.
func (m *manifest) editScriptItem(c *podContainer, ops []flagOp) error {
	r := c.refs[c.script]
	sc, _, err := m.scalarOf(r.node)
	if err != nil {
		return err
	}
	edits, script, err := editScript(sc.value, c.component, ops)
	if err != nil {
		return fmt.Errorf("line %d: %w", r.node.Line, err)
	}
	for _, e := range edits {
		m.edits = append(m.edits, textEdit{start: sc.pos[e.start], end: sc.pos[e.end], text: e.text})
	}
	want := m.wantContainer(c)
	seq := c.seqs[r.seq]
	list, _ := want[seq.name].([]any)
	for i, it := range seq.seq.Content {
		if it == r.node && i < len(list) {
			list[i] = script
		}
	}
	return nil
}
