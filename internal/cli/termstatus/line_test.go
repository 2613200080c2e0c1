package termstatus

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/awsccmctl/awsccmctl/internal/testbed/pty"
)

// clock is a hand-moved clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

// newTest returns a Line of width columns over a buffer, redrawn only when
// the test calls Refresh.
func newTest(width int) (*Line, *bytes.Buffer, *clock) {
	var buf bytes.Buffer
	c := &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	return New(&buf, Options{Width: func() int { return width }, Now: c.now, Interval: -1}), &buf, c
}

// frames splits what a Line wrote at each erase of the line.
func frames(s string) []string {
	return strings.Split(s, eraseLine)[1:]
}

func TestUpdatesInPlace(t *testing.T) {
	l, buf, c := newTest(120)
	l.Begin("DaemonSet/kube-system/aws-cloud-controller-manager")
	l.Update("0 of 3 Pods updated, 0 available")
	l.Refresh()
	c.advance(1500 * time.Millisecond)
	l.Update("1 of 3 Pods updated, 1 available")
	l.Refresh()
	l.Refresh() // nothing changed: nothing written
	c.advance(time.Second)
	l.Refresh() // the elapsed time moved
	want := []string{
		"DaemonSet/kube-system/aws-cloud-controller-manager (0s)",
		"DaemonSet/kube-system/aws-cloud-controller-manager (0s): 0 of 3 Pods updated, 0 available",
		"DaemonSet/kube-system/aws-cloud-controller-manager (1s): 1 of 3 Pods updated, 1 available",
		"DaemonSet/kube-system/aws-cloud-controller-manager (2s): 1 of 3 Pods updated, 1 available",
	}
	if got := frames(buf.String()); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("frames:\n%q\nwant\n%q", got, want)
	}
	if strings.Contains(buf.String(), "\n") {
		t.Errorf("a status line that updates wrote a newline: %q", buf.String())
	}
}

func TestTruncatesToWidth(t *testing.T) {
	l, buf, _ := newTest(40)
	l.Begin("waiting for kubelet-external")
	l.Update("4990 of 5000 nodes report; no report from ip-10-0-0-1.ec2.internal; and 4989 more")
	l.Refresh()
	for _, f := range frames(buf.String()) {
		if n := utf8.RuneCountInString(f); n > 39 {
			t.Errorf("frame %q is %d columns: wider than 39 on a 40-column terminal", f, n)
		}
	}
	got := frames(buf.String())
	if last := got[len(got)-1]; last != "waiting for kubelet-external (0s): 499…" {
		t.Errorf("cut frame %q", last)
	}
	if got := truncate("✓ short", 40); got != "✓ short" {
		t.Errorf("truncate cut a short line: %q", got)
	}
	if got := truncate("abcdef", 1); got != "…" {
		t.Errorf("truncate to 1 column: %q", got)
	}
}

// TestFollowsWidth: a resized terminal is redrawn at its new width.
func TestFollowsWidth(t *testing.T) {
	width := 80
	var buf bytes.Buffer
	c := &clock{}
	l := New(&buf, Options{Width: func() int { return width }, Now: c.now, Interval: -1})
	l.Begin("a wait with a title of thirty-six")
	width = 20
	l.Refresh()
	got := frames(buf.String())
	if last := got[len(got)-1]; last != "a wait with a titl…" { // 19 columns
		t.Errorf("after the resize: %q", last)
	}
}

func TestEndFreezesResult(t *testing.T) {
	l, buf, c := newTest(80)
	l.Begin("Lease/kube-system/cloud-controller-manager")
	l.Update("no Lease yet")
	l.Refresh()
	c.advance(3 * time.Second)
	l.End("✓ Lease/kube-system/cloud-controller-manager (3s): held by ip-10-0-0-1")
	end := buf.Len()
	l.Refresh()
	l.Update("late")
	l.Refresh()
	if buf.Len() != end {
		t.Errorf("an ended line was drawn again: %q", buf.String()[end:])
	}
	want := eraseLine + "Lease/kube-system/cloud-controller-manager (0s)" +
		eraseLine + "Lease/kube-system/cloud-controller-manager (0s): no Lease yet" +
		eraseLine + "✓ Lease/kube-system/cloud-controller-manager (3s): held by ip-10-0-0-1\n"
	if buf.String() != want {
		t.Errorf("wrote\n%q\nwant\n%q", buf.String(), want)
	}
	// The next wait gets a line of its own, below.
	l.Begin("Nodes")
	if got := buf.String()[end:]; got != eraseLine+"Nodes (0s)" {
		t.Errorf("the next wait wrote %q", got)
	}
}

