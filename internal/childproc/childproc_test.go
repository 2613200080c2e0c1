package childproc

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFreePort(t *testing.T) {
	port, err := FreePort(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if port <= 0 || port > 65535 {
		t.Fatalf("port %d", port)
	}
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatalf("listen on FreePort's %d: %v", port, err)
	}
	_ = l.Close()
}

func TestLogTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(path, []byte("first line\nsecond line\nthird\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		max  int64
		want string
	}{
		{1000, "first line\nsecond line\nthird"},
		{18, "second line\nthird"}, // starts exactly on a line
		{19, "second line\nthird"}, // partial "first line" dropped
		{17, "third"},              // partial "second line" dropped
		{6, "third"},
		{3, "rd"}, // a line longer than max is cut
		{0, ""},
	} {
		if got := LogTail(path, c.max); got != c.want {
			t.Errorf("LogTail(max %d) = %q, want %q", c.max, got, c.want)
		}
	}
	if got := LogTail(filepath.Join(t.TempDir(), "missing"), 10); !strings.HasPrefix(got, "(no log:") {
		t.Errorf("LogTail(missing) = %q", got)
	}
}
