package providerid

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		name, in string
		want     ID
		wantErr  string
	}{
		{name: "canonical", in: "aws:///us-east-1a/i-0123456789abcdef0", want: ID{Zone: "us-east-1a", InstanceID: "i-0123456789abcdef0"}},
		{name: "no zone", in: "aws:////i-0123456789abcdef0", want: ID{InstanceID: "i-0123456789abcdef0"}},
		{name: "two slashes", in: "aws://us-west-2b/i-01234567", want: ID{Zone: "us-west-2b", InstanceID: "i-01234567"}},
		{name: "bare id", in: "i-0123456789abcdef0", want: ID{InstanceID: "i-0123456789abcdef0"}},
		{name: "local zone", in: "aws:///us-west-2-lax-1a/i-0123456789abcdef0", want: ID{Zone: "us-west-2-lax-1a", InstanceID: "i-0123456789abcdef0"}},
		{name: "empty", in: "", wantErr: "empty"},
		{name: "other scheme", in: "gce:///us-east-1a/i-0123456789abcdef0", wantErr: `scheme "gce"`},
		{name: "not an instance", in: "aws:///us-east-1a/fargate-10.0.0.1", wantErr: "not an EC2 instance ID"},
		{name: "too many parts", in: "aws:///a/b/i-0123456789abcdef0", wantErr: "want aws:///"},
		{name: "bad zone", in: "aws:///US_EAST/i-0123456789abcdef0", wantErr: "availability zone"},
		{name: "bare garbage", in: "node-1", wantErr: "bare instance ID"},
		{name: "upper hex", in: "aws:///us-east-1a/i-0123456789ABCDEF0", wantErr: "not an EC2 instance ID"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Parse(%q) error = %v, want containing %q", tc.in, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.in, err)
			}
			if got != tc.want {
				t.Fatalf("Parse(%q) = %+v, want %+v", tc.in, got, tc.want)
			}
		})
	}
}

func TestFormatIsWireContract(t *testing.T) {
	if got := Format("eu-west-1c", "i-0abc0abc0abc0abc0"); got != "aws:///eu-west-1c/i-0abc0abc0abc0abc0" {
		t.Fatalf("Format = %q", got)
	}
}

func TestInstanceIDFromNodeName(t *testing.T) {
	for name, want := range map[string]string{
		"i-0123456789abcdef0":                            "i-0123456789abcdef0",
		"i-0123456789abcdef0.us-east-1.compute.internal": "i-0123456789abcdef0",
		"ip-10-0-1-10.ec2.internal":                      "",
		"i-xyz.example.com":                              "",
	} {
		got, ok := InstanceIDFromNodeName(name)
		if got != want || ok != (want != "") {
			t.Errorf("InstanceIDFromNodeName(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"aws:///us-east-1a/i-0123456789abcdef0", "aws:////i-01234567", "i-01234567", "aws://", "aws:///", ":///", "aws:///a//b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := Parse(s)
		if err != nil {
			return
		}
		if !IsInstanceID(id.InstanceID) {
			t.Fatalf("Parse(%q) accepted instance %q", s, id.InstanceID)
		}
		// The canonical form must parse back to the same value.
		again, err := Parse(id.String())
		if err != nil || again != id {
			t.Fatalf("round trip of %q: %+v, %v", id.String(), again, err)
		}
	})
}
