package gather

import (
	"slices"
	"strings"
	"testing"
)

// TestEveryCheckIsDocumented: every check of every mode says what it means
// and how to fix it, in sentences of its own (not its title again), so the
// generated reference has both for each check.
func TestEveryCheckIsDocumented(t *testing.T) {
	node, cluster, aws := ReferenceChecks()
	all := slices.Concat(node, cluster, aws)
	if len(node) == 0 || len(cluster) == 0 || len(aws) == 0 {
		t.Fatalf("%d node, %d cluster, %d AWS checks", len(node), len(cluster), len(aws))
	}
	for _, c := range all {
		for field, text := range map[string]string{"description": c.Description, "fix": c.Fix} {
			text = strings.TrimSpace(text)
			switch {
			case text == "":
				t.Errorf("%s has no %s", c.ID, field)
			case text == c.Title:
				t.Errorf("%s: the %s only repeats the title", c.ID, field)
			case !strings.HasSuffix(text, ".") || len(text) < 40:
				t.Errorf("%s: %s %q is not a sentence or two", c.ID, field, text)
			}
		}
		if c.Description == c.Fix {
			t.Errorf("%s: description and fix are the same", c.ID)
		}
	}
}
