//go:build linux

package procwatch

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestDescribe: the command line and start time of a real child, read from
// /proc; a Process whose start time is not the PID's is refused.
func TestDescribe(t *testing.T) {
	fs := newFS(t)
	before := time.Now()
	cmd, port := startListener(t, "tcp4", "127.0.0.1:0", false)
	after := time.Now()
	p, err := fs.ListenerOf(port)
	if err != nil {
		t.Fatal(err)
	}
	d, err := fs.Describe(p)
	if err != nil {
		t.Fatal(err)
	}
	if d.PID != cmd.Process.Pid || len(d.Argv) == 0 || d.Argv[0] != os.Args[0] {
		t.Errorf("Describe = pid %d argv %q, want pid %d running %s", d.PID, d.Argv, cmd.Process.Pid, os.Args[0])
	}
	// Start ticks are 1/100 s, boot time whole seconds: allow both.
	if d.Started.Before(before.Add(-time.Second)) || d.Started.After(after.Add(time.Second)) {
		t.Errorf("Started = %s, want between %s and %s", d.Started, before, after)
	}
	other := p
	other.StartTime++
	if _, err := fs.Describe(other); err == nil || !strings.Contains(err.Error(), "another process") {
		t.Errorf("Describe of a reused PID: %v, want an error saying the PID is another process", err)
	}
}
