package nodephase

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// This file finds a YAML scalar's text in its source and maps each byte of
// its value back to the source, so a word inside a long value (a shell
// script) can be edited where it is written, whatever the scalar's style.

// rawScalar is a YAML scalar as written.
type rawScalar struct {
	value string
	// start and end delimit the scalar's text: quotes and block indicator
	// included, a trailing comment excluded.
	start, end int
	// pos[i] is the source offset of value byte i; pos[len(value)] is where
	// text appended to the value goes.
	pos   []int
	style yaml.Style
}

// scalarReader decodes one scalar; indent is the column (0-based) of the
// block the scalar is in: continuation lines are indented more.
type scalarReader struct {
	src    string
	indent int
	value  strings.Builder
	pos    []int
}

func (r *scalarReader) add(s string, at int) {
	for i := 0; i < len(s); i++ {
		r.pos = append(r.pos, at)
	}
	r.value.WriteString(s)
}

// addSrc copies src[from:to] to the value byte for byte.
func (r *scalarReader) addSrc(from, to int) {
	for i := from; i < to; i++ {
		r.pos = append(r.pos, i)
	}
	r.value.WriteString(r.src[from:to])
}

// trimBlanks drops trailing blanks (and a CR) from the value, as YAML
// folding does, and returns the source offset where they started.
func (r *scalarReader) trimBlanks(at int) int {
	v := r.value.String()
	t := strings.TrimRight(v, " \t\r")
	if len(t) < len(v) {
		at = r.pos[len(t)]
		r.pos = r.pos[:len(t)]
		r.value.Reset()
		r.value.WriteString(t)
	}
	return at
}

