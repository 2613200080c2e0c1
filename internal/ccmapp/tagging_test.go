package ccmapp

import (
	"io"
	"strings"
	"testing"
)

// TestTaggingFlagsCheckedAtStart: bad tagging-controller flags fail the
// command before anything starts (no kubeconfig is even read), with every
// problem named; without the controller enabled only the tags themselves
// are checked.
func TestTaggingFlagsCheckedAtStart(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"enabled without tags or resources", []string{"--controllers=*,tagging"}, []string{"--tags is empty", "--resources is empty"}},
		{"enabled alone", []string{"--controllers=tagging", "--tags=a=b"}, []string{"--resources is empty"}},
		{"reserved and cluster keys", []string{"--controllers=*,tagging", "--resources=instance", "--tags=aws:a=1,kubernetes.io/cluster/x=owned"},
			[]string{`"aws:a": the aws: prefix is reserved`, `"kubernetes.io/cluster/x" is a cluster tag`}},
		{"unknown resource", []string{"--controllers=*,tagging", "--tags=a=b", "--resources=volume"}, []string{`--resources="volume": unknown resource type`}},
		{"bad tags with the controller off", []string{"--tags=aws:a=1"}, []string{"aws: prefix is reserved"}},
		{"bad pair", []string{"--controllers=*,tagging", "--resources=instance", "--tags=a=b,c"}, []string{`"c" must be formatted as key=value`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd, err := NewCommand(Options{OnCloudError: func(err error) { t.Errorf("cloud provider built: %v", err) }})
			if err != nil {
				t.Fatal(err)
			}
			cmd.SetArgs(append(tc.args, "--kubeconfig=/nonexistent"))
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			err = cmd.Execute()
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
		})
	}
}

// TestTaggingIsAKnownController: valid tagging flags pass the check and
// the library's own check of --controllers (which knows the name); the
// command then fails only for want of a cluster.
func TestTaggingIsAKnownController(t *testing.T) {
	cmd, err := NewCommand(Options{OnCloudError: func(error) {}})
	if err != nil {
		t.Fatal(err)
	}
	cmd.SetArgs([]string{"--controllers=*,tagging", "--tags=team=blue", "--resources=instance", "--kubeconfig=/nonexistent", "--secure-port=0"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	err = cmd.Execute()
	if err == nil || !strings.Contains(err.Error(), "/nonexistent") {
		t.Fatalf("error = %v, want only the missing kubeconfig", err)
	}
}

// TestTaggingIsOffByDefault: like upstream's, the tagging controller runs
// only when --controllers names it.
func TestTaggingIsOffByDefault(t *testing.T) {
	if _, err := NewCommand(Options{}); err != nil { // registers it as disabled by default
		t.Fatal(err)
	}
	for _, tc := range []struct {
		controllers []string
		want        bool
	}{
		{[]string{"*"}, false},
		{[]string{"*", "tagging"}, true},
		{[]string{"tagging"}, true},
		{[]string{"*", "tagging", "-tagging"}, true}, // the first mention wins, as in the library
		{[]string{"cloud-node-controller"}, false},
	} {
		if got := taggingEnabled(tc.controllers); got != tc.want {
			t.Errorf("--controllers=%s: tagging enabled = %t, want %t", strings.Join(tc.controllers, ","), got, tc.want)
		}
	}
	if _, ok := controllerConstructors(nil, nil)["tagging"]; !ok {
		t.Error("no tagging controller among the constructors")
	}
}
