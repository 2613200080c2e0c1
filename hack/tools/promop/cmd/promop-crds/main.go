// Command promop-crds prints prometheus-operator's CustomResourceDefinitions
// as the operator's release embeds them (its example/crds.go), so the tests
// validate the ServiceMonitor and PrometheusRule `awsccmctl install
// --monitoring` renders against the real schemas. With arguments it prints
// only the CRDs of those names (e.g. servicemonitors.monitoring.coreos.com).
package main

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"

	crd "github.com/prometheus-operator/prometheus-operator/example"
	"sigs.k8s.io/yaml"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "promop-crds:", err)
		os.Exit(1)
	}
}

func run(names []string) error {
	var all bytes.Buffer
	if err := crd.PrintAll(&all); err != nil {
		return err
	}
	var out []string
	found := map[string]bool{}
	// Each embedded file starts with its own ---, and PrintAll puts one
	// between files as well.
	for _, doc := range strings.Split("\n"+all.String(), "\n---\n") {
		var meta struct {
			Metadata struct{ Name string } `json:"metadata"`
		}
		doc = strings.TrimSpace(doc)
		if doc == "" || doc == "---" {
			continue
		}
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			return fmt.Errorf("an embedded CRD does not parse: %w", err)
		}
		if len(names) == 0 || slices.Contains(names, meta.Metadata.Name) {
			found[meta.Metadata.Name] = true
			out = append(out, doc)
		}
	}
	for _, n := range names {
		if !found[n] {
			return fmt.Errorf("no CRD named %s in prometheus-operator's example/crds.go", n)
		}
	}
	_, err := fmt.Println(strings.Join(out, "\n---\n"))
	return err
}
