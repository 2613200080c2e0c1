package nodephase

import (
	"fmt"
	"slices"
	"strings"
)

// textEdit replaces src[start:end] with text; start == end inserts.
type textEdit struct {
	start, end int
	text       string
}

// applyTextEdits applies non-overlapping edits to src. Inserts at one offset
// keep their order and come before a replacement starting there.
func applyTextEdits(src string, edits []textEdit) (string, error) {
	edits = slices.Clone(edits)
	slices.SortStableFunc(edits, func(a, b textEdit) int {
		if a.start != b.start {
			return a.start - b.start
		}
		return (a.end - a.start) - (b.end - b.start) // inserts first
	})
	var b strings.Builder
	at := 0
	for _, e := range edits {
		if e.start < at || e.end < e.start || e.end > len(src) {
			return "", fmt.Errorf("overlapping or out-of-range edit [%d,%d) after %d", e.start, e.end, at)
		}
		b.WriteString(src[at:e.start])
		b.WriteString(e.text)
		at = e.end
	}
	b.WriteString(src[at:])
	return b.String(), nil
}

// span is a token's place in a text: [start, end).
type span struct{ start, end int }

// safeWord reports whether a token the tool writes needs no quoting in an
// environment file, a shell script or a plain YAML scalar.
func safeWord(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_=:/.,@+", c)
		if !ok {
			return false
		}
	}
	return true
}

// wordEdits turns token edits into text edits for a blank-separated word
// list whose words are at spans: a deleted word goes with the blanks before
// it (after it, for the first words), an inserted word gets one blank.
// emptyAt is where words go when there are none.
func wordEdits(spans []span, edits []tokEdit, emptyAt int) ([]textEdit, error) {
	deleted := map[int]bool{}
	inserts := map[int][]string{}
	var anchors []int
	var out []textEdit
	for _, e := range edits {
		if e.kind != editDelete && !safeWord(e.text) {
			return nil, fmt.Errorf("cannot write %q unquoted", e.text)
		}
		switch e.kind {
		case editDelete:
			deleted[e.index] = true
		case editReplace:
			s := spans[e.index]
			out = append(out, textEdit{start: s.start, end: s.end, text: e.text})
		case editInsert:
			if _, seen := inserts[e.index]; !seen {
				anchors = append(anchors, e.index)
			}
			inserts[e.index] = append(inserts[e.index], e.text)
		}
	}
	kept := len(spans) - len(deleted)
	// Deleted runs.
	for i := 0; i < len(spans); i++ {
		if !deleted[i] {
			continue
		}
		j := i
		for j+1 < len(spans) && deleted[j+1] {
			j++
		}
		switch {
		case i > 0:
			out = append(out, textEdit{start: spans[i-1].end, end: spans[j].end})
		case j+1 < len(spans):
			out = append(out, textEdit{start: spans[i].start, end: spans[j+1].start})
		default:
			out = append(out, textEdit{start: spans[i].start, end: spans[j].end})
		}
		i = j
	}
	for _, a := range anchors {
		words := strings.Join(inserts[a], " ")
		switch {
		case a >= 0:
			out = append(out, textEdit{start: spans[a].end, end: spans[a].end, text: " " + words})
		case kept > 0:
			first := 0
			for deleted[first] {
				first++
			}
			out = append(out, textEdit{start: spans[first].start, end: spans[first].start, text: words + " "})
		case len(spans) > 0:
			out = append(out, textEdit{start: spans[0].start, end: spans[0].start, text: words})
		default:
			out = append(out, textEdit{start: emptyAt, end: emptyAt, text: words})
		}
	}
	return out, nil
}
