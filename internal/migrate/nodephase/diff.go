package nodephase

import (
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// unifiedDiff renders the change from a to b as a unified diff with three
// lines of context; a missing side (exists false) is /dev/null.
func unifiedDiff(from, to string, a, b []byte, aExists, bExists bool) string {
	if !aExists {
		from = "/dev/null"
	}
	if !bExists {
		to = "/dev/null"
	}
	d := difflib.UnifiedDiff{A: diffLines(string(a)), B: diffLines(string(b)), FromFile: from, ToFile: to, Context: 3}
	s, err := difflib.GetUnifiedDiffString(d)
	if err != nil {
		return ""
	}
	return s
}

// diffLines splits s into lines that keep their line break; a last line
// without one is marked as diff(1) does.
func diffLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if last := lines[len(lines)-1]; last == "" {
		lines = lines[:len(lines)-1]
	} else {
		lines[len(lines)-1] = last + "\n\\ No newline at end of file\n"
	}
	return lines
}
