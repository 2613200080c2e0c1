package nodephase

import (
	"fmt"
	"slices"
	"strings"
)

// This file edits a command line as a list of tokens, without knowing where
// the tokens are written (a YAML sequence, an environment variable, a shell
// script). The result is a list of token edits that each container applies
// to its own text, so everything the edits do not name stays as written.

// opKind is a kind of flag change.
type opKind int

const (
	// opSet gives every occurrence of the flag the value, or adds the flag
	// when it is absent.
	opSet opKind = iota
	// opRemove removes every occurrence of the flag and its value.
	opRemove
	// opRemoveItem removes an item from the flag's comma-separated list, and
	// the flag when the list becomes empty.
	opRemoveItem
)

// flagOp is one change to a command line.
type flagOp struct {
	kind opKind
	// name is the flag's name without dashes.
	name string
	// value is the value (opSet) or the list item (opRemoveItem).
	value string
}

func setFlag(name, value string) flagOp { return flagOp{kind: opSet, name: name, value: value} }
func removeFlag(name string) flagOp     { return flagOp{kind: opRemove, name: name} }

//nolint:unparam // a flag-op constructor beside setFlag and removeFlag; one list flag uses it today
func removeItem(name, item string) flagOp {
	return flagOp{kind: opRemoveItem, name: name, value: item}
}

// editKind is a kind of token edit.
type editKind int

const (
	editReplace editKind = iota
	editDelete
	editInsert
)

// tokEdit is one edit of a token list.
type tokEdit struct {
	kind editKind
	// index is the token replaced or deleted; for an insert, the token the
	// new one follows (-1: before the first token).
	index int
	text  string
}

// occurrence is one flag on a command line.
type occurrence struct {
	name  string // normalised: no dashes, "_" as "-"
	index int    // the token naming the flag
	// valueIndex is the token holding the value in "--name value"; -1 when
	// the value is inline ("--name=value") or absent ("--bool").
	valueIndex int
	value      string
	inline     bool
}

// end is the last token of the occurrence.
func (o occurrence) end() int { return max(o.index, o.valueIndex) }

// scanFlags finds the flags in toks[start:] as nodefiles.ParseFlags reads
// them: "--a=b", "--a b" when b is not a flag, "--bool"; "--" ends the flags.
func scanFlags(toks []string, start int) []occurrence {
	var out []occurrence
	for i := start; i < len(toks); i++ {
		t := toks[i]
		if t == "--" {
			break
		}
		if !isFlag(t) {
			continue
		}
		name, value, inline := strings.Cut(strings.TrimPrefix(t[1:], "-"), "=")
		o := occurrence{name: normalizeName(name), index: i, valueIndex: -1, value: value, inline: inline}
		if !inline {
			o.value = "true"
			if i+1 < len(toks) && !isFlag(toks[i+1]) && toks[i+1] != "--" {
				o.valueIndex, o.value = i+1, toks[i+1]
				i++
			}
		}
		out = append(out, o)
	}
	return out
}

// isFlag is nodefiles' rule: one or two dashes then a name that starts with
// neither "-", "=", "_", "." nor a digit.
func isFlag(tok string) bool {
	if len(tok) < 2 || tok[0] != '-' || tok == "--" {
		return false
	}
	name := strings.TrimPrefix(tok[1:], "-")
	if name == "" || name[0] == '-' || name[0] == '=' || name[0] == '_' || name[0] == '.' {
		return false
	}
	return name[0] < '0' || name[0] > '9'
}

func normalizeName(name string) string { return strings.ReplaceAll(name, "_", "-") }

// slot is one token of the edited list: an original token (orig >= 0),
// possibly with new text, or a new one (orig == -1).
type slot struct {
	text    string
	orig    int
	changed bool
}

