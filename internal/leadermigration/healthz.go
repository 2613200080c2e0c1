package leadermigration

import (
	"bufio"
	"slices"
	"strings"
)

// This file reads /healthz?verbose, which is how the migration tells which
// of the migrated controllers a controller manager runs.

// HealthzChecks parses /healthz?verbose: the names of the checks that
// answered "[+]name ok".
func HealthzChecks(body string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if name, ok := strings.CutPrefix(line, "[+]"); ok {
			name = strings.TrimSuffix(name, " ok")
			out = append(out, name)
		}
	}
	return out
}

// Running returns those of names that list holds: which migrated
// controllers a /healthz?verbose answer shows running.
func Running(list []string, names []string) []string {
	var out []string
	for _, n := range names {
		if slices.Contains(list, n) {
			out = append(out, n)
		}
	}
	return out
}
