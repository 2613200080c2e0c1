package childproc

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
)

// LogTail returns the end of the file at path: at most maxBytes bytes,
// without trailing newlines, starting at a line boundary when the range
// holds one (a partial first line is dropped; a single line longer than
// maxBytes is cut). It never fails: when the file cannot be read it returns
// a parenthesised note saying why, so the result can go straight into an
// error message.
func LogTail(path string, maxBytes int64) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	off := max(st.Size()-max(maxBytes, 0), 0)
	// Read one byte more than asked, to see whether the range starts a line.
	start := max(off-1, 0)
	b, err := io.ReadAll(io.NewSectionReader(f, start, st.Size()-start))
	if err != nil {
		return fmt.Sprintf("(reading log: %v)", err)
	}
	b = bytes.TrimRight(b, "\n")
	if off > 0 && len(b) > 0 {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		} else {
			b = b[1:]
		}
	}
	return string(b)
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago. The
// listener is closed before returning, so another process may take the port
// before the caller's child binds it; the child then fails to start, which
// callers report with its log.
func FreePort(ctx context.Context) (int, error) {
	l, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}
