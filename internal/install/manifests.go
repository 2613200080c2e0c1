package install

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

// WriteManifests renders v and writes the objects: with dir empty as one
// multi-document YAML stream to out (what Render returns), else one file
// per object into dir, named by FileName and reported on log, removing the
// files of an earlier run that this one no longer renders.
func WriteManifests(v Values, dir string, out, log io.Writer) error {
	objs, err := RenderObjects(v)
	if err != nil {
		return err
	}
	if dir == "" {
		for i, o := range objs {
			if i > 0 {
				if _, err := io.WriteString(out, "---\n"); err != nil {
					return err
				}
			}
			if _, err := out.Write(o.YAML); err != nil {
				return err
			}
		}
		return nil
	}
	// The manifests hold no secret and are for others too: reviewed,
	// committed and applied (kubectl, GitOps), as a rendered chart is.
	if err := os.MkdirAll(dir, 0o755); err != nil { //nolint:gosec // G301: see above
		return fmt.Errorf("create the output folder: %w", err)
	}
	written := map[string]bool{}
	for i, o := range objs {
		name := FileName(i, o)
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, o.YAML, 0o644); err != nil { //nolint:gosec // G306: manifests for others, see MkdirAll
			return fmt.Errorf("write %s: %w", path, err)
		}
		written[name] = true
		fmt.Fprintf(log, "wrote %s (%s %s)\n", path, o.Kind, o.Name)
	}
	return removeStale(dir, written, log)
}

var unsafeFileChars = regexp.MustCompile(`[^a-z0-9.-]+`)

// FileName is the --output-dir file of the i-th object: NN-kind-name.yaml,
// lower case, with characters other than letters, digits, dots and dashes
// (the colon of system:cloud-controller-manager) replaced by a dash.
func FileName(i int, o Object) string {
	name := unsafeFileChars.ReplaceAllString(strings.ToLower(o.Name), "-")
	return fmt.Sprintf("%02d-%s-%s.yaml", i+1, strings.ToLower(o.Kind), name)
}

// ourFile matches the names FileName gives.
var ourFile = regexp.MustCompile(`^[0-9]{2}-(serviceaccount|clusterrole|clusterrolebinding|rolebinding|configmap|daemonset|deployment)-[a-z0-9.-]+\.yaml$`)

// removeStale deletes files an earlier run wrote that this run did not
// (a DaemonSet after switching to a Deployment), so the folder never holds
// both. Only files named like ours and labelled as managed by awsccmctl go.
func removeStale(dir string, written map[string]bool, log io.Writer) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	marker := []byte(LabelManagedBy + ": " + ManagedBy)
	for _, e := range entries {
		if e.IsDir() || written[e.Name()] || !ourFile.MatchString(e.Name()) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(path)
		if err != nil || !bytes.Contains(data, marker) {
			continue
		}
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("remove stale %s: %w", path, err)
		}
		fmt.Fprintf(log, "removed %s (no longer rendered)\n", path)
	}
	return nil
}

// RenderList renders v as one JSON object, a v1 List of the objects in
// apply order (what `install manifests -o json` prints; kubectl apply -f
// takes it as it is), indented, with a final newline.
func RenderList(v Values) ([]byte, error) {
	objs, err := RenderObjects(v)
	if err != nil {
		return nil, err
	}
	list := struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Items      []json.RawMessage `json:"items"`
	}{APIVersion: "v1", Kind: "List", Items: make([]json.RawMessage, 0, len(objs))}
	for _, o := range objs {
		j, err := yaml.YAMLToJSON(o.YAML)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", o.Kind, o.Name, err)
		}
		list.Items = append(list.Items, j)
	}
	b, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
