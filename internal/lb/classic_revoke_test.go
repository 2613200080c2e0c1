package lb

import (
	"strings"
	"testing"
)

// TestReadOwed: the owedTagKey value round-trips, sorted, the managed flag
// kept; a value this CCM did not write is an error naming the tag and the
// entry, never a guess.
func TestReadOwed(t *testing.T) {
	o, err := readOwed("a1", map[string]string{owedTagKey: " sg-0b2:managed  sg-0a1 "})
	if err != nil {
		t.Fatalf("readOwed: %v", err)
	}
	wantEq(t, "groups", o.groups, map[string]bool{"sg-0a1": false, "sg-0b2": true})
	wantEq(t, "value", o.value(), "sg-0a1 sg-0b2:managed")
	o.owe("sg-0a1", true)
	o.owe("sg-0b2", false)
	wantEq(t, "value after owe", o.value(), "sg-0a1:managed sg-0b2:managed")

	for _, v := range []string{"sg-0a1,sg-0b2", "web", "sg-0a1:shared", "sg-"} {
		_, err := readOwed("a1", map[string]string{owedTagKey: v})
		if err == nil || !strings.Contains(err.Error(), owedTagKey) || !strings.Contains(err.Error(), "a1") {
			t.Errorf("readOwed(%q) = %v, want an error naming the tag and the load balancer", v, err)
		}
	}
	o, err = readOwed("a1", nil)
	if err != nil || len(o.groups) != 0 || o.value() != "" {
		t.Errorf("readOwed without the tag = %+v, %v; want nothing owed", o, err)
	}
}
