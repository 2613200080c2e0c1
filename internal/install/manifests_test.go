package install

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// TestWriteManifestsStream: without a folder the objects go to out as
// exactly what Render returns.
func TestWriteManifestsStream(t *testing.T) {
	v := Values{Image: "registry.example.com/ccm:v1", ClusterName: "prod"}
	v.Default()
	var out, log bytes.Buffer
	if err := WriteManifests(v, "", &out, &log); err != nil {
		t.Fatal(err)
	}
	want, err := Render(v)
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != string(want) || log.Len() != 0 {
		t.Errorf("stream differs from Render (log %q):\n%s", log.String(), out.String())
	}
}

func TestWriteManifestsDir(t *testing.T) {
	dir := t.TempDir()
	// A file of someone else's, named like ours, must survive.
	foreign := filepath.Join(dir, "07-configmap-mine.yaml")
	if err := os.WriteFile(foreign, []byte("kind: ConfigMap\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(v Values) (string, string) {
		t.Helper()
		v.Default()
		var out, log bytes.Buffer
		if err := WriteManifests(v, dir, &out, &log); err != nil {
			t.Fatal(err)
		}
		return out.String(), log.String()
	}
	out, log := write(Values{})
	if out != "" {
		t.Fatalf("wrote to out with a folder: %q", out)
	}
	want := []string{
		"01-serviceaccount-cloud-controller-manager.yaml",
		"02-clusterrole-system-cloud-controller-manager.yaml",
		"03-clusterrolebinding-system-cloud-controller-manager.yaml",
		"04-rolebinding-cloud-controller-manager-apiserver-authentication-reader.yaml",
		"05-configmap-aws-cloud-config.yaml",
		"06-daemonset-aws-cloud-controller-manager.yaml",
		"07-configmap-mine.yaml",
	}
	if got := list(t, dir); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("files %v, want %v", got, want)
	}
	if !strings.Contains(log, "wrote "+filepath.Join(dir, want[0])) {
		t.Errorf("progress on log: %q", log)
	}
	// Switching to a Deployment removes the DaemonSet file.
	_, log = write(Values{Workload: WorkloadDeployment})
	got := list(t, dir)
	if got[5] != "06-deployment-aws-cloud-controller-manager.yaml" || len(got) != 7 {
		t.Errorf("after switching: %v", got)
	}
	if !strings.Contains(log, "removed "+filepath.Join(dir, want[5])) {
		t.Errorf("stale file removal not reported: %q", log)
	}
}

// TestWriteManifestsDirNotCreatable: a folder that cannot be made is an
// error naming it, and nothing is written.
func TestWriteManifestsDirNotCreatable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	v := Values{}
	v.Default()
	err := WriteManifests(v, filepath.Join(file, "sub"), &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), file) {
		t.Fatalf("error %v, want one naming %s", err, file)
	}
}

func list(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

func TestFileName(t *testing.T) {
	if got := FileName(1, Object{Kind: "ClusterRole", Name: "system:Cloud"}); got != "02-clusterrole-system-cloud.yaml" {
		t.Errorf("FileName = %q", got)
	}
}

// TestRenderListIsTheObjects: the JSON List holds exactly the rendered
// objects, in apply order, and decodes as a v1 List.
func TestRenderListIsTheObjects(t *testing.T) {
	v := Values{Image: testImage, Workload: WorkloadDeployment}
	b, err := RenderList(v)
	if err != nil {
		t.Fatal(err)
	}
	var list corev1.List
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatalf("not a v1 List: %v", err)
	}
	objs, err := RenderObjects(v)
	if err != nil {
		t.Fatal(err)
	}
	if list.APIVersion != "v1" || list.Kind != "List" || len(list.Items) != len(objs) {
		t.Fatalf("%s %s with %d items, want %d", list.APIVersion, list.Kind, len(list.Items), len(objs))
	}
	for i, o := range objs {
		want, err := yaml.YAMLToJSON(o.YAML)
		if err != nil {
			t.Fatal(err)
		}
		var a, w any
		if err := json.Unmarshal(list.Items[i].Raw, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, w) {
			t.Errorf("item %d (%s %s) differs from the YAML document", i, o.Kind, o.Name)
		}
	}
	if _, err := RenderList(Values{Image: "Nope"}); err == nil {
		t.Error("RenderList rendered invalid values")
	}
}
