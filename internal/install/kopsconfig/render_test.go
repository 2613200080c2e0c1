package kopsconfig

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/awsccmctl/awsccmctl/internal/fielderr"
)

var update = flag.Bool("update", false, "rewrite the golden files")

const image = "ghcr.io/awsccmctl/aws-cloud-controller-manager:v0.1.0"

func TestGolden(t *testing.T) {
	cases := map[string]Options{
		"image-only":   {ClusterName: "demo.k8s.example.com", Image: image},
		"cloud-routes": {ClusterName: "demo.k8s.example.com", Image: image, AllocateNodeCIDRs: ptr.To(true), ConfigureCloudRoutes: ptr.To(true), ClusterCIDR: "100.96.0.0/11"},
	}
	for name, o := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := Render(o)
			if err != nil {
				t.Fatal(err)
			}
			got := string(out.Snippet) + "---\n# commands\n" + strings.Join(out.Commands, "\n") + "\n"
			path := filepath.Join("testdata", name+".txt")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("output differs from %s (go test -update to accept):\n%s", path, got)
			}
			// The snippet decodes strictly into the kops field names, and the
			// --set commands carry the same values.
			var s Snippet
			if err := yaml.UnmarshalStrict(out.Snippet, &s); err != nil {
				t.Fatalf("snippet does not decode strictly: %v", err)
			}
			if s.Spec.CloudControllerManager.Image != o.Image {
				t.Errorf("snippet image %q, want %q", s.Spec.CloudControllerManager.Image, o.Image)
			}
			if !strings.Contains(out.Commands[0], "--set spec.cloudControllerManager.image="+o.Image) {
				t.Errorf("edit command lacks the image: %s", out.Commands[0])
			}
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	err := Options{ClusterName: "Not_A_DNS_Name", Image: "bad image", ConfigureCloudRoutes: ptr.To(true), ClusterCIDR: "100.96.0.0"}.Validate()
	for _, want := range []string{`cluster name "Not_A_DNS_Name"`, `image "bad image"`, `cluster CIDR "100.96.0.0"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
	// Each problem names its field, typed (the command maps it to a flag).
	var fields []string
	for _, p := range fielderr.Problems(err) {
		if fe, ok := fielderr.FieldOf(p); ok {
			fields = append(fields, fe.Field)
		}
	}
	if want := []string{FieldClusterName, "image", FieldClusterCIDR}; !slices.Equal(fields, want) {
		t.Errorf("fields %q, want %q", fields, want)
	}
	if err := (Options{Image: image, ConfigureCloudRoutes: ptr.To(true)}).Validate(); err == nil ||
		!strings.Contains(err.Error(), "cluster name: required") || !strings.Contains(err.Error(), "needs the cluster CIDR") {
		t.Errorf("missing name and CIDR not both reported: %v", err)
	}
	if _, err := Render(Options{}); err == nil {
		t.Error("Render accepted empty options")
	}
}

// TestText: the printed form is the snippet, the marker line, then one
// command per line, so scripts can split it at the marker.
func TestText(t *testing.T) {
	for _, tc := range []struct {
		name string
		out  Output
		want string
	}{
		{"valid-snippet-ends-in-newline", Output{Snippet: []byte("spec: {}\n"), Commands: []string{"a", "b"}}, "spec: {}\n" + CommandsMarker + "\na\nb\n"},
		{"valid-snippet-without-newline", Output{Snippet: []byte("spec: {}"), Commands: []string{"a"}}, "spec: {}\n" + CommandsMarker + "\na\n"},
		{"valid-empty", Output{}, CommandsMarker + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(tc.out.Text()); got != tc.want {
				t.Errorf("Text() = %q, want %q", got, tc.want)
			}
		})
	}
	out, err := Render(Options{ClusterName: "demo.k8s.example.com", Image: image})
	if err != nil {
		t.Fatal(err)
	}
	snippet, commands, ok := strings.Cut(string(out.Text()), "\n"+CommandsMarker+"\n")
	if !ok || snippet+"\n" != string(out.Snippet) || commands != strings.Join(out.Commands, "\n")+"\n" {
		t.Errorf("Text() does not split into the snippet and the commands:\n%s", out.Text())
	}
}

// TestImageIsCheckedLikeEveryTarget: kops gets the image rule of
// install.ValidateImage, not only a check for blanks.
func TestImageIsCheckedLikeEveryTarget(t *testing.T) {
	for image, want := range map[string]string{"": "empty", "Registry/CCM:v1": "not an image reference", "registry.example.com/ccm": "pin a tag or digest"} {
		err := Options{ClusterName: "c.example.com", Image: image}.Validate()
		if err == nil || !strings.Contains(err.Error(), `image "`+image+`": `) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", image, err, want)
		}
	}
}

// TestJSON: -o json holds the same fragment and commands as the text.
func TestJSON(t *testing.T) {
	routes := true
	out, err := Render(Options{ClusterName: "c.example.com", Image: "registry.example.com/ccm:v1", ConfigureCloudRoutes: &routes, ClusterCIDR: "100.96.0.0/11"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := out.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Cluster  Snippet  `json:"cluster"`
		Commands []string `json:"commands"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	var fromText Snippet
	if err := yaml.UnmarshalStrict(out.Snippet, &fromText); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Cluster, fromText) || !reflect.DeepEqual(got.Commands, out.Commands) {
		t.Errorf("JSON %s\ndiffers from the text:\n%s", b, out.Text())
	}
}
