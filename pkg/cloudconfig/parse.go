package cloudconfig

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strings"

	"gopkg.in/gcfg.v1"
	"gopkg.in/gcfg.v1/scanner"
	"gopkg.in/warnings.v0"
)

// Error is the error Parse, Validate and Load return for problems in the
// file's content. Each problem names the section and key and says how to fix
// it.
type Error struct {
	// Problems are one-line descriptions, in file order.
	Problems []string
}

// Error lists the problems, one per line when there are several.
func (e *Error) Error() string {
	switch len(e.Problems) {
	case 0:
		return "cloud config: invalid"
	case 1:
		return "cloud config: " + e.Problems[0]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "cloud config: %d problems:", len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n  - ")
		b.WriteString(p)
	}
	return b.String()
}

var utf8BOM = []byte("\ufeff")

// Parse decodes a cloud-config file. It only decodes: call Config.Default and
// Config.Validate next (Load does all three).
//
// Decoding is strict: every unknown section and key is reported, with the
// known names, in one *Error, and so is every section or single-valued key
// that occurs more than once (gcfg would keep the last value), with its
// lines. A syntax error names its line and column. A leading UTF-8
// byte-order mark is skipped.
func Parse(data []byte) (cfg *Config, err error) {
	data = bytes.TrimPrefix(data, utf8BOM)
	c := &Config{}
	defer func() {
		// gcfg's unquote panics on literals its scanner should have
		// refused; never let a malformed file crash the CCM.
		if r := recover(); r != nil {
			cfg, err = nil, &Error{Problems: []string{fmt.Sprintf("cannot parse the file: %v", r)}}
		}
	}()
	readErr := gcfg.ReadInto(c, bytes.NewReader(data))
	if fatal := gcfg.FatalOnly(readErr); fatal != nil {
		return nil, &Error{Problems: []string{describeFatal(fatal)}}
	}
	problems := describeExtra(warnings.WarningsOnly(readErr))
	problems = append(problems, duplicates(data)...)
	if len(problems) > 0 {
		return nil, &Error{Problems: problems}
	}
	return c, nil
}

