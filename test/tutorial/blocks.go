package tutorial

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/awsccmctl/awsccmctl/internal/mdfence"
)

// block is one sh block of a page and what its marker says about it.
type block struct {
	mdfence.Block
	// skip is why the block cannot run on the test bed ("" when it runs).
	skip string
	// exit is the code the block ends with on the test bed, when its
	// marker names one; the block then runs in a subshell with -e, so a
	// command of it that fails earlier ends it with another code.
	exit *int
	// reason is the marker's explanation.
	reason string
}

// A marker is an HTML comment on the last non-blank line before a block's
// fence, invisible to readers of the rendered page:
//
//	<!-- tutorial: skip: why it cannot run on the test bed -->
//	<!-- tutorial: exit 1: why it ends with 1 on the test bed -->
var (
	anyMarker  = regexp.MustCompile(`<!--\s*tutorial:`)
	skipMarker = regexp.MustCompile(`^<!-- tutorial: skip: (\S.*) -->$`)
	exitMarker = regexp.MustCompile(`^<!-- tutorial: exit ([0-9]+): (\S.*) -->$`)
)

// parseBlocks returns the sh blocks of md with their markers. A marker
// that is malformed or precedes no sh block is an error: a block must
// never be skipped by accident.
func parseBlocks(page, md string) ([]block, error) {
	lines := strings.Split(md, "\n")
	var blocks []block
	attached := 0
	for _, b := range mdfence.Blocks(md, "sh") {
		bl := block{Block: b}
		// b.Line is the 1-based line of the first content line, so the
		// fence is lines[b.Line-2]; look above it.
		i := b.Line - 3
		for i >= 0 && strings.TrimSpace(lines[i]) == "" {
			i--
		}
		if i >= 0 && anyMarker.MatchString(lines[i]) {
			marker := strings.TrimSpace(lines[i])
			attached++
			if m := skipMarker.FindStringSubmatch(marker); m != nil {
				bl.skip, bl.reason = m[1], m[1]
			} else if m := exitMarker.FindStringSubmatch(marker); m != nil {
				code, _ := strconv.Atoi(m[1])
				bl.exit, bl.reason = &code, m[2]
			} else {
				return nil, fmt.Errorf("%s:%d: malformed marker %q: want <!-- tutorial: skip: REASON --> or <!-- tutorial: exit N: REASON -->", page, i+1, marker)
			}
		}
		blocks = append(blocks, bl)
	}
	if all := len(anyMarker.FindAllString(md, -1)); all != attached {
		return nil, fmt.Errorf("%s: %d tutorial markers, %d of them right before a sh block: a marker elsewhere marks nothing", page, all, attached)
	}
	return blocks, nil
}

// script is the bash script that runs the blocks in order in one shell,
// echoing each block's place first so a failure shows which one failed.
// It returns the skipped blocks' places and reasons too.
func script(page string, blocks []block) (string, []string) {
	var s strings.Builder
	var skipped []string
	s.WriteString("set -euo pipefail\n")
	for _, b := range blocks {
		where := fmt.Sprintf("%s:%d", page, b.Line)
		switch {
		case b.skip != "":
			skipped = append(skipped, where+": "+b.skip)
			fmt.Fprintf(&s, "echo %q >&2\n", "=== "+where+" skipped: "+b.skip)
		case b.exit != nil:
			fmt.Fprintf(&s, "echo %q >&2\n", fmt.Sprintf("=== %s (the page says: exit %d)", where, *b.exit))
			fmt.Fprintf(&s, "set +e\n(\nset -e\n%s)\nrc=$?\nset -e\n", b.Text)
			fmt.Fprintf(&s, "if [ \"$rc\" -ne %d ]; then echo %q \"$rc\" >&2; exit 1; fi\n", *b.exit, fmt.Sprintf("=== %s: want exit %d, got", where, *b.exit))
		default:
			fmt.Fprintf(&s, "echo %q >&2\n", "=== "+where)
			s.WriteString(b.Text)
		}
	}
	return s.String(), skipped
}
