package providerid

import (
	"errors"
	"strings"
	"testing"
)

func TestParseCanonical(t *testing.T) {
	if id, err := ParseCanonical("aws:///us-east-1a/i-0123456789abcdef0"); err != nil || id != (ID{Zone: "us-east-1a", InstanceID: "i-0123456789abcdef0"}) {
		t.Fatalf("canonical: %+v, %v", id, err)
	}
	// Every refusal has one shape: the value, the wanted form, the reason.
	for in, why := range map[string]string{
		"i-123":                                   "does not start with aws:///",
		"i-0123456789abcdef0":                     "does not start with aws:///",
		"aws:////i-0123456789abcdef0":             "the zone is missing",
		"aws://us-east-1a/i-0123456789abcdef0":    "does not start with aws:///",
		"aws:///us-east-1a/i-123":                 `"i-123" is not an EC2 instance ID`,
		"aws:///US-EAST/i-0123456789abcdef0":      `"US-EAST" is not an availability zone name`,
		"aws:///us-east-1a/i-0123456789abcdef0/x": "exactly a zone and an instance ID",
		"aws:///us-east-1a":                       "exactly a zone and an instance ID",
		"":                                        "does not start with aws:///",
	} {
		_, err := ParseCanonical(in)
		prefix := `providerID "` + in + `": want aws:///<zone>/<instance-id>, e.g. aws:///us-east-1a/i-0123456789abcdef0: `
		if err == nil || !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), why) {
			t.Errorf("%q: %v; want %q…%q", in, err, prefix, why)
		}
	}
}

func FuzzParseCanonical(f *testing.F) {
	f.Add("aws:///us-east-1a/i-0123456789abcdef0")
	f.Add("i-123")
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseCanonical(s)
		if err == nil && id.String() != s {
			t.Fatalf("accepted %q but it renders as %q", s, id.String())
		}
	})
}

func TestParseCanonicalOrZoneless(t *testing.T) {
	tests := []struct {
		name, in      string
		want          ID
		notCanonical  bool // ErrNotCanonical
		parseRejected bool // Parse's own error
	}{
		{name: "canonical", in: "aws:///us-east-1a/i-0123456789abcdef0", want: ID{Zone: "us-east-1a", InstanceID: "i-0123456789abcdef0"}},
		{name: "zone-less", in: "aws:////i-0123456789abcdef0", want: ID{InstanceID: "i-0123456789abcdef0"}},
		{name: "two slashes", in: "aws://us-east-1a/i-0123456789abcdef0", notCanonical: true},
		{name: "bare instance ID", in: "i-0123456789abcdef0", notCanonical: true},
		{name: "surrounding space", in: " aws:///us-east-1a/i-0123456789abcdef0", notCanonical: true},
		{name: "other scheme", in: "gce:///us-east-1a/i-0123456789abcdef0", parseRejected: true},
		{name: "bad instance", in: "aws:///us-east-1a/i-123", parseRejected: true},
		{name: "empty", in: "", parseRejected: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id, err := ParseCanonicalOrZoneless(tc.in)
			switch {
			case tc.notCanonical:
				if !errors.Is(err, ErrNotCanonical) {
					t.Errorf("err = %v, want ErrNotCanonical", err)
				}
			case tc.parseRejected:
				if err == nil || errors.Is(err, ErrNotCanonical) {
					t.Errorf("err = %v, want Parse's error", err)
				}
			case err != nil || id != tc.want:
				t.Errorf("= %+v, %v; want %+v", id, err, tc.want)
			}
		})
	}
}
