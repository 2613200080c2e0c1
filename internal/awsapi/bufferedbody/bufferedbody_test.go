package bufferedbody

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// closeTracker is a streamed body that records whether it was closed.
type closeTracker struct {
	io.Reader
	closed bool
}

func (c *closeTracker) Close() error { c.closed = true; return nil }

type doFunc func(*http.Request) (*http.Response, error)

func (f doFunc) Do(r *http.Request) (*http.Response, error) { return f(r) }

func TestRequestBuffersTheBody(t *testing.T) {
	body := &closeTracker{Reader: strings.NewReader("Action=DescribeInstances")}
	r, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://example.invalid/", body)
	got, err := Request(r)
	if err != nil {
		t.Fatal(err)
	}
	if !body.closed {
		t.Error("the streamed body was not closed after reading")
	}
	if got.ContentLength != int64(len("Action=DescribeInstances")) {
		t.Errorf("ContentLength = %d", got.ContentLength)
	}
	for i := 0; i < 2; i++ { // Body, then a replay through GetBody
		rc := got.Body
		if i == 1 {
			if rc, err = got.GetBody(); err != nil {
				t.Fatal(err)
			}
		}
		b, _ := io.ReadAll(rc)
		if string(b) != "Action=DescribeInstances" {
			t.Errorf("read %d: body %q", i, b)
		}
	}
}

func TestRequestWithoutBodyIsUnchanged(t *testing.T) {
	r, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://example.invalid/", nil)
	if got, err := Request(r); err != nil || got != r {
		t.Errorf("Request = %p, %v; want the request itself", got, err)
	}
}

func TestClientSendsTheBufferedRequest(t *testing.T) {
	inner := doFunc(func(r *http.Request) (*http.Response, error) {
		if _, ok := r.Body.(*closeTracker); ok {
			return nil, errors.New("the streamed body reached net/http")
		}
		return &http.Response{StatusCode: http.StatusOK}, nil
	})
	r, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://example.invalid/", &closeTracker{Reader: strings.NewReader("x")})
	resp, err := Client{Inner: inner}.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Body != nil {
		_ = resp.Body.Close()
	}
}
