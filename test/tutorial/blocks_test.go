package tutorial

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMarkers: markers are read from the line before a block's fence,
// a malformed or stray marker is an error, and the script holds a block
// marked with an exit code to exactly that code. It needs no test bed.
func TestMarkers(t *testing.T) {
	md := "x\n\n<!-- tutorial: skip: needs kubeadm -->\n```sh\nkubeadm init\n```\n\n" +
		"<!-- tutorial: exit 3: unreachable -->\n\n```sh\ntrue\nexit 3\n```\n```sh\necho ran\n```\n"
	blocks, err := parseBlocks("p.md", md)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 3 || blocks[0].skip != "needs kubeadm" || blocks[1].exit == nil || *blocks[1].exit != 3 || blocks[2].skip != "" || blocks[2].exit != nil {
		t.Fatalf("blocks: %+v", blocks)
	}
	s, skipped := script("p.md", blocks)
	if len(skipped) != 1 || skipped[0] != "p.md:5: needs kubeadm" {
		t.Errorf("skipped: %q", skipped)
	}
	if out, err := exec.CommandContext(context.Background(), "bash", "-c", s).CombinedOutput(); err != nil || !strings.Contains(string(out), "ran") || strings.Contains(string(out), "kubeadm init") {
		t.Errorf("script: %v\n%s", err, out)
	}
	// Another code than the marker's fails the script, and so does a
	// command failing before the block's last one.
	for _, body := range []string{"exit 1", "false\nexit 3"} {
		b := strings.Replace(md, "true\nexit 3", body, 1)
		blocks, err := parseBlocks("p.md", b)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := script("p.md", blocks)
		if out, err := exec.CommandContext(context.Background(), "bash", "-c", s).CombinedOutput(); err == nil || !strings.Contains(string(out), "want exit 3, got 1") {
			t.Errorf("%q: %v\n%s", body, err, out)
		}
	}
	for _, bad := range []string{
		"<!-- tutorial: skip -->\n```sh\nx\n```\n",
		"<!-- tutorial: exit one: x -->\n```sh\nx\n```\n",
		"<!-- tutorial: skip: stray -->\ntext\n\n```sh\nx\n```\n",
	} {
		if _, err := parseBlocks("p.md", bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestPagesMarkers: the pages' markers parse, without the test bed.
func TestPagesMarkers(t *testing.T) {
	for _, page := range []string{"docs/getting-started.md", "docs/install-existing-cluster.md", "docs/install-kubeadm.md"} {
		md, err := os.ReadFile(filepath.Join("../..", page))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := parseBlocks(page, string(md)); err != nil {
			t.Error(err)
		}
	}
}
