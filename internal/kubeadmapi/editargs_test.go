package kubeadmapi

import (
	"bytes"
	"errors"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// edit parses doc (a component mapping under "c"), runs f on its extraArgs
// editor and returns the document written back.
func edit(t *testing.T, doc string, list bool, f func(*ArgsEditor) (bool, error)) (string, bool, error) {
	t.Helper()
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &root); err != nil {
		t.Fatal(err)
	}
	changed, err := f(EditArgs(MapValue(root.Content[0], "c"), "extraArgs", list))
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&root); err != nil {
		t.Fatal(err)
	}
	return b.String(), changed, err
}

func TestArgsEditorSet(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		list      bool
		flag, val string
		want      string
		changed   bool
	}{
		{"map: new flag keeps kubeadm's sorted keys sorted", "c:\n  extraArgs:\n    a: \"1\"\n    c: \"3\"\n", false, "b", "2",
			"c:\n  extraArgs:\n    a: \"1\"\n    b: \"2\"\n    c: \"3\"\n", true},
		{"map: unsorted keys get the new flag at the end", "c:\n  extraArgs:\n    c: \"3\"\n    a: \"1\"\n", false, "b", "2",
			"c:\n  extraArgs:\n    c: \"3\"\n    a: \"1\"\n    b: \"2\"\n", true},
		{"map: the same value changes nothing", "c:\n  extraArgs:\n    b: \"2\" # keep\n", false, "b", "2",
			"c:\n  extraArgs:\n    b: \"2\" # keep\n", false},
		{"map: another value is replaced, its comment kept", "c:\n  extraArgs:\n    b: x # keep\n", false, "b", "2",
			"c:\n  extraArgs:\n    b: \"2\" # keep\n", true},
		{"map: absent field is created in key order", "c:\n  z: 1\n", false, "b", "2",
			"c:\n  extraArgs:\n    b: \"2\"\n  z: 1\n", true},
		{"map: null field is filled", "c:\n  extraArgs:\n", false, "b", "2",
			"c:\n  extraArgs:\n    b: \"2\"\n", true},
		{"map: a null's comment stays", "c:\n  extraArgs: ~ # the CCM's\n", false, "b", "2",
			"c:\n  extraArgs: # the CCM's\n    b: \"2\"\n", true},
		{"list: every item naming the flag is set", "c:\n  extraArgs:\n  - name: b\n    value: x\n  - name: b\n    value: \"2\"\n", true, "b", "2",
			"c:\n  extraArgs:\n    - name: b\n      value: \"2\"\n    - name: b\n      value: \"2\"\n", true},
		{"list: new flag is appended", "c:\n  extraArgs: []\n", true, "b", "2",
			"c:\n  extraArgs:\n    - name: b\n      value: \"2\"\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, changed, err := edit(t, tc.doc, tc.list, func(e *ArgsEditor) (bool, error) { return e.Set(tc.flag, tc.val) })
			if err != nil || got != tc.want || changed != tc.changed {
				t.Errorf("Set = changed %v, %v\n%s\nwant changed %v\n%s", changed, err, got, tc.changed, tc.want)
			}
		})
	}
}

func TestArgsEditorRemove(t *testing.T) {
	for _, tc := range []struct {
		name, doc  string
		list       bool
		flag, item string
		want       string
		changed    bool
	}{
		{"map: flag removed, empty field removed", "c:\n  z: 1\n  extraArgs:\n    b: x\n", false, "b", "",
			"c:\n  z: 1\n", true},
		{"map: one item of a list value", "c:\n  extraArgs:\n    p: A,PersistentVolumeLabel,B\n", false, "p", "PersistentVolumeLabel",
			"c:\n  extraArgs:\n    p: A,B\n", true},
		{"map: the last item removes the flag", "c:\n  extraArgs:\n    p: PersistentVolumeLabel\n    q: x\n", false, "p", "PersistentVolumeLabel",
			"c:\n  extraArgs:\n    q: x\n", true},
		{"map: absent flag changes nothing", "c:\n  extraArgs:\n    q: x\n", false, "p", "",
			"c:\n  extraArgs:\n    q: x\n", false},
		{"list: every item naming the flag", "c:\n  extraArgs:\n  - name: b\n    value: x\n  - name: q\n    value: y\n  - name: b\n    value: z\n", true, "b", "",
			"c:\n  extraArgs:\n    - name: q\n      value: y\n", true},
		{"null field changes nothing", "c:\n  extraArgs:\n", true, "b", "",
			"c:\n  extraArgs:\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, changed, err := edit(t, tc.doc, tc.list, func(e *ArgsEditor) (bool, error) { return e.Remove(tc.flag, tc.item) })
			if err != nil || got != tc.want || changed != tc.changed {
				t.Errorf("Remove = changed %v, %v\n%s\nwant changed %v\n%s", changed, err, got, tc.changed, tc.want)
			}
		})
	}
}

// TestArgsEditorRefusesTheOtherForm: a map where the version wants a list
// (or the reverse) is an error naming the line, and the document is left
// as it was.
func TestArgsEditorRefusesTheOtherForm(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		list bool
		want string
	}{
		{"c:\n  extraArgs:\n  - name: b\n    value: x\n", false, "line 2: extraArgs is not a map of flag: value"},
		{"c:\n  extraArgs:\n    b: x\n", true, "line 2: extraArgs is not a list of {name, value}"},
	} {
		for name, f := range map[string]func(*ArgsEditor) (bool, error){
			"Set":    func(e *ArgsEditor) (bool, error) { return e.Set("b", "y") },
			"Remove": func(e *ArgsEditor) (bool, error) { return e.Remove("b", "") },
		} {
			got, changed, err := edit(t, tc.doc, tc.list, f)
			var shape *ShapeError
			if !errors.As(err, &shape) || err.Error() != tc.want || changed {
				t.Errorf("%s on %q: changed %v, %v; want %q", name, tc.doc, changed, err, tc.want)
			}
			unchanged, _, _ := edit(t, tc.doc, tc.list, func(*ArgsEditor) (bool, error) { return false, nil })
			if got != unchanged {
				t.Errorf("%s on %q changed the document:\n%s", name, tc.doc, got)
			}
		}
	}
}
