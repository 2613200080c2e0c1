package kubeadmapi

import (
	"encoding/json"
	"slices"
	"testing"

	yaml "go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"
)

// TestExtraArgsBothForms reads one flag from each form, through the typed
// decoder (preflight) and the node tree (the editors): both must agree.
func TestExtraArgsBothForms(t *testing.T) {
	cases := []struct {
		name       string
		apiVersion string
		doc        string
		want       []string
	}{
		{name: "v1beta3 map", apiVersion: V1beta3, doc: "extraArgs:\n  cloud-provider: aws\n  v: \"2\"\n", want: []string{"aws"}},
		{name: "v1beta2 map", apiVersion: V1beta2, doc: "extraArgs:\n  cloud-provider: external\n", want: []string{"external"}},
		{name: "v1beta4 list, repeated", apiVersion: V1beta4,
			doc:  "extraArgs:\n- name: cloud-provider\n  value: aws\n- name: v\n  value: \"2\"\n- name: cloud-provider\n  value: external\n",
			want: []string{"aws", "external"}},
		{name: "absent", apiVersion: V1beta4, doc: "extraArgs: []\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var typed struct {
				ExtraArgs ExtraArgs `json:"extraArgs"`
			}
			if err := sigsyaml.Unmarshal([]byte(tc.doc), &typed); err != nil {
				t.Fatal(err)
			}
			if got := typed.ExtraArgs.Values("cloud-provider"); !slices.Equal(got, tc.want) {
				t.Errorf("ExtraArgs.Values = %q, want %q", got, tc.want)
			}
			var root yaml.Node
			if err := yaml.Unmarshal([]byte(tc.doc), &root); err != nil {
				t.Fatal(err)
			}
			args := MapValue(root.Content[0], "extraArgs")
			if got := NodeValues(args, "cloud-provider"); !slices.Equal(got, tc.want) {
				t.Errorf("NodeValues = %q, want %q", got, tc.want)
			}
			if list := args.Kind == yaml.SequenceNode; list != ArgsAreList(tc.apiVersion) && len(args.Content) > 0 {
				t.Errorf("ArgsAreList(%s) = %v, the document is a list: %v", tc.apiVersion, ArgsAreList(tc.apiVersion), list)
			}
		})
	}
}

func TestExtraArgsRefusesOtherShapes(t *testing.T) {
	for _, data := range []string{`"yes"`, `{"a":{"b":"c"}}`, `[{"name":1}]`} {
		var e ExtraArgs
		if err := json.Unmarshal([]byte(data), &e); err == nil {
			t.Errorf("%s: decoded as %v, want an error", data, e)
		}
	}
}
