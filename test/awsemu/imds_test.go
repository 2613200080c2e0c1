package awsemu

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
)

func imdsClient(url string) *imds.Client {
	// DisableDefaultMaxBackoff keeps fastRetryer's backoff (the client
	// otherwise replaces it with jitter of up to 1s).
	return imds.New(imds.Options{Endpoint: url, Retryer: fastRetryer(), DisableDefaultMaxBackoff: true})
}

func getMetadata(t *testing.T, c *imds.Client, path string) (string, error) {
	t.Helper()
	out, err := c.GetMetadata(context.Background(), &imds.GetMetadataInput{Path: path})
	if err != nil {
		return "", err
	}
	defer func() { _ = out.Content.Close() }()
	b, err := io.ReadAll(out.Content)
	return string(b), err
}

func TestIMDSWithSDK(t *testing.T) {
	s, url := demo(t)
	c := imdsClient(url)
	region, err := c.GetRegion(context.Background(), &imds.GetRegionInput{})
	if err != nil || region.Region != "us-east-1" {
		t.Fatalf("GetRegion = %+v, %v", region, err)
	}
	doc, err := c.GetInstanceIdentityDocument(context.Background(), &imds.GetInstanceIdentityDocumentInput{})
	if err != nil || doc.InstanceID != demoA || doc.AccountID != "123456789012" || doc.PrivateIP != "10.0.1.10" || doc.AvailabilityZone != "us-east-1a" {
		t.Fatalf("identity document = %+v, %v", doc, err)
	}
	mac, err := getMetadata(t, c, "mac")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ path, want string }{
		{"instance-id", demoA},
		{"instance-type", "m5.large"},
		{"placement/availability-zone", "us-east-1a"},
		{"placement/availability-zone-id", "use1-az1"},
		{"placement/region", "us-east-1"},
		{"local-hostname", "ip-10-0-1-10.ec2.internal"},
		{"local-ipv4", "10.0.1.10"},
		{"public-ipv4", "54.210.0.10"},
		{"public-hostname", "ec2-54-210-0-10.compute-1.amazonaws.com"},
		{"network/interfaces/macs/" + mac + "/vpc-id", demoVPC},
		{"network/interfaces/macs/" + mac + "/subnet-id", "subnet-0demo00000000000a"},
		{"network/interfaces/macs/" + mac + "/local-ipv4s", "10.0.1.10\n10.0.1.11"},
		{"network/interfaces/macs/", mac + "/"},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			got, err := getMetadata(t, c, tc.path)
			if err != nil || got != tc.want {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	t.Run("other instance without public IP", func(t *testing.T) {
		s.SetIMDSInstance(demoC)
		defer s.SetIMDSInstance(demoA)
		if got, err := getMetadata(t, c, "instance-id"); err != nil || got != demoC {
			t.Errorf("instance-id = %q, %v", got, err)
		}
		_, err := getMetadata(t, c, "public-ipv4")
		var status interface{ HTTPStatusCode() int }
		if !errors.As(err, &status) || status.HTTPStatusCode() != 404 {
			t.Errorf("public-ipv4 err = %v, want HTTP 404", err)
		}
	})
	if s.Calls("imds", "api/token") < 1 || s.Calls("imds", "meta-data/instance-id") < 1 {
		t.Errorf("IMDS calls not counted: %v", s.CallCounts())
	}
	t.Run("unavailable", func(t *testing.T) {
		s.SetIMDSAvailable(false)
		defer s.SetIMDSAvailable(true)
		if _, err := imdsClient(url).GetRegion(context.Background(), &imds.GetRegionInput{}); err == nil {
			t.Error("GetRegion succeeded with IMDS unavailable")
		}
	})
}

func TestIMDSRaw(t *testing.T) {
	_, url := demo(t)
	do := func(method, path string, hdr map[string]string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(context.Background(), method, url+path, nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, token := do(http.MethodPut, "/latest/api/token", map[string]string{"X-aws-ec2-metadata-token-ttl-seconds": "60"})
	if status != 200 || len(token) != 44 {
		t.Fatalf("token: %d %q", status, token)
	}
	tests := []struct {
		name, method, path string
		hdr                map[string]string
		status             int
	}{
		{"token without ttl", http.MethodPut, "/latest/api/token", nil, 400},
		{"token with GET", http.MethodGet, "/latest/api/token", map[string]string{"X-aws-ec2-metadata-token-ttl-seconds": "60"}, 405},
		{"no token", http.MethodGet, "/latest/meta-data/instance-id", nil, 401},
		{"bad token", http.MethodGet, "/latest/meta-data/instance-id", map[string]string{"X-aws-ec2-metadata-token": "nope"}, 401},
		{"good token", http.MethodGet, "/latest/meta-data/instance-id", map[string]string{"X-aws-ec2-metadata-token": token}, 200},
		{"unknown path", http.MethodGet, "/latest/meta-data/nope", map[string]string{"X-aws-ec2-metadata-token": token}, 404},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got, body := do(tc.method, tc.path, tc.hdr); got != tc.status {
				t.Errorf("status %d, want %d (%s)", got, tc.status, strings.TrimSpace(body))
			}
		})
	}
}
