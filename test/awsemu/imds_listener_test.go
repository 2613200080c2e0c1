package awsemu

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

func TestIMDSForServesEachInstanceItsOwn(t *testing.T) {
	e := StartT(t, DemoFixture())
	urlA, err := e.IMDSFor(demoA)
	if err != nil {
		t.Fatal(err)
	}
	urlB, err := e.IMDSFor(demoB)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ url, id, hostname string }{
		{urlA, demoA, "ip-10-0-1-10.ec2.internal"},
		{urlB, demoB, "ip-10-0-2-20.ec2.internal"},
		{e.URL, demoA, "ip-10-0-1-10.ec2.internal"}, // the main listener: SetIMDSInstance's choice
	} {
		c := imdsClient(tc.url)
		if got, err := getMetadata(t, c, "instance-id"); err != nil || got != tc.id {
			t.Errorf("%s: instance-id = %q, %v; want %s", tc.url, got, err, tc.id)
		}
		if got, err := getMetadata(t, c, "local-hostname"); err != nil || got != tc.hostname {
			t.Errorf("%s: local-hostname = %q, %v; want %s", tc.url, got, err, tc.hostname)
		}
	}

	// The per-instance listener ignores SetIMDSInstance, and shares the
	// emulator's availability switch.
	e.SetIMDSInstance(demoC)
	if got, err := getMetadata(t, imdsClient(urlB), "instance-id"); err != nil || got != demoB {
		t.Errorf("after SetIMDSInstance(%s): instance-id = %q, %v; want %s", demoC, got, err, demoB)
	}
	e.SetIMDSAvailable(false)
	if _, err := getMetadata(t, imdsClient(urlB), "instance-id"); err == nil {
		t.Error("IMDS turned off, the per-instance listener still answers")
	}
	e.SetIMDSAvailable(true)

	// It serves IMDS only.
	get, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, urlA+"/?Action=DescribeInstances", nil)
	resp, err := http.DefaultClient.Do(get)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("an API request on the IMDS listener: HTTP %d, want 404", resp.StatusCode)
	}

	if _, err := e.IMDSFor("i-0000000000000dead"); err == nil || !strings.Contains(err.Error(), "i-0000000000000dead") {
		t.Errorf("IMDSFor(unknown) = %v, want an error naming it", err)
	}

	e.Close()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPut, urlA+"/latest/api/token", nil)
	req.Header.Set(imdsTokenTTLHeader, "60")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		_ = resp.Body.Close()
		t.Errorf("after Close the per-instance listener still answers: HTTP %d", resp.StatusCode)
	}
}
