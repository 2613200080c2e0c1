package fielderr

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

func TestErrorf(t *testing.T) {
	e := Errorf("clusterCIDR", " %q: %w", "10.0.0.0/33", fs.ErrInvalid)
	if got, want := e.Error(), `clusterCIDR "10.0.0.0/33": invalid argument`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(e, fs.ErrInvalid) {
		t.Error("the wrapped error is lost")
	}
}

func TestProblemsAndFieldOf(t *testing.T) {
	plain := errors.New("apiVersion: want v1")
	joined := errors.Join(Errorf("image", ": empty"), plain, fmt.Errorf("context: %w", Errorf("replicas", ": at least 1")))
	var fields []string
	for _, p := range Problems(joined) {
		fe, ok := FieldOf(p)
		if !ok {
			fields = append(fields, "-")
			continue
		}
		fields = append(fields, fe.Field)
	}
	if got := fmt.Sprint(fields); got != "[image - replicas]" {
		t.Errorf("fields = %s, want [image - replicas]", got)
	}
	if got := Problems(plain); len(got) != 1 || !errors.Is(got[0], plain) {
		t.Errorf("Problems(one error) = %v", got)
	}
}
