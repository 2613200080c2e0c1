package nodephase

import (
	"fmt"
	"slices"
	"strings"

	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
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
	// opAddItem appends an item to the last occurrence's comma-separated
	// list (a map flag such as --node-labels merges its occurrences), or
	// adds the flag with that item when it is absent.
	opAddItem
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

func addItem(name, item string) flagOp { return flagOp{kind: opAddItem, name: name, value: item} }

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
		occs := nodefiles.ScanFlags(toks, start)
		var found []nodefiles.Occurrence
		for _, o := range occs {
			if o.Name == op.name && !deleted[o.Index] {
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
				deleted[o.Index] = true
				if o.ValueIndex >= 0 {
					deleted[o.ValueIndex] = true
				}
			}
		case opAddItem:
			if strings.ContainsAny(op.value, " \t\n,") {
				return nil, nil, fmt.Errorf("--%s: item %q has blanks or commas", op.name, op.value)
			}
			if len(found) == 0 {
				slots = insertFlag(slots, start, "--"+op.name+"="+op.value)
				break
			}
			last := found[len(found)-1]
			if last.Value == "" {
				setValue(slots, toks, last, op.value)
			} else {
				setValue(slots, toks, last, last.Value+","+op.value)
			}
		case opRemoveItem:
			for _, o := range found {
				items := strings.Split(o.Value, ",")
				kept := slices.DeleteFunc(slices.Clone(items), func(s string) bool { return strings.TrimSpace(s) == op.value })
				switch {
				case len(kept) == len(items):
				case len(kept) == 0:
					deleted[o.Index] = true
					if o.ValueIndex >= 0 {
						deleted[o.ValueIndex] = true
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
func setValue(slots []slot, toks []string, o nodefiles.Occurrence, value string) {
	if o.Value == value {
		return
	}
	i := indexOfOrig(slots, o.Index)
	switch {
	case o.Inline:
		eq := strings.IndexByte(toks[o.Index], '=')
		slots[i].text, slots[i].changed = toks[o.Index][:eq+1]+value, true
	case o.ValueIndex >= 0:
		j := indexOfOrig(slots, o.ValueIndex)
		slots[j].text, slots[j].changed = value, true
	default: // "--bool" alone
		slots[i].text, slots[i].changed = toks[o.Index]+"="+value, true
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
	occs := nodefiles.ScanFlags(cur, 0)
	// Without flags, the new one goes right after the command.
	pos := slices.IndexFunc(slots, func(s slot) bool { return s.orig >= start || s.orig < 0 })
	if pos < 0 {
		pos = len(slots)
	}
	if len(occs) > 0 {
		name, _, _ := strings.Cut(strings.TrimLeft(tok, "-"), "=")
		sorted := slices.IsSortedFunc(occs, func(a, b nodefiles.Occurrence) int { return strings.Compare(a.Name, b.Name) })
		pos = at[occs[len(occs)-1].End()] + 1
		if sorted {
			for _, o := range occs {
				if o.Name > name {
					pos = at[o.Index]
					break
				}
			}
		}
	}
	return slices.Insert(slots, pos, slot{text: tok, orig: -1})
}
