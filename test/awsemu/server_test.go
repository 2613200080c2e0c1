package awsemu

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

func TestFaultsAndRetries(t *testing.T) {
	tests := []struct {
		name      string
		fault     Fault
		wantCode  string // "" = success
		wantCalls int
	}{
		{"ec2 throttle twice then ok", withRemaining(Throttle("ec2", 1), 2), "", 3},
		{"ec2 throttle always", Throttle("ec2", 1), "RequestLimitExceeded", 3},
		{"500 without code", Fault{Service: "ec2", HTTPStatus: 500, Rate: 1}, "InternalError", 3},
		{"503 without code", Fault{Service: "ec2", HTTPStatus: 503}, "Unavailable", 3},
		{"non-retryable code", Fault{Service: "ec2", Action: "DescribeInstances", Code: "UnauthorizedOperation", HTTPStatus: 403}, "UnauthorizedOperation", 1},
		{"other action untouched", Fault{Service: "ec2", Action: "CreateTags", Code: "X"}, "", 1},
		{"other service untouched", Throttle("sts", 1), "", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, url := demo(t)
			s.InjectFault(tc.fault)
			_, err := ec2Client(t, url).DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{})
			if tc.wantCode == "" && err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if tc.wantCode != "" {
				wantCode(t, err, tc.wantCode)
			}
			if got := s.Calls("ec2", "DescribeInstances"); got != tc.wantCalls {
				t.Errorf("emulator counted %d calls, want %d", got, tc.wantCalls)
			}
		})
	}
}

func withRemaining(f Fault, n int) Fault {
	f.Remaining = n
	return f
}

func TestSTSThrottleRetries(t *testing.T) {
	s, url := demo(t)
	s.InjectFault(withRemaining(Throttle("sts", 1), 2))
	out, err := stsClient(t, url).GetCallerIdentity(context.Background(), &sts.GetCallerIdentityInput{})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(out.Account) != "123456789012" || s.Calls("sts", "GetCallerIdentity") != 3 {
		t.Errorf("account %q after %d calls", aws.ToString(out.Account), s.Calls("sts", "GetCallerIdentity"))
	}
	s.InjectFault(Throttle("sts", 1))
	_, err = stsClient(t, url).GetCallerIdentity(context.Background(), &sts.GetCallerIdentityInput{})
	wantCode(t, err, "Throttling")
}

