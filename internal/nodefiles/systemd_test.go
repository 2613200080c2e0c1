package nodefiles

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseEnvFile(t *testing.T) {
	cases := []struct {
		name   string
		in     string
		want   map[string]string
		issues []string
	}{
		{name: "kubeadm-flags.env", in: `KUBELET_KUBEADM_ARGS="--cloud-provider=external --node-ip=10.0.0.1"` + "\n",
			want: map[string]string{"KUBELET_KUBEADM_ARGS": "--cloud-provider=external --node-ip=10.0.0.1"}},
		{name: "empty value", in: "KUBELET_EXTRA_ARGS=\n", want: map[string]string{"KUBELET_EXTRA_ARGS": ""}},
		{name: "single quotes are literal", in: `A='x "y" \n $z'`, want: map[string]string{"A": `x "y" \n $z`}},
		{name: "double quote escapes", in: `A="a \"b\" \\ \$c \x"`, want: map[string]string{"A": `a "b" \ $c \x`}},
		{name: "unquoted trims and escapes", in: "A=  a\\ b  c   \nB=x#y", want: map[string]string{"A": "a b  c", "B": "x#y"}},
		{name: "continuation", in: "A=one \\\ntwo\nB=\"x\\\ny\"\n", want: map[string]string{"A": "one two", "B": "xy"}},
		{name: "multi-line double quotes", in: "A=\"--a\n--b\"\nB=c", want: map[string]string{"A": "--a\n--b", "B": "c"}},
		{name: "comments and blanks", in: "# kubelet\n; other\n\n   \nA=1\r\n", want: map[string]string{"A": "1"}},
		{name: "mixed quoting in one value", in: `A="a b"'c d'e`, want: map[string]string{"A": "a bc de"}},
		{name: "later wins", in: "A=1\nA=2", want: map[string]string{"A": "2"}},
		{name: "spaces around equals", in: "A = 1", want: map[string]string{"A": "1"}},
		{name: "export is not systemd syntax", in: "export A=1\nB=2", want: map[string]string{"B": "2"},
			issues: []string{`line 1: invalid variable name "export A" (systemd ignores the line)`}},
		{name: "no equals", in: "just words\nB=2", want: map[string]string{"B": "2"},
			issues: []string{`line 1: not a KEY=VALUE assignment: "just words"`}},
		{name: "unterminated quote", in: `A="--a --b`, want: map[string]string{"A": "--a --b"},
			issues: []string{"line 1: A has an unterminated \" quote"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vars, issues := parseEnvFile(tc.in)
			got := map[string]string{}
			for _, v := range vars {
				got[v.Name] = v.Value
			}
			if !reflect.DeepEqual(got, tc.want) || !reflect.DeepEqual(issues, tc.issues) {
				t.Fatalf("parseEnvFile(%q)\n = %q, issues %q\nwant %q, issues %q", tc.in, got, issues, tc.want, tc.issues)
			}
		})
	}
}

func TestParseUnit(t *testing.T) {
	in := "[Unit]\nDescription=kubelet\n\n[Service]\n# comment\nExecStart=/usr/bin/kubelet \\\n  --a=b \\\n# inside a continuation\n  --c=d\nEnvironment=\"A=1\" B=2\n"
	entries, issues := parseUnit(in)
	if len(issues) > 0 {
		t.Fatalf("issues: %q", issues)
	}
	want := []unitEntry{
		{Section: "Unit", Key: "Description", Value: "kubelet", Line: 2},
		{Section: "Service", Key: "ExecStart", Value: "/usr/bin/kubelet  --a=b  --c=d", Line: 6},
		{Section: "Service", Key: "Environment", Value: `"A=1" B=2`, Line: 10},
	}
	if !reflect.DeepEqual(entries, want) {
		t.Fatalf("parseUnit =\n%+v\nwant\n%+v", entries, want)
	}
	_, issues = parseUnit("ExecStart=/x\n[Service\nnonsense\n")
	wantIssues := []string{"line 1: assignment outside a [section]", `line 2: malformed section header "[Service"`, `line 3: not a KEY=VALUE assignment: "nonsense"`}
	if !reflect.DeepEqual(issues, wantIssues) {
		t.Fatalf("issues = %q, want %q", issues, wantIssues)
	}
}

