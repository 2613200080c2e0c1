package nodefiles

import (
	"fmt"
	"regexp"
	"strings"
)

// This file parses what systemd reads to start the kubelet: unit files and
// drop-ins, environment files and the ExecStart= command line. It follows
// systemd.service(5) and systemd.exec(5) rather than shell rules where they
// differ (see expandExec).

// unitEntry is one KEY=VALUE line of a unit file.
type unitEntry struct {
	Section, Key, Value string
	Line                int
}

// parseUnit parses a unit file. Lines ending in a backslash continue on the
// next line; "#" and ";" start comments. It returns every assignment and a
// description of each line systemd would reject.
func parseUnit(data string) (entries []unitEntry, issues []string) {
	lines := strings.Split(strings.ReplaceAll(data, "\r\n", "\n"), "\n")
	section := ""
	for i := 0; i < len(lines); i++ {
		start := i + 1
		line := strings.TrimSpace(lines[i])
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		for strings.HasSuffix(line, `\`) && i+1 < len(lines) {
			i++
			next := strings.TrimSpace(lines[i])
			if next != "" && (next[0] == '#' || next[0] == ';') {
				line = strings.TrimSuffix(line, `\`) + `\`
				continue
			}
			line = strings.TrimSuffix(line, `\`) + " " + next
		}
		line = strings.TrimSpace(strings.TrimSuffix(line, `\`))
		if line == "" {
			continue
		}
		if line[0] == '[' {
			if !strings.HasSuffix(line, "]") || len(line) < 3 {
				issues = append(issues, fmt.Sprintf("line %d: malformed section header %q", start, line))
				continue
			}
			section = line[1 : len(line)-1]
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			issues = append(issues, fmt.Sprintf("line %d: not a KEY=VALUE assignment: %q", start, truncate(line)))
			continue
		}
		if section == "" {
			issues = append(issues, fmt.Sprintf("line %d: assignment outside a [section]", start))
			continue
		}
		entries = append(entries, unitEntry{Section: section, Key: strings.TrimSpace(key), Value: strings.TrimSpace(value), Line: start})
	}
	return entries, issues
}

// envVar is one variable of an environment file or Environment= line.
type envVar struct {
	Name, Value string
	// Source is the node path of the file that set it.
	Source string
}

var envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// EnvLine is one logical line of an environment file, with the byte
// positions an editor needs to change a value in place.
type EnvLine struct {
	// Line is the 1-based line the entry starts on.
	Line int
	// Assignment reports a KEY=VALUE line; Text holds any other line.
	Assignment bool
	Text       string
	// Name is the variable, blanks trimmed.
	Name string
	// ValueStart and ValueEnd delimit the raw value: from the first
	// non-blank after "=" to the last non-blank of the logical line, quotes
	// and backslashes as written.
	ValueStart, ValueEnd int
	// End is where the logical line ends: its newline or the end of the text.
	End int
}

// ScanEnvFile finds the lines of an EnvironmentFile= file as systemd reads
// them: "#" and ";" start comment lines (skipped), quotes may span lines and
// a backslash escapes the next character (a newline too). Positions are
// offsets in s.
func ScanEnvFile(s string) []EnvLine {
	var out []EnvLine
	line, counted := 1, 0
	for i := 0; i < len(s); {
		switch s[i] {
		case '\n', ' ', '\t':
			i++
			continue
		case '#', ';':
			for i < len(s) && s[i] != '\n' {
				i++
			}
			continue
		}
		line += strings.Count(s[counted:i], "\n")
		counted = i
		eol := strings.IndexByte(s[i:], '\n')
		if eol < 0 {
			eol = len(s) - i
		}
		key, _, ok := strings.Cut(s[i:i+eol], "=")
		if !ok {
			out = append(out, EnvLine{Line: line, Text: s[i : i+eol], End: i + eol})
			i += eol
			continue
		}
		i += len(key) + 1
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		start, end := i, i
		for i < len(s) && s[i] != '\n' {
			switch c := s[i]; c {
			case '"', '\'':
				j := i + 1
				for j < len(s) && s[j] != c {
					if c == '"' && s[j] == '\\' {
						j++
					}
					j++
				}
				i = min(j+1, len(s))
				end = i
			case '\\':
				i = min(i+2, len(s))
				end = i
			case ' ', '\t', '\r':
				i++
			default:
				i++
				end = i
			}
		}
		out = append(out, EnvLine{Line: line, Assignment: true, Name: strings.TrimSpace(key), ValueStart: start, ValueEnd: end, End: i})
	}
	return out
}

// parseEnvFile parses an EnvironmentFile= file: KEY=VALUE lines, values
// optionally in single quotes (literal) or double quotes (backslash escapes
// `\"`, `\\`, `\$`, "\`" and line continuation), unquoted values with
// backslash escapes and trailing blanks removed; "#" and ";" start comment
// lines. Lines systemd would ignore are reported as issues.
func parseEnvFile(data string) (vars []envVar, issues []string) {
	s := strings.ReplaceAll(data, "\r\n", "\n")
	for _, l := range ScanEnvFile(s) {
		if !l.Assignment {
			issues = append(issues, fmt.Sprintf("line %d: not a KEY=VALUE assignment: %q", l.Line, truncate(l.Text)))
			continue
		}
		value, unterminated := decodeEnvValue(s[l.ValueStart:l.End])
		if unterminated != 0 {
			issues = append(issues, fmt.Sprintf("line %d: %s has an unterminated %c quote", l.Line, l.Name, unterminated))
		}
		if !envNamePattern.MatchString(l.Name) {
			issues = append(issues, fmt.Sprintf("line %d: invalid variable name %q (systemd ignores the line)", l.Line, truncate(l.Name)))
			continue
		}
		vars = append(vars, envVar{Name: l.Name, Value: value})
	}
	return vars, issues
}

// decodeEnvValue decodes a raw value as systemd does: quotes removed,
// backslash escapes resolved, backslash-newline joined, trailing blanks
// dropped. unterminated is the quote left open, or 0.
func decodeEnvValue(s string) (value string, unterminated byte) {
	var b strings.Builder
	pendingBlanks := ""
	for i := 0; i < len(s); {
		switch c := s[i]; c {
		case '\'', '"':
			text, n, closed := readQuoted(s[i+1:], c)
			if !closed && unterminated == 0 {
				unterminated = c
			}
			b.WriteString(pendingBlanks)
			pendingBlanks = ""
			b.WriteString(text)
			i += 1 + n
		case '\\':
			if i+1 < len(s) && s[i+1] != '\n' {
				b.WriteString(pendingBlanks)
				pendingBlanks = ""
				b.WriteByte(s[i+1])
			}
			i += 2
		case ' ', '\t':
			pendingBlanks += string(c)
			i++
		default:
			b.WriteString(pendingBlanks)
			pendingBlanks = ""
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), unterminated
}

// readQuoted reads a quoted string after its opening quote q. It returns the
// unquoted text, the bytes consumed (closing quote included) and whether the
// quote was closed. Double quotes honour \" \\ \$ \` and backslash-newline.
func readQuoted(s string, q byte) (text string, n int, closed bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == q {
			return b.String(), i + 1, true
		}
		if q == '"' && c == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '"', '\\', '$', '`':
				b.WriteByte(s[i+1])
				i++
				continue
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String(), len(s), false
}

// splitWords splits a systemd command line or Environment= value into words:
// blanks separate words, single and double quotes group (also mid-word) and
// a backslash escapes the next character (C escapes \n \t \r are decoded).
// relax accepts an unterminated quote or trailing backslash, as systemd does
// when it splits a variable's value.
func splitWords(s string, relax bool) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case '\\':
			inWord = true
			if i+1 >= len(s) {
				if !relax {
					return nil, fmt.Errorf("trailing backslash")
				}
				w.WriteByte('\\')
				continue
			}
			i++
			w.WriteString(cUnescape(s[i]))
		case '"', '\'':
			inWord = true
			text, n, closed := readQuoted(s[i+1:], c)
			if !closed && !relax {
				return nil, fmt.Errorf("unterminated %c quote", c)
			}
			w.WriteString(text)
			i += n
		default:
			inWord = true
			w.WriteByte(c)
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

func cUnescape(c byte) string {
	switch c {
	case 'n':
		return "\n"
	case 't':
		return "\t"
	case 'r':
		return "\r"
	}
	return string(c)
}

// wholeVarPattern matches a word that is exactly $NAME.
var wholeVarPattern = regexp.MustCompile(`^\$[A-Za-z_][A-Za-z0-9_]*$`)

// inlineVarPattern matches ${NAME} and $$ inside a word.
var inlineVarPattern = regexp.MustCompile(`\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$\$`)

// expandExec turns an ExecStart= value into argv as systemd does: prefixes
// ("-", "@", ":", "+", "!") are removed, the line is split into words (quotes
// removed) and then a word that is exactly $NAME becomes the variable's value
// split into words, while ${NAME} inside a word is replaced in place. This is
// why kops's `kubelet "$DAEMON_ARGS"` yields one argument per flag, where a
// shell would pass a single argument. ":" turns expansion off. origins[i]
// says where argv[i] came from; refs lists the $NAME words in order.
func expandExec(value, unit string, env map[string]envVar) (argv []string, origins []Origin, refs []string, err error) {
	expand, argv0 := true, false
	for value != "" && strings.ContainsRune("-@:+!", rune(value[0])) {
		switch value[0] {
		case ':':
			expand = false
		case '@':
			argv0 = true
		}
		value = value[1:]
	}
	words, err := splitWords(strings.ReplaceAll(value, "%%", "%"), false)
	if err != nil {
		return nil, nil, nil, err
	}
	if argv0 && len(words) > 1 {
		words = append(words[:1], words[2:]...)
	}
	for _, w := range words {
		if expand && wholeVarPattern.MatchString(w) {
			name := w[1:]
			refs = append(refs, name)
			v, ok := env[name]
			if !ok {
				continue
			}
			parts, _ := splitWords(v.Value, true)
			for _, p := range parts {
				argv = append(argv, p)
				origins = append(origins, Origin{File: v.Source, Variable: name})
			}
			continue
		}
		if expand {
			w = inlineVarPattern.ReplaceAllStringFunc(w, func(m string) string {
				if m == "$$" {
					return "$"
				}
				return env[m[2:len(m)-1]].Value
			})
		}
		argv = append(argv, w)
		origins = append(origins, Origin{File: unit})
	}
	return argv, origins, refs, nil
}

func truncate(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}
