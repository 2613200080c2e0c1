package apply

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Decode splits a YAML (or JSON) stream into objects, in order. Empty
// documents are skipped; a document without apiVersion, kind or
// metadata.name is an error naming its position.
func Decode(stream []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(stream), 4096)
	var out []*unstructured.Unstructured
	var errs []error
	for i := 1; ; i++ {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(m) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		switch {
		case u.GetAPIVersion() == "":
			errs = append(errs, fmt.Errorf("document %d: no apiVersion", i))
		case u.GetKind() == "":
			errs = append(errs, fmt.Errorf("document %d: no kind", i))
		case u.GetName() == "":
			errs = append(errs, fmt.Errorf("document %d (%s): no metadata.name", i, u.GetKind()))
		}
		out = append(out, u)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}