// Load reads the file at path, then parses, defaults and validates it. An
// empty path means no file: the defaults. Errors name the path.
func Load(path string) (*Config, error) {
	if path == "" {
		c := &Config{}
		c.Default()
		return c, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read cloud config: %w", err)
	}
	c, err := load(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// load is Load without the file.
func load(data []byte) (*Config, error) {
	c, err := Parse(data)
	if err != nil {
		return nil, err
	}
	c.Default()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// Key names, from the struct fields gcfg matches, so they cannot drift.
var (
	globalKeys   = fieldNames(reflect.TypeOf(Global{}))
	overrideKeys = fieldNames(reflect.TypeOf(ServiceOverride{}))
)

func fieldNames(t reflect.Type) []string {
	names := make([]string, t.NumField())
	for i := range names {
		names[i] = t.Field(i).Name
	}
	return names
}

const (
	sectionGlobal   = "Global"
	sectionOverride = "ServiceOverride"
)

// location is where gcfg could not store a value.
type location struct {
	section, subsection, variable string
	hasSubsection, hasVariable    bool
}

// gcfg reports locations as: section "S"[, subsection "SUB"][, variable "V"].
// Section and variable are identifiers (no quotes); the subsection is free
// text, so the variable is taken from the end.
var (
	locVariable = regexp.MustCompile(`, variable "([^"]*)"$`)
	locSection  = regexp.MustCompile(`^section "([^"]*)"`)
)

func parseLocation(s string) (location, bool) {
	var l location
	m := locSection.FindStringSubmatch(s)
	if m == nil {
		return l, false
	}
	l.section = m[1]
	rest := s[len(m[0]):]
	if v := locVariable.FindStringSubmatchIndex(rest); v != nil {
		l.variable, l.hasVariable = rest[v[2]:v[3]], true
		rest = rest[:v[0]]
	}
	if rest != "" {
		const p = `, subsection "`
		if !strings.HasPrefix(rest, p) || !strings.HasSuffix(rest, `"`) || len(rest) < len(p)+1 {
			return l, false
		}
		l.subsection, l.hasSubsection = rest[len(p):len(rest)-1], true
	}
	return l, true
}

const extraPrefix = "can't store data at "

// describeExtra turns gcfg's "can't store data" warnings into one problem per
// unknown section or key. gcfg reads the file twice (plain sections, then
// named ones), so the same location can appear twice; keys inside an unknown
// section are not listed separately.
func describeExtra(extra []error) []string {
	var problems []string
	seen := map[string]bool{}
	add := func(key string, problem func() string) {
		if !seen[key] {
			seen[key] = true
			problems = append(problems, problem())
		}
	}
	for _, w := range extra {
		msg := w.Error()
		l, ok := parseLocation(strings.TrimPrefix(msg, extraPrefix))
		if !strings.HasPrefix(msg, extraPrefix) || !ok {
			add(msg, func() string { return msg })
			continue
		}
		switch {
		case strings.EqualFold(l.section, sectionGlobal) && !l.hasVariable:
			add("global-named", func() string { return `[Global] takes no name: write [Global], not [Global "..."]` })
		case strings.EqualFold(l.section, sectionGlobal):
			add("global/"+strings.ToLower(l.variable), func() string {
				return fmt.Sprintf("unknown key %q in [Global]%s; known keys: %s",
					l.variable, suggest(l.variable, globalKeys), strings.Join(globalKeys, ", "))
			})
		case strings.EqualFold(l.section, sectionOverride):
			add("override\x00"+l.subsection+"\x00"+strings.ToLower(l.variable), func() string {
				return fmt.Sprintf("unknown key %q in %s%s; known keys: %s",
					l.variable, overrideHeader(l.subsection), suggest(l.variable, overrideKeys), strings.Join(overrideKeys, ", "))
			})
		default:
			add("section/"+strings.ToLower(l.section), func() string {
				return fmt.Sprintf("unknown section [%s]%s; known sections: [Global], [ServiceOverride \"<name>\"]",
					l.section, suggest(l.section, []string{sectionGlobal, sectionOverride}))
			})
		}
	}
	return problems
}

// overrideHeader renders a ServiceOverride section header for messages.
func overrideHeader(name string) string {
	if name == "" {
		return "[ServiceOverride]"
	}
	return fmt.Sprintf("[ServiceOverride %q]", name)
}

// suggest returns ` (did you mean "X"?)` for the known name closest to got.
func suggest(got string, known []string) string {
	if len(got) > 64 {
		return ""
	}
	best, bestDist := "", 0
	for _, k := range known {
		d := editDistance(strings.ToLower(got), strings.ToLower(k))
		if best == "" || d < bestDist {
			best, bestDist = k, d
		}
	}
	if best == "" || bestDist > 3 || (bestDist == 3 && len(best) < 9) {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// gcfg formats syntax errors as "line:column: message" (the file has no name).
var positioned = regexp.MustCompile(`(?s)^(\d+):(\d+): (.*)$`)

const locMarker = ` at section "`

// describeFatal rewrites gcfg's fatal error: syntax errors get "line N,
// column M", bad values name the key and the expected form.
func describeFatal(err error) string {
	var list scanner.ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		first := list[0]
		s := fmt.Sprintf("line %d, column %d: %s", first.Pos.Line, first.Pos.Column, first.Msg)
		if len(list) > 1 {
			s += fmt.Sprintf(" (and %d more errors)", len(list)-1)
		}
		return s
	}
	msg := err.Error()
	if m := positioned.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("line %s, column %s: %s", m[1], m[2], m[3])
	}
	if i := strings.LastIndex(msg, locMarker); i >= 0 {
		if l, ok := parseLocation(msg[i+len(" at "):]); ok && l.hasVariable {
			return describeBadValue(msg[:i], l)
		}
	}
	return "cannot parse the file: " + msg
}

func describeBadValue(msg string, l location) string {
	where := "[Global]"
	var t reflect.Type = reflect.TypeOf(Global{})
	if strings.EqualFold(l.section, sectionOverride) {
		where = overrideHeader(l.subsection)
		t = reflect.TypeOf(ServiceOverride{})
	}
	key := l.variable
	hint := ""
	if f, ok := t.FieldByNameFunc(func(n string) bool { return strings.EqualFold(n, l.variable) }); ok {
		key = f.Name
		switch f.Type.Kind() {
		case reflect.Bool:
			hint = "; use true or false"
		case reflect.Int:
			hint = "; use a whole number, e.g. 10256"
		}
	}
	if strings.Contains(msg, "blank value not supported") {
		return fmt.Sprintf("%s %s has no value; write %s = <value>", where, key, key)
	}
	return fmt.Sprintf("%s %s: invalid value: %s%s", where, key, msg, hint)
}
