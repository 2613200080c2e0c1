package termstatus

import (
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// eraseLine moves to the start of the line and clears it (ECMA-48 CR + EL).
const eraseLine = "\r\x1b[K"

// DefaultInterval is how often an active line is redrawn: the elapsed time
// moves once a second, a gate's state may change at every poll.
const DefaultInterval = 250 * time.Millisecond

// defaultWidth is the width assumed when the terminal does not say.
const defaultWidth = 80

// Options configure a Line.
type Options struct {
	// Width returns the terminal's width in columns, asked at every
	// redraw so a resized terminal is followed; nil or 0: 80.
	Width func() int
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Interval is how often the status line is redrawn (default
	// DefaultInterval); a negative one never redraws on its own (tests
	// call Refresh).
	Interval time.Duration
}

// Line writes to a terminal: permanent text, and at most one status line
// below it. It is safe for concurrent use (a migration's node Pods and its
// gate report from two goroutines).
type Line struct {
	w io.Writer
	o Options

	mu      sync.Mutex
	active  bool
	title   string
	state   string
	started time.Time
	// shown is the status line on the screen now ("" for none).
	shown string
	// midLine: permanent text was written without its newline (a prompt):
	// the status line waits for the line to end.
	midLine bool
	// stop ends the redraw goroutine of the active line; done says it did.
	stop, done chan struct{}
}

// New returns a Line writing to w, a terminal.
func New(w io.Writer, o Options) *Line {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Interval == 0 {
		o.Interval = DefaultInterval
	}
	return &Line{w: w, o: o}
}

// Write writes permanent text: the status line is cleared, the text
// written, and the status line drawn again below it once the text ends its
// line.
func (l *Line) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.clear(); err != nil {
		return 0, err
	}
	n, err := l.w.Write(p)
	if len(p) > 0 {
		l.midLine = p[len(p)-1] != '\n'
	}
	if err == nil {
		err = l.draw()
	}
	return n, err
}

// Begin starts a status line titled title, its elapsed time counted from
// now. A line still active is first frozen as it stands.
func (l *Line) Begin(title string) {
	l.stopRedraw()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.active {
		l.freezeLocked()
	}
	l.active, l.title, l.state, l.started = true, oneLine(title), "", l.o.Now()
	_ = l.draw()
	if l.o.Interval > 0 {
		l.stop, l.done = make(chan struct{}), make(chan struct{})
		go l.redraw(l.stop, l.done, l.o.Interval)
	}
}

// Update sets what the line waits for. It is drawn at the next redraw, so
// a gate polling many times a second does not flood the terminal.
func (l *Line) Update(state string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.state = oneLine(state)
}

// End replaces the status line by result, permanent text (not cut to the
// width: it is the step's outcome and may name what failed).
func (l *Line) End(result string) {
	l.stopRedraw()
	l.mu.Lock()
	defer l.mu.Unlock()
	_ = l.clear()
	l.active = false
	if result != "" {
		_, _ = io.WriteString(l.w, strings.TrimSuffix(result, "\n")+"\n")
		l.midLine = false
	}
}

// Close freezes an active status line as it stands (the command ends
// while it waits: an error, Ctrl-C) so the terminal keeps the last state.
func (l *Line) Close() {
	l.stopRedraw()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.active {
		l.freezeLocked()
	}
}

// Refresh redraws the status line if what it shows changed (the elapsed
// time, the state, the width).
func (l *Line) Refresh() {
	l.mu.Lock()
	defer l.mu.Unlock()
	_ = l.draw()
}

func (l *Line) redraw(stop, done chan struct{}, every time.Duration) {
	defer close(done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			l.Refresh()
		}
	}
}

func (l *Line) stopRedraw() {
	l.mu.Lock()
	stop, done := l.stop, l.done
	l.stop, l.done = nil, nil
	l.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

// freezeLocked leaves the status line on the screen as it stands and ends
// it.
func (l *Line) freezeLocked() {
	_ = l.draw()
	if l.shown != "" {
		_, _ = io.WriteString(l.w, "\n")
	}
	l.active, l.shown = false, ""
}

// text is the status line: title, elapsed time and state, cut to width.
func (l *Line) text() string {
	s := l.title + " (" + l.o.Now().Sub(l.started).Truncate(time.Second).String() + ")"
	if l.state != "" {
		s += ": " + l.state
	}
	return truncate(s, l.width())
}

func (l *Line) width() int {
	if l.o.Width != nil {
		if w := l.o.Width(); w > 0 {
			return w
		}
	}
	return defaultWidth
}

// draw shows the status line if it changed.
func (l *Line) draw() error {
	if !l.active || l.midLine {
		return nil
	}
	t := l.text()
	if t == l.shown {
		return nil
	}
	l.shown = t
	_, err := io.WriteString(l.w, eraseLine+t)
	return err
}

// clear erases the status line from the screen.
func (l *Line) clear() error {
	if l.shown == "" {
		return nil
	}
	l.shown = ""
	_, err := io.WriteString(l.w, eraseLine)
	return err
}

// truncate cuts s to width-1 columns, ending in "…" when cut: a line as
// wide as the terminal makes some terminals wrap at its last column. It
// counts a rune as a column, which holds for the ASCII, "✓" and "…" the
// lines are made of.
func truncate(s string, width int) string {
	limit := max(width-1, 1)
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == limit-1 {
			break
		}
		b.WriteRune(r)
		n++
	}
	b.WriteString("…")
	return b.String()
}

// oneLine makes s fit one line: control characters (a newline in an error,
// a tab) would move the cursor off the line the status redraws.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, strings.TrimSpace(s))
}