// editArgv applies ops to the flags of toks[start:] (toks[:start] is the
// command, never touched) and returns the token edits and the new list.
// A new flag goes where it keeps sorted flags sorted, else after the last
// flag, always as "--name=value".
func editArgv(toks []string, start int, ops []flagOp) ([]tokEdit, []string, error) {
	if start < 0 || start > len(toks) {
		return nil, nil, fmt.Errorf("command line start %d out of range", start)
	}
	slots := make([]slot, len(toks))
	for i, t := range toks {
		slots[i] = slot{text: t, orig: i}
	}
	deleted := map[int]bool{}
	for i, op := range ops {
		if slices.ContainsFunc(ops[:i], func(o flagOp) bool { return o.name == op.name }) {
			return nil, nil, fmt.Errorf("--%s: two changes to one flag", op.name)
		}
		occs := scanFlags(toks, start)
		var found []occurrence
		for _, o := range occs {
			if o.name == op.name && !deleted[o.index] {
				found = append(found, o)
			}
		}
		switch op.kind {
		case opSet:
			if strings.ContainsAny(op.value, " \t\n") {
				return nil, nil, fmt.Errorf("--%s: value %q has blanks", op.name, op.value)
			}
			for _, o := range found {
				setValue(slots, toks, o, op.value)
			}
			if len(found) == 0 {
				slots = insertFlag(slots, start, "--"+op.name+"="+op.value)
			}
		case opRemove:
			for _, o := range found {
				deleted[o.index] = true
				if o.valueIndex >= 0 {
					deleted[o.valueIndex] = true
				}
			}
		case opRemoveItem:
			for _, o := range found {
				items := strings.Split(o.value, ",")
				kept := slices.DeleteFunc(slices.Clone(items), func(s string) bool { return strings.TrimSpace(s) == op.value })
				switch {
				case len(kept) == len(items):
				case len(kept) == 0:
					deleted[o.index] = true
					if o.valueIndex >= 0 {
						deleted[o.valueIndex] = true
					}
				default:
					setValue(slots, toks, o, strings.Join(kept, ","))
				}
			}
		}
	}
	var edits []tokEdit
	var out []string
	anchor := start - 1
	for _, s := range slots {
		switch {
		case s.orig < 0:
			edits = append(edits, tokEdit{kind: editInsert, index: anchor, text: s.text})
			out = append(out, s.text)
		case deleted[s.orig]:
			edits = append(edits, tokEdit{kind: editDelete, index: s.orig})
		default:
			if s.changed && s.text != toks[s.orig] {
				edits = append(edits, tokEdit{kind: editReplace, index: s.orig, text: s.text})
			}
			out = append(out, s.text)
			anchor = s.orig
		}
	}
	return edits, out, nil
}

// setValue gives occurrence o the value, keeping the flag's spelling and
// form ("--name=value" or "--name value").
func setValue(slots []slot, toks []string, o occurrence, value string) {
	if o.value == value {
		return
	}
	i := indexOfOrig(slots, o.index)
	switch {
	case o.inline:
		eq := strings.IndexByte(toks[o.index], '=')
		slots[i].text, slots[i].changed = toks[o.index][:eq+1]+value, true
	case o.valueIndex >= 0:
		j := indexOfOrig(slots, o.valueIndex)
		slots[j].text, slots[j].changed = value, true
	default: // "--bool" alone
		slots[i].text, slots[i].changed = toks[o.index]+"="+value, true
	}
}

func indexOfOrig(slots []slot, orig int) int {
	return slices.IndexFunc(slots, func(s slot) bool { return s.orig == orig })
}

// insertFlag inserts tok among the flags after start: before the first flag
// that sorts after it when the flags are sorted, else after the last flag.
func insertFlag(slots []slot, start int, tok string) []slot {
	var cur []string
	var at []int // slot index of each token of cur
	for i, s := range slots {
		if s.orig < 0 || s.orig >= start {
			cur = append(cur, s.text)
			at = append(at, i)
		}
	}
	occs := scanFlags(cur, 0)
	// Without flags, the new one goes right after the command.
	pos := slices.IndexFunc(slots, func(s slot) bool { return s.orig >= start || s.orig < 0 })
	if pos < 0 {
		pos = len(slots)
	}
	if len(occs) > 0 {
		name, _, _ := strings.Cut(strings.TrimLeft(tok, "-"), "=")
		sorted := slices.IsSortedFunc(occs, func(a, b occurrence) int { return strings.Compare(a.name, b.name) })
		pos = at[occs[len(occs)-1].end()] + 1
		if sorted {
			for _, o := range occs {
				if o.name > name {
					pos = at[o.index]
					break
				}
			}
		}
	}
	return slices.Insert(slots, pos, slot{text: tok, orig: -1})
}
