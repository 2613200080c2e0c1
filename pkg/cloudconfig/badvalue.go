package cloudconfig

import (
	"bytes"
	"errors"
	"strings"

	"gopkg.in/gcfg.v1/scanner"
	"gopkg.in/gcfg.v1/token"
)

// badValueLocation returns where gcfg could not store a value: the section,
// subsection and key its fatal error names. Syntax errors (which gcfg
// reports with a position, not a key) have none.
func badValueLocation(err error) (location, bool) {
	var list scanner.ErrorList
	if errors.As(err, &list) {
		return location{}, false
	}
	msg := err.Error()
	if positioned.MatchString(msg) {
		return location{}, false
	}
	i := strings.LastIndex(msg, locMarker)
	if i < 0 {
		return location{}, false
	}
	l, ok := parseLocation(msg[i+len(" at "):])
	return l, ok && l.hasVariable
}

// blankKey returns a copy of data with the first assignment of l's key in
// l's section replaced by spaces, from the key to the end of its value
// (continuation lines and a trailing comment included), so gcfg reads on
// past it. Names match as gcfg matches them: sections and keys
// case-insensitively, subsections exactly. It reports false when there is
// no such assignment or the file does not scan.
func blankKey(data []byte, l location) ([]byte, bool) {
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(data))
	var s scanner.Scanner
	failed := false
	s.Init(file, data, func(token.Position, string) { failed = true }, 0)

	inSection := false
	lineStart := true
	for {
		pos, tok, lit := s.Scan()
		if failed {
			return nil, false
		}
		switch {
		case tok == token.EOF:
			return nil, false
		case tok == token.EOL:
			lineStart = true
			continue
		case tok == token.LBRACK && lineStart:
			_, tok, lit = s.Scan()
			if tok != token.IDENT {
				return nil, false
			}
			name := lit
			sub, hasSub := "", false
			if _, tok, lit = s.Scan(); tok == token.STRING {
				sub, hasSub = unquoteSubsection(lit), true
			}
			inSection = strings.EqualFold(name, l.section) && hasSub == l.hasSubsection && sub == l.subsection
		case tok == token.IDENT && lineStart && inSection && strings.EqualFold(lit, l.variable):
			start := file.Offset(pos)
			end := len(data)
			for {
				p, t, _ := s.Scan()
				if failed {
					return nil, false
				}
				if t == token.EOL || t == token.EOF {
					if t == token.EOL {
						end = file.Offset(p)
					}
					break
				}
			}
			out := bytes.Clone(data)
			for i := start; i < end; i++ {
				out[i] = ' '
			}
			return out, true
		}
		lineStart = false
	}
}

// key names l's key as Validate's messages start: "[Global] Region",
// "[ServiceOverride "a"] URL", with the key's canonical spelling.
func (l location) key() string {
	if strings.EqualFold(l.section, sectionOverride) {
		return overrideHeader(l.subsection) + " " + canonical(l.variable, overrideKeys)
	}
	return "[" + canonical(l.section, []string{sectionGlobal}) + "] " + canonical(l.variable, globalKeys)
}
