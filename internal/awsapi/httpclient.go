package awsapi

import (
	"bytes"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// bufferedBodyClient hands net/http an in-memory copy of each request body.
//
// Why: with a fast peer, net/http may still be finishing its write of the
// body when the response arrives and the SDK closes the body; net/http then
// drops the connection and the SDK sees "use of closed network connection"
// for a call that succeeded, and retries it (aws/aws-sdk-go-v2#2737). A
// retried call spends throttle budget and can repeat a mutation. The CCM's
// request bodies are small form posts, so copying them costs nothing.
type bufferedBodyClient struct{ inner aws.HTTPClient }

func (c bufferedBodyClient) Do(r *http.Request) (*http.Response, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return c.inner.Do(r)
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
	return c.inner.Do(r)
}
