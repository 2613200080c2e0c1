package nodephase

import (
	"slices"
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
)

func TestEditArgv(t *testing.T) {
	cases := []struct {
		name  string
		toks  string
		start int
		ops   []flagOp
		want  string
	}{
		{"set inline value", "kcm --a=1 --cloud-provider=aws --z=2", 1,
			[]flagOp{setFlag("cloud-provider", "external")}, "kcm --a=1 --cloud-provider=external --z=2"},
		{"set separate value keeps the form", "kcm --cloud-provider aws --z=2", 1,
			[]flagOp{setFlag("cloud-provider", "external")}, "kcm --cloud-provider external --z=2"},
		{"set keeps the spelling", "kcm --cloud_provider=aws", 1,
			[]flagOp{setFlag("cloud-provider", "external")}, "kcm --cloud_provider=external"},
		{"set every occurrence", "kcm --cloud-provider=aws --x --cloud-provider=gce", 1,
			[]flagOp{setFlag("cloud-provider", "external")}, "kcm --cloud-provider=external --x --cloud-provider=external"},
		{"set a bare boolean", "kcm --enable-leader-migration --x=1", 1,
			[]flagOp{setFlag("enable-leader-migration", "true")}, "kcm --enable-leader-migration --x=1"},
		{"add into sorted flags", "kcm --a=1 --c=3", 1,
			[]flagOp{setFlag("b", "2")}, "kcm --a=1 --b=2 --c=3"},
		{"add first into sorted flags", "kcm --c=3", 1,
			[]flagOp{setFlag("b", "2")}, "kcm --b=2 --c=3"},
		{"add after unsorted flags", "kcm --c=3 --a=1", 1,
			[]flagOp{setFlag("b", "2")}, "kcm --c=3 --a=1 --b=2"},
		{"add before positional arguments", "kcm --a=1 -- x y", 1,
			[]flagOp{setFlag("b", "2")}, "kcm --a=1 --b=2 -- x y"},
		{"add without flags", "kcm", 1,
			[]flagOp{setFlag("b", "2")}, "kcm --b=2"},
		{"add after a wrapper keeps the wrapper", "--log-file=/x --also-stdout /bin/kcm --b=1", 3,
			[]flagOp{setFlag("a", "0")}, "--log-file=/x --also-stdout /bin/kcm --a=0 --b=1"},
		{"two adds", "kcm --a=1 --z=2", 1,
			[]flagOp{setFlag("m", "1"), setFlag("b", "2")}, "kcm --a=1 --b=2 --m=1 --z=2"},
		{"remove with its value", "kcm --cloud-config /etc/c --a=1", 1,
			[]flagOp{removeFlag("cloud-config")}, "kcm --a=1"},
		{"remove every occurrence", "kcm --cloud-config=/a --b --cloud-config=/c", 1,
			[]flagOp{removeFlag("cloud-config")}, "kcm --b"},
		{"remove an absent flag", "kcm --a=1", 1,
			[]flagOp{removeFlag("cloud-config")}, "kcm --a=1"},
		{"remove a list item", "api --enable-admission-plugins=NodeRestriction,PersistentVolumeLabel,ResourceQuota", 1,
			[]flagOp{removeItem("enable-admission-plugins", "PersistentVolumeLabel")}, "api --enable-admission-plugins=NodeRestriction,ResourceQuota"},
		{"remove the last list item drops the flag", "api --enable-admission-plugins PersistentVolumeLabel --x", 1,
			[]flagOp{removeItem("enable-admission-plugins", "PersistentVolumeLabel")}, "api --x"},
		{"remove an item given in a separate value", "api --enable-admission-plugins A,PersistentVolumeLabel", 1,
			[]flagOp{removeItem("enable-admission-plugins", "PersistentVolumeLabel")}, "api --enable-admission-plugins A"},
		{"the command is never edited", "--cloud-config=/x kcm", 1,
			[]flagOp{removeFlag("cloud-config")}, "--cloud-config=/x kcm"},
		{"replace and remove together", "kcm --cloud-config=/c --cloud-provider=aws --leader-migration-config=/l", 1,
			[]flagOp{setFlag("cloud-provider", "external"), removeFlag("cloud-config"), removeFlag("leader-migration-config")}, "kcm --cloud-provider=external"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			toks := strings.Fields(c.toks)
			_, got, err := editArgv(toks, c.start, c.ops)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, " ") != c.want {
				t.Errorf("got  %q\nwant %q", strings.Join(got, " "), c.want)
			}
			// Applying the edits to the words gives the same list.
			spans, text := wordSpans(toks)
			edits, _, _ := editArgv(toks, c.start, c.ops)
			te, err := wordEdits(spans, edits, 0)
			if err != nil {
				t.Fatal(err)
			}
			out, err := applyTextEdits(text, te)
			if err != nil || out != c.want {
				t.Errorf("text edit: %q, %v; want %q", out, err, c.want)
			}
			// A second run changes nothing.
			again, _, err := editArgv(got, c.start, c.ops)
			if err != nil || len(again) != 0 {
				t.Errorf("second run: %v, %v", again, err)
			}
		})
	}
}

func TestEditArgvRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		ops  []flagOp
	}{
		{"two changes to one flag", []flagOp{setFlag("a", "1"), removeFlag("a")}},
		{"a value with blanks", []flagOp{setFlag("a", "1 2")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, _, err := editArgv([]string{"kcm"}, 1, c.ops); err == nil {
				t.Error("no error")
			}
		})
	}
}

// wordSpans joins words with one blank and returns their spans.
func wordSpans(words []string) ([]span, string) {
	var spans []span
	var b strings.Builder
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		spans = append(spans, span{b.Len(), b.Len() + len(w)})
		b.WriteString(w)
	}
	return spans, b.String()
}

// TestScanFlagsMatchesNodefiles: the editor sees the flags nodefiles sees.
func TestScanFlagsMatchesNodefiles(t *testing.T) {
	for _, line := range []string{
		"kcm --a=1 --b 2 --c --d -- --e",
		"kcm -v=2 --x -1 --y=--z --_w",
		"kcm positional --a",
	} {
		t.Run(line, func(t *testing.T) {
			toks := strings.Fields(line)
			checkScanMatches(t, toks)
		})
	}
}

func checkScanMatches(t *testing.T, toks []string) {
	t.Helper()
	want := nodefiles.ParseFlags(toks).All()
	start := slices.IndexFunc(toks, func(s string) bool { return nodefiles.IsFlag(s) || s == "--" })
	if start < 0 {
		start = len(toks)
	}
	got := nodefiles.ScanFlags(toks, start)
	if len(got) != len(want) {
		t.Fatalf("%q: %d flags, nodefiles %d", toks, len(got), len(want))
	}
	for i := range got {
		if got[i].Name != want[i].Name || got[i].Value != want[i].Value {
			t.Errorf("%q: flag %d = %s=%s, nodefiles %s=%s", toks, i, got[i].Name, got[i].Value, want[i].Name, want[i].Value)
		}
	}
}
