package tagging

import (
	"maps"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestOptionsValidate(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		enabled bool
		// want are substrings of the error, each naming the input and
		// the fix; none means valid.
		want []string
	}{
		{"disabled, nothing set", nil, false, nil},
		{"enabled, upstream's example", []string{"--tags=Key1=Val1,Key2=Val2,KeyNoVal1=", "--resources=instance"}, true, nil},
		{"enabled without tags or resources", nil, true, []string{"--tags is empty", "--resources=instance"}},
		{"unknown resource type", []string{"--tags=a=b", "--resources=instance", "--resources=volume"}, true, []string{`--resources="volume": unknown resource type; the only one is "instance"`}},
		{"aws: prefix", []string{"--tags=AWS:x=1", "--resources=instance"}, true, []string{`key "AWS:x": the aws: prefix is reserved`}},
		{"cluster tag", []string{"--tags=kubernetes.io/cluster/demo=owned", "--resources=instance"}, true, []string{"is a cluster tag", "leave it out"}},
		{"legacy cluster tag", []string{"--tags=KubernetesCluster=demo", "--resources=instance"}, true, []string{`key "KubernetesCluster" is a cluster tag`}},
		{"label key", []string{"--tags=k8s.io/cloud-provider-aws=x", "--resources=instance"}, true, []string{"own Node label"}},
		{"empty key", []string{"--tags==v", "--resources=instance"}, true, []string{"empty key"}},
		{"long key", []string{"--tags=" + strings.Repeat("k", 129) + "=v", "--resources=instance"}, true, []string{"129 characters; EC2 allows at most 128"}},
		{"long value", []string{"--tags=k=" + strings.Repeat("v", 257), "--resources=instance"}, true, []string{"257 characters; EC2 allows at most 256"}},
		{"bad tags checked even when disabled", []string{"--tags=aws:x=1"}, false, []string{"aws: prefix"}},
		{"negative limits", []string{"--tags=a=b", "--resources=instance", "--tagging-controller-rate-limit=-1", "--tagging-controller-burst-limit=-2"}, true,
			[]string{"--tagging-controller-rate-limit=-1", "--tagging-controller-burst-limit=-2"}},
		{"upstream's no-op flags", []string{"--tags=a=b", "--resources=instance", "--tagging-controller-enable-batching", "--tagging-controller-concurrent-node-syncs=4"}, true, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := NewOptions()
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			o.AddFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := o.Validate(tc.enabled)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// TestTagsFlag: a pair without = is refused naming it (pflag's own
// stringToString would read "a=b,novalue" as a="b,novalue"); repeated
// flags merge as upstream's; a quoted value may hold a comma.
func TestTagsFlag(t *testing.T) {
	parse := func(args ...string) (map[string]string, error) {
		o := NewOptions()
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		o.AddFlags(fs)
		err := fs.Parse(args)
		return o.Tags, err
	}
	for _, bad := range []string{"--tags=a=b,novalue", "--tags=novalue", `--tags=a="b`} {
		if _, err := parse(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	if _, err := parse("--tags=a=b,novalue"); err == nil || !strings.Contains(err.Error(), `"novalue" must be formatted as key=value`) {
		t.Errorf("error = %v, want novalue named", err)
	}
	got, err := parse("--tags=a=1,b=", "--tags=c=3", `--tags="d=x,y"`)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"a": "1", "b": "", "c": "3", "d": "x,y"}; !maps.Equal(got, want) {
		t.Errorf("tags = %v, want %v", got, want)
	}
}

// TestChecksumIsUpstreams pins the label value to upstream's computation
// (MD5 of the sorted key=value pairs joined by commas): a Node upstream's
// controller labelled for the same tags is not tagged again.
func TestChecksumIsUpstreams(t *testing.T) {
	if got, want := Checksum(map[string]string{"team": "blue", "env": "prod"}), "2b1e4b1f167688387894f1fe5948c98a"; got != want {
		t.Errorf("Checksum = %s, want %s (md5 of \"env=prod,team=blue\")", got, want)
	}
}
