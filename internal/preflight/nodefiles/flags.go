package nodefiles

import "strings"

// Flag is one flag occurrence on a command line.
type Flag struct {
	// Name is without dashes, with "_" normalised to "-" as the Kubernetes
	// components' flag sets do ("--cluster_dns" is "cluster-dns").
	Name string
	// Value is the flag's value; a flag given alone ("--bool") is "true".
	Value string
	// pos is the index of the token that named the flag.
	pos int
}

// Flags is a parsed command line, in order.
type Flags struct {
	// Command holds the tokens before the first flag (the binary).
	Command []string
	// Args holds positional arguments after the flags and after "--".
	Args  []string
	flags []Flag
}

// ParseFlags parses a Kubernetes component command line. It accepts
// "--a=b", "--a b" (when the next token is not a flag), "--bool" (true) and
// single-dash forms such as "-v=2"; tokens before the first flag are the
// command and "--" ends the flags. Which flags are booleans is unknown here,
// so "--bool value" reads value as the flag's value.
func ParseFlags(args []string) Flags {
	var f Flags
	i := 0
	for ; i < len(args) && !isFlag(args[i]); i++ {
		if args[i] == "--" {
			f.Command = append(f.Command, args[:i]...)
			f.Args = append(f.Args, args[i+1:]...)
			return f
		}
	}
	f.Command = append(f.Command, args[:i]...)
	for ; i < len(args); i++ {
		tok := args[i]
		if tok == "--" {
			f.Args = append(f.Args, args[i+1:]...)
			break
		}
		if !isFlag(tok) {
			f.Args = append(f.Args, tok)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(tok[1:], "-"), "=")
		fl := Flag{Name: normalizeName(name), Value: value, pos: i}
		if !hasValue {
			fl.Value = "true"
			if i+1 < len(args) && !isFlag(args[i+1]) && args[i+1] != "--" {
				fl.Value = args[i+1]
				i++
			}
		}
		f.flags = append(f.flags, fl)
	}
	return f
}

// isFlag reports whether tok is a flag: one or two dashes then a name that
// starts with neither "-", "=", "_" (it would normalise to a dash) nor a
// digit (a negative number is a value).
func isFlag(tok string) bool {
	if len(tok) < 2 || tok[0] != '-' || tok == "--" {
		return false
	}
	name := strings.TrimPrefix(tok[1:], "-")
	if name == "" || name[0] == '-' || name[0] == '=' || name[0] == '_' {
		return false
	}
	return (name[0] < '0' || name[0] > '9') && name[0] != '.'
}

func normalizeName(name string) string { return strings.ReplaceAll(name, "_", "-") }

// Get returns the value of the last occurrence of name, as a flag set does
// for a scalar flag.
func (f Flags) Get(name string) (value string, ok bool) {
	if fl, ok := f.last(name); ok {
		return fl.Value, true
	}
	return "", false
}

func (f Flags) last(name string) (Flag, bool) {
	name = normalizeName(name)
	for i := len(f.flags) - 1; i >= 0; i-- {
		if f.flags[i].Name == name {
			return f.flags[i], true
		}
	}
	return Flag{}, false
}

// Has reports whether name was given.
func (f Flags) Has(name string) bool {
	_, ok := f.last(name)
	return ok
}

// Values returns every value given for name, in order (repeated flags, as
// slice flags such as --enable-admission-plugins accumulate them).
func (f Flags) Values(name string) []string {
	name = normalizeName(name)
	var out []string
	for _, fl := range f.flags {
		if fl.Name == name {
			out = append(out, fl.Value)
		}
	}
	return out
}

// All returns every flag occurrence in order.
func (f Flags) All() []Flag { return append([]Flag(nil), f.flags...) }

// Tokens renders the command line back to tokens that ParseFlags reads as
// the same flags: the command, "--name=value" per flag, then "--" and the
// positional arguments.
func (f Flags) Tokens() []string {
	out := append([]string(nil), f.Command...)
	for _, fl := range f.flags {
		out = append(out, "--"+fl.Name+"="+fl.Value)
	}
	if len(f.Args) > 0 {
		out = append(out, "--")
		out = append(out, f.Args...)
	}
	return out
}

// String renders the command line for humans, quoting tokens a shell would
// split.
func (f Flags) String() string {
	toks := f.Tokens()
	for i, t := range toks {
		if t == "" || strings.ContainsAny(t, " \t\n'\"\\$`;&|<>*?()[]{}#~") {
			toks[i] = "'" + strings.ReplaceAll(t, "'", `'\''`) + "'"
		}
	}
	return strings.Join(toks, " ")
}
