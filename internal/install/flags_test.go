package install

import (
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/ccmapp"
)

// TestArgsAreFlagsOfTheBinary parses every rendered argument list with the
// real aws-cloud-controller-manager command's flag set: a flag the binary
// does not have would crash-loop the CCM.
func TestArgsAreFlagsOfTheBinary(t *testing.T) {
	for name, v := range goldenCases(t) {
		t.Run(name, func(t *testing.T) {
			v.Default()
			cmd, err := ccmapp.NewCommand(ccmapp.Options{})
			if err != nil {
				t.Fatal(err)
			}
			args := v.args()
			if err := cmd.Flags().Parse(args); err != nil {
				t.Fatalf("the CCM refuses the rendered flags: %v\nargs: %v", err, args)
			}
			if rest := cmd.Flags().Args(); len(rest) > 0 {
				t.Errorf("arguments left over: %v", rest)
			}
			// Every flag the installer manages is one the binary has, and
			// args sets only managed flags and ExtraArgs.
			for _, f := range managedFlags() {
				if cmd.Flags().Lookup(f) == nil {
					t.Errorf("managed flag --%s is not a flag of the binary", f)
				}
			}
			for _, a := range args {
				name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
				if _, extra := v.ExtraArgs[name]; !extra && !contains(managedFlags(), name) {
					t.Errorf("rendered --%s is not in managedFlags, so ExtraArgs could repeat it", name)
				}
			}
			for flag, want := range map[string]string{
				"cloud-config":   CloudConfigDir + "/" + CloudConfigKey,
				"cluster-name":   v.ClusterName,
				"secure-port":    "10258",
				"cloud-provider": "aws",
			} {
				if got := cmd.Flags().Lookup(flag).Value.String(); got != want {
					t.Errorf("--%s = %q, want %q", flag, got, want)
				}
			}
		})
	}
}

// TestExtraArgsUnknownToTheBinaryFail shows the test above has teeth.
func TestExtraArgsUnknownToTheBinaryFail(t *testing.T) {
	v := Values{Image: testImage, ExtraArgs: map[string]string{"no-such-flag": "1"}}
	v.Default()
	cmd, err := ccmapp.NewCommand(ccmapp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Flags().Parse(v.args()); err == nil || !strings.Contains(err.Error(), "no-such-flag") {
		t.Fatalf("parse = %v, want an unknown-flag error", err)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
