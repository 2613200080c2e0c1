// Package mdfence reads the fenced code blocks of a Markdown document, for
// tests that check what the documentation shows: that its cloud-config
// examples load, that the tutorial's commands run.
package mdfence

import "strings"

// Block is one fenced block.
type Block struct {
	// Line is the 1-based line of the block's first content line.
	Line int
	// Text is the content, each line ending in a newline.
	Text string
}

// Blocks returns, in order, the blocks whose opening fence is exactly
// "```"+lang (indentation aside).
func Blocks(doc, lang string) []Block {
	var (
		blocks []Block
		cur    *Block
		body   strings.Builder
	)
	for i, line := range strings.Split(doc, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && trimmed == "```"+lang:
			cur = &Block{Line: i + 2}
			body.Reset()
		case cur != nil && trimmed == "```":
			cur.Text = body.String()
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			body.WriteString(line + "\n")
		}
	}
	return blocks
}
