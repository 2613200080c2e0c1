package cloudconfig

import (
	"fmt"
	"reflect"
	"slices"
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
	globalListKeys   = sliceFieldNames(reflect.TypeOf(Global{}))
	overrideListKeys = sliceFieldNames(reflect.TypeOf(ServiceOverride{}))
)

func sliceFieldNames(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		if t.Field(i).Type.Kind() == reflect.Slice {
			names = append(names, t.Field(i).Name)
		}
	}
	return names
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
	// The section's known keys and, of those, the ones that may repeat.
	var keys, lists []string
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
			name = canonical(name, []string{sectionGlobal, sectionOverride})
			header = "[" + name + "]"
			if hasSub {
				header = fmt.Sprintf("[%s %q]", name, sub)
			}
			keys, lists = nil, nil
			switch name {
			case sectionGlobal:
				keys, lists = globalKeys, globalListKeys
			case sectionOverride:
				keys, lists = overrideKeys, overrideListKeys
			}
			note(sectionID, header, "", line)
			// The scanner is now past the subsection (or at the right
			// bracket); the rest of the header line carries nothing.
		case tok == token.IDENT && lineStart && header != "":
			if key := canonical(lit, keys); !slices.Contains(lists, key) {
				note(sectionID+"\x00"+strings.ToLower(lit), header, key, file.Line(pos))
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
			fix = "keep the one you mean; only list keys (" + strings.Join(slices.Concat(globalListKeys, overrideListKeys), ", ") + ") may repeat"
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

// canonical spells name as the known name it matches case-insensitively
// (gcfg matches section and key names so: "zone" is Zone), else as written.
func canonical(name string, known []string) string {
	if i := slices.IndexFunc(known, func(k string) bool { return strings.EqualFold(k, name) }); i >= 0 {
		return known[i]
	}
	return name
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
