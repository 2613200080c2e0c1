package yamldocs

import (
	"errors"
	"testing"
)

func TestOne(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		multiple       int
	}{
		{name: "one document", in: "a: 1\n", want: "a: 1\n"},
		{name: "leading marker kept, as the reader returns it", in: "---\na: 1\n", want: "---\na: 1\n"},
		{name: "comment-only documents do not count", in: "# header\n---\na: 1\n---\n# trailer\n", want: "a: 1\n"},
		{name: "empty file", in: "", want: ""},
		{name: "only comments", in: "# nothing\n", want: "# nothing\n"},
		{name: "two documents", in: "a: 1\n---\nb: 2\n", multiple: 2},
		{name: "three documents", in: "a: 1\n---\nb: 2\n---\nc: 3\n", multiple: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := One([]byte(tc.in))
			if tc.multiple > 0 {
				var m *MultipleError
				if !errors.As(err, &m) || m.Documents != tc.multiple {
					t.Fatalf("One = %q, %v; want a MultipleError of %d documents", got, err, tc.multiple)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("One = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestSplitKeepsEmptyDocuments(t *testing.T) {
	docs, err := Split([]byte("a: 1\n---\n# only a comment\n---\nb: 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 3 || Empty(docs[0]) || !Empty(docs[1]) || Empty(docs[2]) {
		t.Fatalf("Split = %q, want 3 documents, the second empty", docs)
	}
}
