package installcmd_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/install"
)

// renderCommands are the install commands that only render, with the flags
// each needs to succeed.
var renderCommands = map[string][]string{
	"manifests": {"install", "manifests"},
	"iam":       {"install", "iam"},
	"kubeadm":   {"install", "kubeadm", "--kubernetes-version", "v1.37.1"},
	"kops":      {"install", "kops", "--name", "c.example.com"},
}

// TestOutputFormatIsHonouredOrRefused: every render command either does
// what -o asks or exits 2 naming --output and what it accepts; none
// ignores it.
func TestOutputFormatIsHonouredOrRefused(t *testing.T) {
	for name, args := range renderCommands {
		t.Run(name+"/xml", func(t *testing.T) {
			out, _, err := run(t, append(append([]string{}, args...), "-o", "xml")...)
			if code := exitcode.Of(err); code != exitcode.Usage || !strings.Contains(err.Error(), `--output "xml"`) || out != "" {
				t.Errorf("-o xml: exit %d, %v, stdout %q", code, err, out)
			}
		})
	}
	// kubeadm reads YAML: json is refused, naming what is allowed; -o json
	// asked for a machine-readable answer, so the refusal is the JSON error
	// document on stdout and nothing else.
	const refusal = `--output "json": install kubeadm writes kubeadm's YAML configuration; want text`
	out, _, err := run(t, append(append([]string{}, renderCommands["kubeadm"]...), "-o", "json")...)
	if code := exitcode.Of(err); code != exitcode.Usage || !strings.Contains(err.Error(), refusal) {
		t.Errorf("kubeadm -o json: exit %d, %v", code, err)
	}
	var doc struct {
		Error struct {
			Message  string `json:"message"`
			ExitCode int    `json:"exitCode"`
		} `json:"error"`
	}
	if jerr := json.Unmarshal([]byte(out), &doc); jerr != nil || doc.Error.ExitCode != exitcode.Usage || !strings.Contains(doc.Error.Message, refusal) {
		t.Errorf("kubeadm -o json: stdout %q (%v), want the JSON error document", out, jerr)
	}
	if _, _, err := run(t, append(append([]string{}, renderCommands["kubeadm"]...), "-o", "text")...); err != nil {
		t.Errorf("kubeadm -o text: %v", err)
	}
}

// TestManifestsJSONIsAList: -o json prints the same objects as the YAML
// stream, as one v1 List.
func TestManifestsJSONIsAList(t *testing.T) {
	out, _, err := run(t, "install", "manifests", "--cluster-name", "prod", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		APIVersion string           `json:"apiVersion"`
		Kind       string           `json:"kind"`
		Items      []map[string]any `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	objs, err := install.RenderObjects(install.Values{ClusterName: "prod"})
	if err != nil {
		t.Fatal(err)
	}
	if list.APIVersion != "v1" || list.Kind != "List" || len(list.Items) != len(objs) {
		t.Fatalf("%s %s with %d items, want a v1 List of %d", list.APIVersion, list.Kind, len(list.Items), len(objs))
	}
	for i, o := range objs {
		if list.Items[i]["kind"] != o.Kind || list.Items[i]["metadata"].(map[string]any)["name"] != o.Name {
			t.Errorf("item %d is %v %v, want %s %s", i, list.Items[i]["kind"], list.Items[i]["metadata"], o.Kind, o.Name)
		}
	}
	// Files are YAML: json with --output-dir is refused before writing.
	dir := filepath.Join(t.TempDir(), "out")
	_, _, err = run(t, "install", "manifests", "-o", "json", "--output-dir", dir)
	if code := exitcode.Of(err); code != exitcode.Usage || !strings.Contains(err.Error(), "--output-dir") {
		t.Errorf("-o json --output-dir: exit %d, %v", code, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the folder was created: %v", err)
	}
}

// TestIAMJSON: the policies are JSON whatever -o says.
func TestIAMJSON(t *testing.T) {
	text, _, err := run(t, "install", "iam", "--role", "control-plane")
	if err != nil {
		t.Fatal(err)
	}
	js, _, err := run(t, "install", "iam", "--role", "control-plane", "-o", "json")
	if err != nil || js != text || !json.Valid([]byte(js)) {
		t.Errorf("-o json: %v; same as text: %v; valid JSON: %v", err, js == text, json.Valid([]byte(js)))
	}
}

// TestKopsJSON: -o json is the snippet and the commands as one object.
func TestKopsJSON(t *testing.T) {
	out, _, err := run(t, "install", "kops", "--name", "c.example.com", "--image", "registry.example.com/ccm:v1", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Cluster struct {
			Spec struct {
				CloudControllerManager struct {
					Image string `json:"image"`
				} `json:"cloudControllerManager"`
			} `json:"spec"`
		} `json:"cluster"`
		Commands []string `json:"commands"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if got.Cluster.Spec.CloudControllerManager.Image != "registry.example.com/ccm:v1" || len(got.Commands) != 2 ||
		!strings.HasPrefix(got.Commands[0], "kops edit cluster --name c.example.com ") {
		t.Errorf("got %+v", got)
	}
}
