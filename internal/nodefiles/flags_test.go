package nodefiles

import (
	"reflect"
	"testing"
)

// kv flattens flags for comparison.
func kv(f Flags) [][2]string {
	var out [][2]string
	for _, fl := range f.All() {
		out = append(out, [2]string{fl.Name, fl.Value})
	}
	return out
}

func TestParseFlags(t *testing.T) {
	cases := []struct {
		name    string
		in      []string
		command []string
		flags   [][2]string
		args    []string
	}{
		{name: "equals", in: []string{"kube-apiserver", "--a=b", "--c=d=e"}, command: []string{"kube-apiserver"}, flags: [][2]string{{"a", "b"}, {"c", "d=e"}}},
		{name: "separate value", in: []string{"--a", "b", "--c"}, flags: [][2]string{{"a", "b"}, {"c", "true"}}},
		{name: "bool before flag", in: []string{"--leader-elect", "--v=2"}, flags: [][2]string{{"leader-elect", "true"}, {"v", "2"}}},
		{name: "single dash", in: []string{"-v=2", "-v", "4"}, flags: [][2]string{{"v", "2"}, {"v", "4"}}},
		{name: "empty value", in: []string{"--cloud-provider="}, flags: [][2]string{{"cloud-provider", ""}}},
		{name: "underscore normalised", in: []string{"--cluster_dns=10.0.0.10"}, flags: [][2]string{{"cluster-dns", "10.0.0.10"}}},
		{name: "negative number is a value", in: []string{"--oom-score-adj", "-998"}, flags: [][2]string{{"oom-score-adj", "-998"}}},
		{name: "double dash ends flags", in: []string{"bin", "--a=1", "--", "--b=2", "x"}, command: []string{"bin"}, flags: [][2]string{{"a", "1"}}, args: []string{"--b=2", "x"}},
		{name: "double dash before flags", in: []string{"bin", "--", "--b"}, command: []string{"bin"}, args: []string{"--b"}},
		{name: "dash alone is a value", in: []string{"--log-file", "-"}, flags: [][2]string{{"log-file", "-"}}},
		{name: "positional after value", in: []string{"--a=1", "pos"}, flags: [][2]string{{"a", "1"}}, args: []string{"pos"}},
		{name: "malformed dashes are args", in: []string{"--a=1", "---x", "--=y", "-_"}, flags: [][2]string{{"a", "1"}}, args: []string{"---x", "--=y", "-_"}},
		{name: "command of several words", in: []string{"/go-runner", "extra", "--a"}, command: []string{"/go-runner", "extra"}, flags: [][2]string{{"a", "true"}}},
		{name: "empty", in: nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := ParseFlags(tc.in)
			if !reflect.DeepEqual(f.Command, tc.command) || !reflect.DeepEqual(kv(f), tc.flags) || !reflect.DeepEqual(f.Args, tc.args) {
				t.Fatalf("ParseFlags(%q) = command %q flags %q args %q; want %q %q %q", tc.in, f.Command, kv(f), f.Args, tc.command, tc.flags, tc.args)
			}
		})
	}
}

func TestFlagsAccessors(t *testing.T) {
	f := ParseFlags([]string{"kube-apiserver", "--enable-admission-plugins=A,B", "--v=2", "--enable-admission-plugins=C", "--v=4", "--allow_privileged"})
	if v, ok := f.Get("v"); !ok || v != "4" {
		t.Errorf("Get(v) = %q, %t; want the last value 4", v, ok)
	}
	if _, ok := f.Get("missing"); ok || f.Has("missing") {
		t.Error("a missing flag is reported present")
	}
	if !f.Has("allow-privileged") || !f.Has("allow_privileged") {
		t.Error("Has does not normalise underscores")
	}
	if got := f.Values("enable-admission-plugins"); !reflect.DeepEqual(got, []string{"A,B", "C"}) {
		t.Errorf("Values = %q", got)
	}
	want := "kube-apiserver --enable-admission-plugins=A,B --v=2 --enable-admission-plugins=C --v=4 --allow-privileged=true"
	if got := f.String(); got != want {
		t.Errorf("String() = %q\nwant       %q", got, want)
	}
	if got := ParseFlags([]string{"--a=x y", "--", "z"}).String(); got != "'--a=x y' -- z" {
		t.Errorf("String() quoting = %q", got)
	}
}

// TestTokensRoundTrip checks that Tokens renders what ParseFlags reads back.
func TestTokensRoundTrip(t *testing.T) {
	in := []string{"kubelet", "--a", "b", "-c", "--d=", "pos", "--", "--e"}
	f := ParseFlags(in)
	g := ParseFlags(f.Tokens())
	if !reflect.DeepEqual(kv(f), kv(g)) || !reflect.DeepEqual(f.Command, g.Command) || !reflect.DeepEqual(f.Args, g.Args) {
		t.Fatalf("round trip changed the flags: %v -> %v", f, g)
	}
}
