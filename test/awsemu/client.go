package awsemu

import (
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/awsccmctl/awsccmctl/internal/awsapi/bufferedbody"
)

// DefaultResponseDelay is how long the server holds every API response by
// default; see SetResponseDelay.
const DefaultResponseDelay = 100 * time.Microsecond

// SetResponseDelay sets the minimum time between reading an API request and
// answering it (default DefaultResponseDelay; 0 = answer at once; IMDS is
// never delayed).
//
// The delay works around a client-side race that only shows on a fast
// loopback server (aws/aws-sdk-go-v2#2737): net/http sends the request body
// straight to the socket, the answer arrives, the SDK closes the request
// body, and net/http's final body check then fails and drops the
// connection, so a successful call reads "use of closed network
// connection" and is retried (and counted twice). The delay makes this rare
// for clients out of process; in-process clients avoid it entirely with
// HTTPClient.
func (s *Server) SetResponseDelay(d time.Duration) {
	s.ctl.Lock()
	defer s.ctl.Unlock()
	s.responseDelay = d
}

// ResponseDelay returns the delay set by SetResponseDelay.
func (s *Server) ResponseDelay() time.Duration {
	s.ctl.Lock()
	defer s.ctl.Unlock()
	return s.responseDelay
}

// HTTPClient returns an HTTP client for SDK clients talking to the
// emulator in process. It reads each request body into memory before
// sending (package bufferedbody, as the CCM's own clients do), which
// removes the loopback race described at SetResponseDelay,
// so call counts are exact. It does not use proxies. Set it per service
// client:
//
//	ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.HTTPClient = awsemu.HTTPClient() })
//
// not with config.WithHTTPClient: LoadDefaultConfig rejects HTTP clients
// other than the SDK's own when AWS_CA_BUNDLE is set.
func HTTPClient() aws.HTTPClient {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	return bufferedbody.Client{Inner: &http.Client{Transport: tr}}
}
