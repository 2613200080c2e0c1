package yamldocs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Split returns every document of data, empty ones included, in order; a
// document that cannot be read is an error naming its 1-based number.
func Split(data []byte) ([][]byte, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		d, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", len(docs)+1, err)
		}
		docs = append(docs, d)
	}
}

// MultipleError is One's error for a file of more than one document: a
// decoder reading the first would silently ignore the others. Callers
// word the message for their file.
type MultipleError struct {
	// Documents is how many non-empty documents the file holds.
	Documents int
}

func (e *MultipleError) Error() string {
	return fmt.Sprintf("the file holds %d YAML documents; it must be one", e.Documents)
}

// One returns data's only document. Documents of only comments, blank
// lines and markers do not count; a file of none is returned as it is.
// More than one is a *MultipleError.
func One(data []byte) ([]byte, error) {
	all, err := Split(data)
	if err != nil {
		return nil, err
	}
	var docs [][]byte
	for _, d := range all {
		if !Empty(d) {
			docs = append(docs, d)
		}
	}
	switch len(docs) {
	case 0:
		return data, nil
	case 1:
		return docs[0], nil
	}
	return nil, &MultipleError{Documents: len(docs)}
}

// Empty reports a document of only blank lines, comments and the document
// markers "---" and "...".
func Empty(d []byte) bool {
	for _, line := range strings.Split(string(d), "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") && line != "---" && line != "..." {
			return false
		}
	}
	return true
}