func TestLatencyFault(t *testing.T) {
	s, url := demo(t)
	id := s.InjectFault(Fault{Service: "ec2", Latency: 150 * time.Millisecond})
	client := ec2Client(t, url)
	begin := time.Now()
	if _, err := client.DescribeAvailabilityZones(context.Background(), &ec2.DescribeAvailabilityZonesInput{}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begin); d < 150*time.Millisecond {
		t.Errorf("call took %v, want >= 150ms", d)
	}
	s.ClearFault(id)
	s.InjectFault(Fault{Service: "ec2", Latency: 10 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	begin = time.Now()
	_, err := client.DescribeAvailabilityZones(ctx, &ec2.DescribeAvailabilityZonesInput{})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(begin) > 2*time.Second {
		t.Errorf("err %v after %v, want deadline exceeded quickly", err, time.Since(begin))
	}
	s.ClearFaults()
	if _, err := client.DescribeAvailabilityZones(context.Background(), &ec2.DescribeAvailabilityZonesInput{}); err != nil {
		t.Errorf("after ClearFaults: %v", err)
	}
}

func TestFaultRate(t *testing.T) {
	s := New(nil)
	s.InjectFault(Fault{Service: "ec2", Code: "X", Rate: 0.3})
	fired := 0
	for n := 1; n <= 2000; n++ {
		if _, apiErr := s.pickFault("ec2", "DescribeInstances"); apiErr != nil {
			fired++
		}
		// After every request the count is the rounded share: a service
		// with few calls still sees its faults (0.3 fires on the 2nd call).
		if want := int(float64(n)*0.3 + 0.5); fired != want {
			t.Fatalf("after %d requests rate 0.3 fired %d times, want %d", n, fired, want)
		}
	}
	if _, apiErr := s.pickFault("sts", "GetCallerIdentity"); apiErr != nil {
		t.Fatal("a fault for ec2 fired on sts")
	}
}

func TestCallCounts(t *testing.T) {
	s, url := demo(t)
	ctx := context.Background()
	client := ec2Client(t, url)
	for range 2 {
		if _, err := client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := stsClient(t, url).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{}); err != nil {
		t.Fatal(err)
	}
	got := s.CallCounts()
	if got["ec2:DescribeInstances"] != 2 || got["sts:GetCallerIdentity"] != 1 || len(got) != 2 {
		t.Errorf("CallCounts = %v", got)
	}
	if s.Calls("ec2", "") != 2 {
		t.Errorf("Calls(ec2, \"\") = %d", s.Calls("ec2", ""))
	}
	log := s.CallLog()
	if len(log) != 3 {
		t.Fatalf("CallLog has %d calls, want 3: %+v", len(log), log)
	}
	for _, c := range log {
		// The real aws-sdk-go-v2 signs its User-Agent; the migration e2e
		// tells the in-tree provider (aws-sdk-go v1) from the CCM by it.
		if !c.SDKv2() || c.SDKv1() || c.Mutating() || c.Time.IsZero() {
			t.Errorf("call %+v: want an SDK v2, read-only, timed call", c)
		}
	}
	if log[0].Action != "DescribeInstances" || log[2].Service != "sts" {
		t.Errorf("CallLog order: %+v", log)
	}
	if (Call{Action: "CreateLoadBalancer", UserAgent: "kubernetes/v1.26.13 aws-sdk-go/1.44.116 (go1.19; linux; amd64)"}).SDKv1() != true {
		t.Error("an aws-sdk-go v1 User-Agent is not recognised")
	}
	s.ResetCalls()
	if len(s.CallCounts()) != 0 || s.Calls("ec2", "DescribeInstances") != 0 || len(s.CallLog()) != 0 {
		t.Errorf("after ResetCalls: %v", s.CallCounts())
	}
}

// TestHTTPClientExactCounts checks that HTTPClient removes the loopback race
// (aws-sdk-go-v2#2737) even without the server-side delay: no call is retried.
func TestHTTPClientExactCounts(t *testing.T) {
	s, url := demo(t)
	s.SetResponseDelay(0)
	client := ec2Client(t, url)
	const n = 150
	for i := range n {
		if _, err := client.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{}); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if got := s.Calls("ec2", "DescribeInstances"); got != n {
		t.Errorf("server counted %d calls for %d SDK calls", got, n)
	}
}

// TestRouting posts raw requests for what the SDK clients here cannot send.
func TestRouting(t *testing.T) {
	s, base := demo(t)
	post := func(service, version, action string) (int, string) {
		t.Helper()
		form := url.Values{"Action": {action}, "Version": {version}}
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, base+"/", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Authorization", fmt.Sprintf("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/%s/aws4_request, SignedHeaders=host, Signature=00", service))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	tests := []struct {
		name, service, version, action string
		status                         int
		body                           []string
	}{
		{"ec2 ok", "ec2", "2016-11-15", "DescribeVpcs", 200, []string{`<DescribeVpcsResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">`, "<requestId>"}},
		{"ec2 unknown action", "ec2", "2016-11-15", "DescribeVolumes", 400, []string{"<Response><Errors><Error><Code>InvalidAction</Code>", "<RequestID>"}},
		{"sts ok", "sts", "2011-06-15", "GetCallerIdentity", 200, []string{"<GetCallerIdentityResult><Arn>arn:aws:iam::123456789012:role/control-plane</Arn>", "<ResponseMetadata><RequestId>"}},
		{"unknown service", "kms", "2014-11-01", "Decrypt", 400, []string{"<ErrorResponse><Error><Type>Sender</Type><Code>InvalidAction</Code>"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, body := post(tc.service, tc.version, tc.action)
			if status != tc.status {
				t.Errorf("status %d, want %d: %s", status, tc.status, body)
			}
			for _, want := range tc.body {
				if !strings.Contains(body, want) {
					t.Errorf("body lacks %q:\n%s", want, body)
				}
			}
		})
	}
	if s.Calls("kms", "Decrypt") != 1 {
		t.Errorf("unknown service not counted: %v", s.CallCounts())
	}
	t.Run("ec2 unknown action via SDK", func(t *testing.T) {
		_, err := ec2Client(t, base).DescribeVolumes(context.Background(), &ec2.DescribeVolumesInput{})
		wantCode(t, err, "InvalidAction")
	})
}

// TestConcurrentUse is for -race: readers, writers and fault changes at once.
func TestConcurrentUse(t *testing.T) {
	s, url := demo(t)
	client := ec2Client(t, url)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				var err error
				switch g {
				case 0:
					_, err = client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: filters("instance-state-name", "running")})
				case 1:
					err = s.AddInstance(Instance{AvailabilityZone: "us-east-1a", Tags: map[string]string{"n": fmt.Sprint(i)}})
				case 2:
					_, err = client.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{demoA},
						Tags: []ec2types.Tag{{Key: aws.String("i"), Value: aws.String(fmt.Sprint(i))}}})
				case 3:
					id := s.InjectFault(Fault{Service: "sts", Latency: time.Millisecond})
					_ = s.SetInstanceState(demoB, []string{"running", "stopping"}[i%2])
					_, _ = s.Instance(demoA)
					_ = s.CallCounts()
					s.ClearFault(id)
				}
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