// lineEnd returns the offset of the newline ending the line at i (or len).
func (r *scalarReader) lineEnd(i int) int {
	if j := strings.IndexByte(r.src[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(r.src)
}

// blankLine reports whether the line starting at i has only blanks.
func (r *scalarReader) blankLine(i int) bool {
	return strings.TrimRight(r.src[i:r.lineEnd(i)], " \t\r") == ""
}

// indentOf returns the number of leading spaces of the line at i.
func (r *scalarReader) indentOf(i int) int {
	n := 0
	for i+n < len(r.src) && r.src[i+n] == ' ' {
		n++
	}
	return n
}

// fold handles the line break at nl inside a flow scalar whose text on the
// line ended at source offset at: blank lines become newlines, a single
// break a space. It returns where the next line's text starts; ok is false
// when the scalar cannot continue there.
func (r *scalarReader) fold(nl, at int, quoted bool) (next int, ok bool) {
	i := nl + 1
	breaks := 0
	for i < len(r.src) && r.blankLine(i) {
		breaks++
		i = r.lineEnd(i) + 1
	}
	if i >= len(r.src) {
		return i, false
	}
	ind := r.indentOf(i)
	c := r.src[i+ind]
	if !quoted && (ind <= r.indent || c == '#') {
		return i, false
	}
	if breaks == 0 {
		r.add(" ", at)
	} else {
		r.add(strings.Repeat("\n", breaks), at)
	}
	for i < len(r.src) && (r.src[i] == ' ' || r.src[i] == '\t') {
		i++
	}
	return i, true
}

// readScalar reads the scalar node n, which starts at source offset off.
func readScalar(src string, off int, n *yaml.Node, indent int) (*rawScalar, error) {
	r := &scalarReader{src: src, indent: indent}
	var end int
	var err error
	switch n.Style {
	case 0, yaml.TaggedStyle:
		end = r.plain(off)
	case yaml.SingleQuotedStyle:
		end, err = r.singleQuoted(off)
	case yaml.DoubleQuotedStyle:
		end, err = r.doubleQuoted(off)
	case yaml.LiteralStyle:
		end, err = r.literal(off)
	default:
		err = fmt.Errorf("folded block scalars are not supported")
	}
	if err == nil && r.value.String() != n.Value {
		err = fmt.Errorf("cannot map the scalar's text to its value")
	}
	if err != nil {
		return nil, fmt.Errorf("line %d: %w", n.Line, err)
	}
	// Text appended to the value goes before a closing quote.
	contentEnd := end
	if n.Style == yaml.SingleQuotedStyle || n.Style == yaml.DoubleQuotedStyle {
		contentEnd--
	}
	return &rawScalar{value: r.value.String(), start: off, end: end, pos: append(r.pos, contentEnd), style: n.Style}, nil
}

// plain reads a plain scalar: it ends before " #", at a line break not
// followed by a more indented line, and trailing blanks are not part of it.
func (r *scalarReader) plain(i int) int {
	for {
		eol := r.lineEnd(i)
		j := i
		for j < eol {
			if r.src[j] == '#' && j > i && (r.src[j-1] == ' ' || r.src[j-1] == '\t') {
				break
			}
			j++
		}
		r.addSrc(i, j)
		end := r.trimBlanks(j)
		if j < eol || eol >= len(r.src) {
			return end
		}
		next, ok := r.fold(eol, end, false)
		if !ok {
			return end
		}
		i = next
	}
}

func (r *scalarReader) singleQuoted(i int) (int, error) {
	for j := i + 1; j < len(r.src); {
		switch c := r.src[j]; {
		case c == '\'' && j+1 < len(r.src) && r.src[j+1] == '\'':
			r.add("'", j)
			j += 2
		case c == '\'':
			return j + 1, nil
		case c == '\n':
			next, ok := r.fold(j, r.trimBlanks(j), true)
			if !ok {
				return 0, fmt.Errorf("unterminated quote")
			}
			j = next
		default:
			r.addSrc(j, j+1)
			j++
		}
	}
	return 0, fmt.Errorf("unterminated quote")
}

var yamlEscapes = map[byte]string{
	'0': "\x00", 'a': "\a", 'b': "\b", 't': "\t", '\t': "\t", 'n': "\n", 'v': "\v", 'f': "\f",
	'r': "\r", 'e': "\x1b", ' ': " ", '"': "\"", '/': "/", '\\': "\\",
	'N': "\u0085", '_': "\u00a0", 'L': "\u2028", 'P': "\u2029",
}

func (r *scalarReader) doubleQuoted(i int) (int, error) {
	for j := i + 1; j < len(r.src); {
		switch c := r.src[j]; c {
		case '"':
			return j + 1, nil
		case '\\':
			if j+1 >= len(r.src) {
				return 0, fmt.Errorf("unterminated quote")
			}
			e := r.src[j+1]
			if s, ok := yamlEscapes[e]; ok {
				r.add(s, j)
				j += 2
				continue
			}
			if e == '\n' || e == '\r' {
				j = r.lineEnd(j+1) + 1
				for j < len(r.src) && (r.src[j] == ' ' || r.src[j] == '\t') {
					j++
				}
				continue
			}
			width := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if width == 0 || j+2+width > len(r.src) {
				return 0, fmt.Errorf("unsupported escape \\%c", e)
			}
			code, err := strconv.ParseUint(r.src[j+2:j+2+width], 16, 32)
			if err != nil || code > utf8.MaxRune || !utf8.ValidRune(rune(code)) {
				return 0, fmt.Errorf("bad escape \\%c", e)
			}
			r.add(string(rune(code)), j)
			j += 2 + width
		case '\n':
			next, ok := r.fold(j, r.trimBlanks(j), true)
			if !ok {
				return 0, fmt.Errorf("unterminated quote")
			}
			j = next
		default:
			r.addSrc(j, j+1)
			j++
		}
	}
	return 0, fmt.Errorf("unterminated quote")
}

// literal reads a "|" block scalar without an indentation indicator.
func (r *scalarReader) literal(i int) (int, error) {
	eol := r.lineEnd(i)
	header := strings.TrimSpace(r.src[i+1 : eol])
	if h, _, found := strings.Cut(header, "#"); found {
		header = strings.TrimSpace(h)
	}
	if header != "" && header != "-" && header != "+" {
		return 0, fmt.Errorf("block scalar header %q is not supported", "|"+header)
	}
	contentIndent := -1
	end := eol
	lastContent := -1 // value length after the last non-blank line
	j := eol + 1
	for j < len(r.src) {
		le := r.lineEnd(j)
		if r.blankLine(j) {
			r.add("\n", le)
			j = le + 1
			continue
		}
		ind := r.indentOf(j)
		if contentIndent < 0 {
			if ind <= r.indent {
				break
			}
			contentIndent = ind
		}
		if ind < contentIndent {
			break
		}
		lineEnd := le
		if lineEnd > j && r.src[lineEnd-1] == '\r' {
			lineEnd--
		}
		r.addSrc(j+contentIndent, lineEnd)
		lastContent = r.value.Len()
		r.add("\n", lineEnd)
		end = lineEnd
		j = le + 1
	}
	v := r.value.String()
	keep := len(v)
	switch {
	case lastContent < 0:
		keep = 0
	case header == "-":
		keep = lastContent
	case header == "":
		keep = min(lastContent+1, len(v))
	}
	r.value.Reset()
	r.value.WriteString(v[:keep])
	r.pos = r.pos[:keep]
	return end, nil
}

// encodeScalar writes s as a whole scalar in style, for a token the tool
// writes (safeWord).
func encodeScalar(style yaml.Style, s string) (string, error) {
	if !safeWord(s) {
		return "", fmt.Errorf("cannot write %q as a YAML scalar", s)
	}
	switch style {
	case 0:
		return s, nil
	case yaml.DoubleQuotedStyle:
		return `"` + s + `"`, nil
	case yaml.SingleQuotedStyle:
		return "'" + s + "'", nil
	default:
		// Literal, folded and flow scalars are refused below.
	}
	return "", fmt.Errorf("cannot replace a block scalar with %q", s)
}
