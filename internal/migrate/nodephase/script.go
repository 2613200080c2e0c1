package nodephase

import (
	"fmt"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
)

// This file edits a component's flags inside a shell script, the
// `/bin/sh -c "... kube-controller-manager --a --b 1>>/var/log/x.log 2>&1"`
// form of older kops manifests: only the words of the flags change.

// findBinary returns the index of the token after component's binary, as
// nodefiles finds a component's binary.
func findBinary(toks []string, component string) (int, bool) {
	i := nodefiles.BinaryIndex(toks, func(base string) bool { return base == component })
	return i + 1, i >= 0
}

// scriptCall is the component's command in a script.
type scriptCall struct {
	toks  []string
	spans []span
	// start is the index of the first token after the binary.
	start int
}

// findScriptCall parses script and returns the first simple command that
// runs component. A word that is not a plain or quoted literal ("$X",
// "$(...)") is kept as written and never edited.
func findScriptCall(script, component string) (*scriptCall, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "")
	if err != nil {
		return nil, fmt.Errorf("parse the shell script: %w", err)
	}
	var found *scriptCall
	syntax.Walk(f, func(node syntax.Node) bool {
		call, ok := node.(*syntax.CallExpr)
		if !ok || found != nil {
			return found == nil
		}
		c := &scriptCall{}
		for _, w := range call.Args {
			c.toks = append(c.toks, wordText(script, w))
			c.spans = append(c.spans, span{int(w.Pos().Offset()), int(w.End().Offset())})
		}
		if start, ok := findBinary(c.toks, component); ok {
			c.start = start
			found = c
		}
		return found == nil
	})
	if found == nil {
		return nil, fmt.Errorf("the shell script runs no %s", component)
	}
	return found, nil
}

// wordText returns a word's value when it is made of literal and quoted
// literal parts only, else its source text.
func wordText(script string, w *syntax.Word) string {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.Contains(p.Value, `\`) {
				return script[w.Pos().Offset():w.End().Offset()]
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return script[w.Pos().Offset():w.End().Offset()]
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok || strings.ContainsAny(lit.Value, `\$`+"`") {
					return script[w.Pos().Offset():w.End().Offset()]
				}
				b.WriteString(lit.Value)
			}
		default:
			return script[w.Pos().Offset():w.End().Offset()]
		}
	}
	return b.String()
}

// editScript applies ops to component's flags in script. It returns the
// edits in script offsets and the new script, checked by parsing it again.
func editScript(script, component string, ops []flagOp) ([]textEdit, string, error) {
	call, err := findScriptCall(script, component)
	if err != nil {
		return nil, "", err
	}
	edits, want, err := editArgv(call.toks, call.start, ops)
	if err != nil {
		return nil, "", err
	}
	te, err := wordEdits(call.spans, edits, 0)
	if err != nil {
		return nil, "", err
	}
	out, err := applyTextEdits(script, te)
	if err != nil {
		return nil, "", err
	}
	got, err := findScriptCall(out, component)
	if err != nil || !slices.Equal(got.toks, want) {
		return nil, "", fmt.Errorf("editing the shell script's words does not give the intended command line")
	}
	return te, out, nil
}
