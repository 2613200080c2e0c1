package procwatch

import (
	"fmt"
	"time"
)

// Description is what a process runs and since when, as the process has it
// (not as its unit files or manifests say it should).
type Description struct {
	Process
	// Argv is /proc/<pid>/cmdline: the program and its arguments.
	Argv []string
	// Started is the wall-clock start time: boot time plus the start ticks.
	Started time.Time
}

// Describe reads p's command line and start time, checking that the PID
// still belongs to p (same start time): a description of another process
// that reused the PID would be worse than none.
func (fs FS) Describe(p Process) (Description, error) {
	proc, err := fs.proc.Proc(p.PID)
	if err != nil {
		return Description{}, fmt.Errorf("read %s: %w", p, err)
	}
	st, err := proc.Stat()
	if err != nil {
		return Description{}, fmt.Errorf("read state of %s: %w", p, err)
	}
	if st.Starttime != p.StartTime {
		return Description{}, fmt.Errorf("%s has exited: pid %d is another process now", p, p.PID)
	}
	argv, err := proc.CmdLine()
	if err != nil {
		return Description{}, fmt.Errorf("read command line of %s: %w", p, err)
	}
	secs, err := st.StartTime()
	if err != nil {
		return Description{}, fmt.Errorf("read start time of %s: %w", p, err)
	}
	return Description{Process: p, Argv: argv, Started: time.Unix(0, int64(secs*float64(time.Second)))}, nil
}
