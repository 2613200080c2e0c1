package cloudconfig

import (
	"fmt"
	"reflect"
	"strings"

	"gopkg.in/gcfg.v1/scanner"
	"gopkg.in/gcfg.v1/token"
)

// Keys that take several values: the slice fields, which gcfg appends to on
// every repetition (upstream's gcfg struct has NodeIPFamilies as its only
// one). Every other key holds one value, and gcfg would silently keep the
// last of several; a second copy is nearly always a merge gone wrong (two
// Regions, two cluster IDs), so duplicates() reports it instead.
var (
	multiGlobal   = sliceFields(reflect.TypeOf(Global{}))
	multiOverride = sliceFields(reflect.TypeOf(ServiceOverride{}))
)

func sliceFields(t reflect.Type) map[string]bool {
	m := map[string]bool{}
	for i := range t.NumField() {
		if t.Field(i).Type.Kind() == reflect.Slice {
			m[strings.ToLower(t.Field(i).Name)] = true
		}
	}
	return m
}

// occurrence is one section header or key, by identity: gcfg compares
// section and key names case-insensitively, subsection names exactly.
type occurrence struct {
	header string // [Global] or [ServiceOverride "a"], as messages show it
	key    string // "" for the section header itself
	lines  []int
}

// duplicates scans data, a file gcfg has read without a fatal error, and
// returns one problem per section header or single-valued key that occurs
// more than once, naming every line, in file order.
func duplicates(data []byte) []string {
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(data))
	var s scanner.Scanner
	failed := false
	s.Init(file, data, func(token.Position, string) { failed = true }, 0)

	seen := map[string]*occurrence{}
	var order []*occurrence
	note := func(id, header, key string, line int) {
		o := seen[id]
		if o == nil {
			o = &occurrence{header: header, key: key}
			seen[id] = o
			order = append(order, o)
		}
		o.lines = append(o.lines, line)
	}

	var sectionID, header string
	multi := map[string]bool{}
	lineStart := true
	for {
		pos, tok, lit := s.Scan()
		if failed {
			// gcfg accepted the file, so this cannot happen; never guess.
			return nil
		}
		switch {
		case tok == token.EOF:
			return describeDuplicates(order)
		case tok == token.EOL:
			lineStart = true
			continue
		case tok == token.LBRACK && lineStart:
			line := file.Line(pos)
			_, tok, lit = s.Scan()
			if tok != token.IDENT {
				return nil
			}
			name, sub, hasSub := lit, "", false
			if _, tok, lit = s.Scan(); tok == token.STRING {
				sub, hasSub = unquoteSubsection(lit), true
			}
			sectionID = strings.ToLower(name) + "\x00" + sub
			header = "[" + canonicalSection(name) + "]"
			multi = nil
			switch {
			case strings.EqualFold(name, sectionGlobal):
				multi = multiGlobal
			case strings.EqualFold(name, sectionOverride):
				multi = multiOverride
			}
			if hasSub {
				header = fmt.Sprintf("[%s %q]", canonicalSection(name), sub)
			}
			note(sectionID, header, "", line)
			// The scanner is now past the subsection (or at the right
			// bracket); the rest of the header line carries nothing.
		case tok == token.IDENT && lineStart && header != "":
			if !multi[strings.ToLower(lit)] {
				note(sectionID+"\x00"+strings.ToLower(lit), header, canonicalKey(header, lit), file.Line(pos))
			}
		}
		lineStart = false
	}
}

// describeDuplicates writes one problem per repeated occurrence, in the
// order of their first lines.
func describeDuplicates(order []*occurrence) []string {
	var problems []string
	for _, o := range order {
		if len(o.lines) < 2 {
			continue
		}
		what := o.header + " appears"
		fix := "merge them into one section"
		if o.key != "" {
			what = o.header + " " + o.key + " set"
			fix = "keep the one you mean; only list keys (" + strings.Join(listKeys(), ", ") + ") may repeat"
		}
		problems = append(problems, fmt.Sprintf("%s %s, %s; %s", what, times(len(o.lines)), lineList(o.lines), fix))
	}
	return problems
}

func times(n int) string {
	if n == 2 {
		return "twice"
	}
	return fmt.Sprintf("%d times", n)
}

// lineList says "lines 3 and 7" or "lines 3, 5 and 7".
func lineList(lines []int) string {
	s := make([]string, len(lines))
	for i, l := range lines {
		s[i] = fmt.Sprint(l)
	}
	return "lines " + strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// listKeys are the repeatable keys' names, for the hint.
func listKeys() []string {
	var keys []string
	for _, t := range []reflect.Type{reflect.TypeOf(Global{}), reflect.TypeOf(ServiceOverride{})} {
		for i := range t.NumField() {
			if t.Field(i).Type.Kind() == reflect.Slice {
				keys = append(keys, t.Field(i).Name)
			}
		}
	}
	return keys
}

// canonicalSection spells a known section name as the docs do.
func canonicalSection(name string) string {
	for _, known := range []string{sectionGlobal, sectionOverride} {
		if strings.EqualFold(name, known) {
			return known
		}
	}
	return name
}

// canonicalKey spells a known key as the docs do (gcfg matches keys
// case-insensitively, so "zone" is Zone).
func canonicalKey(header, key string) string {
	keys := globalKeys
	if strings.HasPrefix(header, "["+sectionOverride) {
		keys = overrideKeys
	}
	for _, k := range keys {
		if strings.EqualFold(k, key) {
			return k
		}
	}
	return key
}

// unquoteSubsection undoes gcfg's subsection quoting ("a \"b\"" is a "b");
// gcfg has already refused invalid escapes.
func unquoteSubsection(lit string) string {
	lit = strings.TrimPrefix(strings.TrimSuffix(lit, `"`), `"`)
	var b strings.Builder
	esc := false
	for _, r := range lit {
		switch {
		case esc:
			switch r {
			case 'n':
				r = '\n'
			case 't':
				r = '\t'
			}
			b.WriteRune(r)
			esc = false
		case r == '\\':
			esc = true
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
