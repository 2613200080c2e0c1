package migrate

import (
	"os"
	"testing"
)

// A holder is dead only when it ran on this host and its process is gone:
// a holder on another machine may be alive whatever this one sees.
func TestHolderDeadOn(t *testing.T) {
	alive := func(pid int) bool { return pid == 42 }
	for _, tc := range []struct {
		name string
		h    Holder
		dead bool
	}{
		{"this host, process gone", Holder{Host: "box", PID: 7}, true},
		{"this host, process alive", Holder{Host: "box", PID: 42}, false},
		{"another host, PID unknown here", Holder{Host: "other", PID: 7}, false},
		{"this host, no PID recorded", Holder{Host: "box"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.h.deadOn("box", alive); got != tc.dead {
				t.Errorf("deadOn = %v, want %v", got, tc.dead)
			}
		})
	}
	if !processAlive(os.Getpid()) {
		t.Error("this test's own process is not alive")
	}
	if processAlive(0) || processAlive(-1) {
		t.Error("no PID counts as alive")
	}
}
