package bufferedbody

import (
	"bytes"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// Client wraps an SDK HTTP client so every request it sends carries an
// in-memory body.
type Client struct{ Inner aws.HTTPClient }

// Do sends r with its body buffered.
func (c Client) Do(r *http.Request) (*http.Response, error) {
	r, err := Request(r)
	if err != nil {
		return nil, err
	}
	return c.Inner.Do(r)
}

// Request returns r with its body read into memory (and closed), or r
// itself when it has no body.
func Request(r *http.Request) (*http.Request, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return r, nil
	}
	b, err := io.ReadAll(r.Body)
	_ = r.Body.Close()
	if err != nil {
		return nil, err
	}
	r = r.Clone(r.Context())
	r.ContentLength = int64(len(b))
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	return r, nil
}
