package cloudconfig

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/gcfg.v1"
	"gopkg.in/gcfg.v1/scanner"
	"gopkg.in/warnings.v0"
)

// Error is the error Parse, Validate and Load return for problems in the
// file's content. Each problem names the section and key and says how to fix
// it.
type Error struct {
	// Problems are one-line descriptions: the values that do not parse,
	// unknown sections and keys, repeated ones (each group in file order),
	// then what Validate finds.
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
// Decoding is strict, and every problem is reported at once in one *Error:
// each value that does not parse (gcfg stops at the first; Parse reads on
// past it, see decode), then each unknown section and key, with the known
// names, then each section or single-valued key that occurs more than once
// (gcfg would keep the last value), with its lines. A syntax error names its
// line and column, and ends the reading. A leading UTF-8 byte-order mark is
// skipped.
func Parse(data []byte) (*Config, error) {
	c, problems, _ := decode(data)
	if len(problems) > 0 {
		return nil, &Error{Problems: problems}
	}
	return c, nil
}

// Check returns every problem of the file at once, as Load would report
// them: what Parse finds, and what Validate (after Default) finds in the
// values that did parse. nil when the file loads. The installer keeps what
// Parse returns (the file's own values, without the defaults) and calls
// Check for the full list when Parse fails, so a bad value never hides a bad
// VPC below it.
func Check(data []byte) error {
	_, err := load(data)
	return err
}

// decode reads data with gcfg and returns the config with every problem.
// gcfg stops at the first value it cannot store (a bool "maybe", a port
// "x"), which would hide every unknown key, unknown section and bad value
// after it. So decode notes that problem, blanks the key's line in a copy of
// the file and reads again, until gcfg reads the whole file: the config then
// holds every value that parsed. Each round blanks one line, so the rounds
// are bounded by the file's lines. A syntax error (or a literal gcfg cannot
// unquote) ends the reading, with a nil config.
//
// It also returns the names of the keys it blanked, as "[Global] Key" or
// "[ServiceOverride "name"] Key" (Validate's way), so load does not report
// them a second time as missing.
func decode(data []byte) (*Config, []string, []string) {
	data = bytes.TrimPrefix(data, utf8BOM)
	work := bytes.Clone(data)
	var problems, blanked []string
	for {
		c := &Config{}
		readErr, panicked := readInto(c, work)
		if panicked != "" {
			return nil, append(problems, "cannot parse the file: "+panicked), blanked
		}
		fatal := gcfg.FatalOnly(readErr)
		if fatal == nil {
			problems = append(problems, describeExtra(warnings.WarningsOnly(readErr))...)
			// The original text: blanked lines are still duplicates.
			problems = append(problems, duplicates(data)...)
			return c, problems, blanked
		}
		if p := describeFatal(fatal); !slices.Contains(problems, p) {
			problems = append(problems, p)
		}
		l, ok := badValueLocation(fatal)
		if !ok {
			return nil, problems, blanked
		}
		if work, ok = blankKey(work, l); !ok {
			// gcfg named a key the scanner cannot find: never loop.
			return nil, problems, blanked
		}
		blanked = append(blanked, l.key())
	}
}

// readInto is gcfg.ReadInto that turns a panic into its message: gcfg's
// unquote panics on literals its scanner should have refused, and a
// malformed file must never crash the CCM.
func readInto(c *Config, data []byte) (err error, panicked string) { //nolint:staticcheck // ST1008: the panic message is a second report beside the error, not a result the error qualifies
	defer func() {
		if r := recover(); r != nil {
			panicked = fmt.Sprint(r)
		}
	}()
	return gcfg.ReadInto(c, bytes.NewReader(data)), ""
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

// load is Load without the file. When some values do not parse, the others
// are still defaulted and validated, so one *Error lists every problem.
func load(data []byte) (*Config, error) {
	c, problems, blanked := decode(data)
	if c != nil {
		c.Default()
		var ve *Error
		if err := c.Validate(); errors.As(err, &ve) {
			for _, p := range ve.Problems {
				// "Service is missing" after "Service has no value"
				// says the same twice.
				if !slices.ContainsFunc(blanked, func(k string) bool { return strings.HasPrefix(p, k+" ") }) {
					problems = append(problems, p)
				}
			}
		} else if err != nil {
			problems = append(problems, err.Error())
		}
	}
	if len(problems) > 0 {
		return nil, &Error{Problems: problems}
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
	t := reflect.TypeOf(Global{})
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
		default:
			// Other kinds need no hint beyond the parser's message.
		}
	}
	if strings.Contains(msg, "blank value not supported") {
		return fmt.Sprintf("%s %s has no value; write %s = <value>", where, key, key)
	}
	return fmt.Sprintf("%s %s: invalid value: %s%s", where, key, msg, hint)
}
