//go:build linux

package bench

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// dropFromPageCache asks the kernel to drop the file's cached pages, so
// that every CCM starts from the same, cold, page cache.
//
// Why: RssFile, half of a CCM's peak RSS, is the part of its binary mapped
// into it, and the kernel maps the cached pages around each page a start
// touches (fault-around). How much of the file is cached, and how, differs
// with what ran it before: the same two builds measured RssFile 62.3
// against 52.5 MiB in the lifecycle scenario at 5,000 Nodes with one binary
// just written, and 51.4 against 52.1 MiB in the next run of that scenario
// once both files had been dropped. Dropping both binaries' pages before each start
// compares like with like. A CCM that runs still has its pages: only
// pages no process maps are dropped.
func dropFromPageCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("drop %s from the page cache: %w", path, err)
	}
	return nil
}
