package cloudconfig

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// FuzzParse checks that no input makes Parse, Default, Validate, Warnings,
// the accessors or Render panic, and that every file Parse accepts comes back
// unchanged through Render, before and after Default.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.conf"))
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("[Global]\nZone = \"a\\\"b\"\n[ServiceOverride \"x\\\\y\"]\nService = ec2\n"))
	f.Add([]byte("[Global]\nRegion = a \\\n b\n"))

	f.Add([]byte("[Global]\nDisableSecurityGroupIngress = maybe\nRegoin = x\n[ServiceOverride \"a\"]\nService\nURL\n"))

	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		checkErr := Check(data)
		if err != nil {
			if c != nil {
				t.Fatalf("Parse returned a config and an error: %v", err)
			}
			// Check lists every problem Parse found (and Validate's).
			var pe, ce *Error
			if !errors.As(err, &pe) || !errors.As(checkErr, &ce) {
				t.Fatalf("Parse: %v; Check: %v; want *Error from both", err, checkErr)
			}
			for _, p := range pe.Problems {
				if !slices.Contains(ce.Problems, p) {
					t.Fatalf("Check lacks Parse's problem %q:\n%v", p, checkErr)
				}
			}
			return
		}
		roundTrip(t, c)

		c.Default()
		_ = c.Validate()
		_ = c.Warnings()
		_ = c.ClusterID()
		_, _ = c.RegionFromConfig()
		_ = c.OffEC2()
		for _, s := range knownServices {
			_, _, _, _ = c.Endpoint(s, c.Global.Region)
		}
		roundTrip(t, c)
	})
}

func roundTrip(t *testing.T, c *Config) {
	t.Helper()
	out, err := Render(c)
	if err != nil {
		t.Fatalf("Render of a parsed config failed: %v", err)
	}
	back, err := Parse(out)
	if err != nil {
		t.Fatalf("Parse(Render(c)) failed: %v\nrendered:\n%q", err, out)
	}
	if got, want := normalised(back), normalised(c); !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip changed the config:\n got %#v\nwant %#v\nrendered:\n%q", got, want, out)
	}
}