func TestSplitWords(t *testing.T) {
	cases := []struct {
		in   string
		want []string
		err  string
	}{
		{in: `/usr/bin/kubelet $A "$B" 'c d' e\ f`, want: []string{"/usr/bin/kubelet", "$A", "$B", "c d", "e f"}},
		{in: `"KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml" "X=a \"b\""`, want: []string{"KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml", `X=a "b"`}},
		{in: `a"b c"d`, want: []string{"ab cd"}},
		{in: `a\tb`, want: []string{"a\tb"}},
		{in: `"open`, err: "unterminated"},
		{in: `trailing\`, err: "trailing backslash"},
		{in: "  ", want: nil},
	}
	for _, tc := range cases {
		got, err := splitWords(tc.in, false)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("splitWords(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("splitWords(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if got, err := splitWords(`"open a`, true); err != nil || !reflect.DeepEqual(got, []string{"open a"}) {
		t.Errorf("relaxed splitWords = %q, %v", got, err)
	}
}

func TestExpandExec(t *testing.T) {
	env := map[string]envVar{
		"DAEMON_ARGS": {Name: "DAEMON_ARGS", Value: "--cloud-provider=external --node-labels='a=b c'", Source: "/etc/sysconfig/kubelet"},
		"ZONE":        {Name: "ZONE", Value: "us-east-1a", Source: "/u.conf"},
		"EMPTY":       {Name: "EMPTY", Source: "/u.conf"},
	}
	cases := []struct {
		name, in string
		argv     []string
		refs     []string
	}{
		// systemd splits a $NAME word even when it was quoted (kops's unit).
		{name: "kops quoted whole-word variable", in: `/usr/local/bin/kubelet "$DAEMON_ARGS"`,
			argv: []string{"/usr/local/bin/kubelet", "--cloud-provider=external", "--node-labels=a=b c"}, refs: []string{"DAEMON_ARGS"}},
		{name: "inline braces stay one word", in: `/k --provider-id=aws:///${ZONE}/i-1 --x=$ZONE`,
			argv: []string{"/k", "--provider-id=aws:///us-east-1a/i-1", "--x=$ZONE"}},
		{name: "unset and empty variables vanish", in: `/k $UNSET $EMPTY --a`, argv: []string{"/k", "--a"}, refs: []string{"UNSET", "EMPTY"}},
		{name: "dollar dollar and percent", in: `/k --a=$$ZONE --b=100%%`, argv: []string{"/k", "--a=$ZONE", "--b=100%"}},
		{name: "colon prefix disables expansion", in: `-:/k $ZONE`, argv: []string{"/k", "$ZONE"}},
		{name: "at prefix drops argv0", in: `@/usr/bin/kubelet kubelet --a`, argv: []string{"/usr/bin/kubelet", "--a"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			argv, origins, refs, err := expandExec(tc.in, "/unit.service", env)
			if err != nil || !reflect.DeepEqual(argv, tc.argv) || !reflect.DeepEqual(refs, tc.refs) || len(origins) != len(argv) {
				t.Fatalf("expandExec(%q) = %q refs %q (%d origins), %v; want %q refs %q", tc.in, argv, refs, len(origins), err, tc.argv, tc.refs)
			}
		})
	}
	_, origins, _, _ := expandExec(`/k "$DAEMON_ARGS" --v=2`, "/unit.service", env)
	want := []Origin{{File: "/unit.service"}, {File: "/etc/sysconfig/kubelet", Variable: "DAEMON_ARGS"}, {File: "/etc/sysconfig/kubelet", Variable: "DAEMON_ARGS"}, {File: "/unit.service"}}
	if !reflect.DeepEqual(origins, want) {
		t.Errorf("origins = %v, want %v", origins, want)
	}
}
