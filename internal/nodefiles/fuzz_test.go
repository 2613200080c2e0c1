package nodefiles

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// addFixtures seeds a fuzz corpus with the fixture files matching pattern.
func addFixtures(f *testing.F, patterns ...string) {
	for _, p := range patterns {
		files, err := filepath.Glob(filepath.Join("testdata", "*", p))
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(string(data))
		}
	}
}

func FuzzParseFlags(f *testing.F) {
	f.Add("kube-apiserver\n--a=b\n--c\nd\n--bool\n-v=2\n--\n--x")
	f.Add("/go-runner\n--also-stdout\n/usr/local/bin/kube-apiserver\n--oom-score-adj\n-998\n---bad\n--=x\n-")
	f.Fuzz(func(t *testing.T, s string) {
		fl := ParseFlags(strings.Split(s, "\n"))
		_ = fl.String()
		for _, x := range fl.All() {
			if v, ok := fl.Get(x.Name); !ok || v != fl.Values(x.Name)[len(fl.Values(x.Name))-1] {
				t.Fatalf("Get(%q) = %q, %t disagrees with Values", x.Name, v, ok)
			}
		}
		again := ParseFlags(fl.Tokens())
		if !reflect.DeepEqual(kv(fl), kv(again)) || !reflect.DeepEqual(fl.Command, again.Command) || !reflect.DeepEqual(fl.Args, again.Args) {
			t.Fatalf("unstable: %q -> %q -> %q", s, fl.Tokens(), again.Tokens())
		}
	})
}

// renderEnv writes variables back in double quotes.
func renderEnv(vars []envVar) string {
	var b strings.Builder
	esc := strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `\$`, "`", "\\`")
	for _, v := range vars {
		b.WriteString(v.Name + `="` + esc.Replace(v.Value) + "\"\n")
	}
	return b.String()
}

func FuzzEnvFile(f *testing.F) {
	addFixtures(f, "var/lib/kubelet/kubeadm-flags.env", "etc/default/kubelet", "etc/sysconfig/kubelet")
	f.Add("A='x y'\nB=\"a \\\"b\\\"\" c\\ d \nexport C=1\n# c\n;d\nE=\"open")
	f.Fuzz(func(t *testing.T, s string) {
		vars, _ := parseEnvFile(s)
		for _, v := range vars {
			if strings.Contains(v.Value, "\r") {
				return // CRLF is normalised on input, so it cannot round-trip
			}
		}
		again, issues := parseEnvFile(renderEnv(vars))
		if len(issues) > 0 || !reflect.DeepEqual(vars, again) {
			t.Fatalf("unstable: %q -> %q -> %q (issues %q)", s, vars, again, issues)
		}
	})
}

func FuzzSystemdUnit(f *testing.F) {
	addFixtures(f, "*/systemd/system/kubelet.service", "*/systemd/system/kubelet.service.d/*.conf", "usr/lib/systemd/system/*/*.conf")
	f.Add("[Service]\nEnvironment=\"A=1 2\" B=3\nExecStart=@-:/k $A \"$B\" ${A} $$ %% \\\n --x\n")
	env := map[string]envVar{"A": {Name: "A", Value: "--a 'b c' \"d"}, "DAEMON_ARGS": {Name: "DAEMON_ARGS", Value: "--x=1"}}
	quote := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	f.Fuzz(func(t *testing.T, s string) {
		entries, _ := parseUnit(s)
		var b strings.Builder
		section := ""
		for _, e := range entries {
			if strings.HasSuffix(e.Value, `\`) {
				return // would continue onto the next line when written back
			}
			if e.Section != section {
				section = e.Section
				b.WriteString("[" + section + "]\n")
			}
			b.WriteString(e.Key + "=" + e.Value + "\n")
			words, err := splitWords(e.Value, false)
			if err == nil {
				var q []string
				for _, w := range words {
					q = append(q, `"`+quote.Replace(w)+`"`)
				}
				if again, err := splitWords(strings.Join(q, " "), false); err != nil || !reflect.DeepEqual(words, again) {
					t.Fatalf("splitWords unstable: %q -> %q -> %q, %v", e.Value, words, again, err)
				}
			}
			argv, origins, _, err := expandExec(e.Value, "/u", env)
			if err == nil && len(argv) != len(origins) {
				t.Fatalf("expandExec(%q): %d words, %d origins", e.Value, len(argv), len(origins))
			}
		}
		again, issues := parseUnit(b.String())
		if len(issues) > 0 || len(again) != len(entries) {
			t.Fatalf("unstable: %q -> %q (issues %q)", s, b.String(), issues)
		}
		for i := range again {
			if again[i].Section != entries[i].Section || again[i].Key != entries[i].Key || again[i].Value != entries[i].Value {
				t.Fatalf("unstable entry %d: %+v -> %+v", i, entries[i], again[i])
			}
		}
	})
}

func FuzzStaticPod(f *testing.F) {
	addFixtures(f, "etc/kubernetes/manifests/*")
	f.Add("apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - command: [sh, -c, 'exec kube-apiserver --a=$(x) \"--b=c d\" > /x 2>&1']\n")
	f.Add("mkfifo /tmp/p; (tee -a /l < /tmp/p &); exec /usr/local/bin/kube-apiserver --a=${A:-x} ~/b $((1+2)) `c` > /tmp/p 2>&1")
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = scriptCommand(s, isComponent)
		sp, err := parseStaticPod([]byte(s))
		if err != nil || sp == nil {
			return
		}
		again, err := parseStaticPod([]byte(s))
		if err != nil || !reflect.DeepEqual(sp, again) {
			t.Fatalf("unstable parse of %q", s)
		}
		if !slices.Contains(Components, sp.Component) {
			t.Fatalf("unknown component %q", sp.Component)
		}
	})
}
