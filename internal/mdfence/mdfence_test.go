package mdfence

import (
	"reflect"
	"testing"
)

func TestBlocks(t *testing.T) {
	doc := "text\n```sh\na\nb\n```\n```go\nx\n```\n  ```sh\nc\n  ```\n```sh\nunclosed\n"
	want := []Block{{Line: 3, Text: "a\nb\n"}, {Line: 10, Text: "c\n"}}
	if got := Blocks(doc, "sh"); !reflect.DeepEqual(got, want) {
		t.Fatalf("Blocks = %+v, want %+v", got, want)
	}
	if got := Blocks(doc, "go"); len(got) != 1 || got[0].Text != "x\n" {
		t.Fatalf("go blocks = %+v", got)
	}
}