// TestPermanentTextAbove: a line written while a wait shows goes above the
// status line, which is drawn again below it; a prompt (no newline) is not
// overwritten.
func TestPermanentTextAbove(t *testing.T) {
	l, buf, _ := newTest(80)
	l.Begin("waiting for cut-over")
	l.Update("the CCM does not lead yet")
	l.Refresh()
	buf.Reset()
	if _, err := l.Write([]byte("08:00:00.000   released Lease kube-system/kube-controller-manager\n")); err != nil {
		t.Fatal(err)
	}
	want := eraseLine + "08:00:00.000   released Lease kube-system/kube-controller-manager\n" + eraseLine + "waiting for cut-over (0s): the CCM does not lead yet"
	if buf.String() != want {
		t.Errorf("wrote\n%q\nwant\n%q", buf.String(), want)
	}
	buf.Reset()
	_, _ = l.Write([]byte("run step x?\n[y/N] "))
	l.Update("something new")
	l.Refresh()
	if got := buf.String(); got != eraseLine+"run step x?\n[y/N] " {
		t.Errorf("after a prompt: %q", got)
	}
}

// TestCloseFreezes: a command ending during a wait leaves the line as it
// stood, and the shell prompt starts on a line of its own.
func TestCloseFreezes(t *testing.T) {
	l, buf, c := newTest(80)
	l.Begin("Nodes")
	c.advance(4 * time.Second)
	l.Update("ip-10-0-0-1: no providerID")
	l.Close()
	if !strings.HasSuffix(buf.String(), eraseLine+"Nodes (4s): ip-10-0-0-1: no providerID\n") {
		t.Errorf("closed line: %q", buf.String())
	}
	l.Close() // twice: nothing more
	if strings.Count(buf.String(), "\n") != 1 {
		t.Errorf("second Close wrote: %q", buf.String())
	}
}

func TestOneLine(t *testing.T) {
	l, buf, _ := newTest(80)
	l.Begin("Nodes")
	l.Update("a: no providerID\nb: tainted\tstill\x1b[2J")
	l.Refresh()
	got := frames(buf.String())
	if last := got[len(got)-1]; last != "Nodes (0s): a: no providerID b: tainted still [2J" {
		t.Errorf("state with control characters drawn as %q", last)
	}
}

// syncBuffer is a buffer the redraw goroutine and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRedrawsOnItsOwn: an Update shows without a Refresh from the caller,
// and not at once: at the next redraw.
func TestRedrawsOnItsOwn(t *testing.T) {
	var buf syncBuffer
	l := New(&buf, Options{Interval: 20 * time.Millisecond})
	l.Begin("Nodes")
	l.Update("2 of 3 initialised")
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(buf.String(), "2 of 3 initialised") {
		if time.Now().After(deadline) {
			t.Fatalf("the update was never drawn: %q", buf.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	l.End("done")
	if !strings.HasSuffix(buf.String(), eraseLine+"done\n") {
		t.Errorf("ended with %q", buf.String())
	}
}

// TestForTerminal: a Line only over a terminal that can redraw, with the
// terminal's width.
func TestForTerminal(t *testing.T) {
	env := func(term string) Env {
		return func(k string) string {
			if k == "TERM" {
				return term
			}
			return ""
		}
	}
	if ForTerminal(&bytes.Buffer{}, env("xterm")) != nil {
		t.Error("a Line over a buffer")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close(); _ = w.Close() }()
	if ForTerminal(w, env("xterm")) != nil {
		t.Error("a Line over a pipe")
	}
	ptmx, tty, err := pty.Open(33, 10)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer func() { _ = ptmx.Close(); _ = tty.Close() }()
	if ForTerminal(tty, env("dumb")) != nil {
		t.Error("a Line on TERM=dumb")
	}
	l := ForTerminal(tty, env("xterm-256color"))
	if l == nil {
		t.Fatal("no Line over a terminal")
	}
	if got := l.width(); got != 33 {
		t.Errorf("width %d, want the terminal's 33", got)
	}
}
