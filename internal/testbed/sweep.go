package testbed

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// A test run killed outright (a CI timeout, an interrupted make test) never
// runs Stop, and its control plane's folder stays in the temporary folder:
// etcd's data, the binaries a suite builds there, logs, hundreds of MB
// each. Start writes the owner's PID into each folder it makes, and removes
// the folders whose owner is gone before it makes its own.

// ownerFile names the PID of the process whose control plane the folder is.
const ownerFile = "owner.pid"

// dirPattern is the folders Start makes in the temporary folder.
const dirPattern = "testbed-*"

// writeOwner records this process as dir's owner.
func writeOwner(dir string) error {
	return os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600)
}

// sweepAbandoned removes the control-plane folders in root whose owner no
// longer runs, and returns them. A folder without an owner file (another
// version's, or one being made) is kept, as is one whose PID runs, even if
// the PID was reused: a folder is removed only when it is surely
// abandoned.
func sweepAbandoned(root string) ([]string, error) {
	dirs, err := filepath.Glob(filepath.Join(root, dirPattern))
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, dir := range dirs {
		data, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil || pid <= 0 || running(pid) {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, dir)
	}
	return removed, errors.Join(errs...)
}

// running reports whether a process with pid exists (signal 0 signals
// nothing; EPERM means it exists under another user).
func running(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
