package testbed

import (
	"bytes"
	"os"
)

// logTailBytes is how much of a child's log goes into an error.
const logTailBytes = 4096

func logContains(path, s string) bool {
	b, err := os.ReadFile(path)
	return err == nil && bytes.Contains(b, []byte(s))
}
