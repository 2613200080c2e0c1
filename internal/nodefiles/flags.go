package nodefiles

import (
	"fmt"
	"strconv"
	"strings"
)

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
	for ; i < len(args) && !IsFlag(args[i]); i++ {
		if args[i] == "--" {
			f.Command = append(f.Command, args[:i]...)
			f.Args = append(f.Args, args[i+1:]...)
			return f
		}
	}
	f.Command = append(f.Command, args[:i]...)
	taken := map[int]bool{}
	for _, o := range ScanFlags(args, i) {
		f.flags = append(f.flags, Flag{Name: o.Name, Value: o.Value, pos: o.Index})
		taken[o.Index], taken[o.ValueIndex] = true, true
	}
	for ; i < len(args); i++ {
		if args[i] == "--" {
			f.Args = append(f.Args, args[i+1:]...)
			break
		}
		if !taken[i] {
			f.Args = append(f.Args, args[i])
		}
	}
	return f
}

// Occurrence is one flag on a command line with the positions of its
// tokens, for a caller that edits the tokens where they are written.
type Occurrence struct {
	// Name is normalised as Flag.Name is.
	Name string
	// Index is the token naming the flag.
	Index int
	// ValueIndex is the token holding the value in "--name value"; -1 when
	// the value is inline ("--name=value") or absent ("--bool").
	ValueIndex int
	// Value is the flag's value; "true" for a flag given alone.
	Value string
	// Inline reports the "--name=value" form.
	Inline bool
}

// End is the last token of the occurrence.
func (o Occurrence) End() int { return max(o.Index, o.ValueIndex) }

// ScanFlags finds the flags in toks[start:] as ParseFlags reads them:
// "--a=b", "--a b" when b is not a flag, "--bool"; "--" ends the flags and
// other tokens are positional arguments, skipped.
func ScanFlags(toks []string, start int) []Occurrence {
	var out []Occurrence
	for i := start; i < len(toks); i++ {
		t := toks[i]
		if t == "--" {
			break
		}
		if !IsFlag(t) {
			continue
		}
		name, value, inline := strings.Cut(strings.TrimPrefix(t[1:], "-"), "=")
		o := Occurrence{Name: NormalizeName(name), Index: i, ValueIndex: -1, Value: value, Inline: inline}
		if !inline {
			o.Value = "true"
			if i+1 < len(toks) && !IsFlag(toks[i+1]) && toks[i+1] != "--" {
				o.ValueIndex, o.Value = i+1, toks[i+1]
				i++
			}
		}
		out = append(out, o)
	}
	return out
}

// IsFlag reports whether tok is a flag: one or two dashes then a name that
// starts with neither "-", "=", "_" (it would normalise to a dash), "." nor
// a digit (a negative number is a value).
func IsFlag(tok string) bool {
	if len(tok) < 2 || tok[0] != '-' || tok == "--" {
		return false
	}
	name := strings.TrimPrefix(tok[1:], "-")
	if name == "" || name[0] == '-' || name[0] == '=' || name[0] == '_' || name[0] == '.' {
		return false
	}
	return name[0] < '0' || name[0] > '9'
}

// NormalizeName spells a flag name as the Kubernetes components' flag sets
// do: "_" as "-".
func NormalizeName(name string) string { return strings.ReplaceAll(name, "_", "-") }

// Get returns the value of the last occurrence of name, as a flag set does
// for a scalar flag.
func (f Flags) Get(name string) (value string, ok bool) {
	if fl, ok := f.last(name); ok {
		return fl.Value, true
	}
	return "", false
}

func (f Flags) last(name string) (Flag, bool) {
	name = NormalizeName(name)
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

// Bool reads a boolean flag: def when it is absent, else its value as
// ParseBool reads it ("--flag" alone is "true"). The error names a value
// the component would have refused to start with.
func (f Flags) Bool(name string, def bool) (bool, error) {
	v, ok := f.Get(name)
	if !ok {
		return def, nil
	}
	b, err := ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("--%s=%s is not a boolean", name, v)
	}
	return b, nil
}

// ParseBool is the one rule for a boolean flag's value: the kubelet and the
// control-plane components parse theirs with pflag, which calls
// strconv.ParseBool, so "1", "t", "T", "true", "TRUE" and "True" are true,
// their "0"/"f"/"false" counterparts false, and anything else ("", "yes")
// is refused.
func ParseBool(value string) (bool, error) { return strconv.ParseBool(value) }

// Values returns every value given for name, in order (repeated flags, as
// slice flags such as --enable-admission-plugins accumulate them).
func (f Flags) Values(name string) []string {
	name = NormalizeName(name)
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
