package install

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDecodeConfigFixtures: testdata/config/valid-* decode, default and
// validate; invalid-*.yaml fail with the text in the matching .err file.
func TestDecodeConfigFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "config", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			err = loadValues(data)
			if strings.HasPrefix(name, "valid-") {
				if err != nil {
					t.Fatalf("valid fixture refused: %v", err)
				}
				return
			}
			want, rerr := os.ReadFile(strings.TrimSuffix(f, ".yaml") + ".err")
			if rerr != nil {
				t.Fatalf("invalid fixture without .err file: %v", rerr)
			}
			if err == nil {
				t.Fatal("invalid fixture accepted")
			}
			for _, line := range strings.Split(strings.TrimSpace(string(want)), "\n") {
				if !strings.Contains(err.Error(), line) {
					t.Errorf("error does not contain %q:\n%v", line, err)
				}
			}
		})
	}
}

// loadValues runs the separate steps: decode, apply, default, validate.
func loadValues(data []byte) error {
	c, err := DecodeConfig(data)
	if err != nil {
		return err
	}
	var v Values
	if err := c.ApplyTo(&v); err != nil {
		return err
	}
	v.Default()
	return v.Validate()
}

// TestApplyToKeepsUnsetFields: a file sets only what it names.
func TestApplyToKeepsUnsetFields(t *testing.T) {
	c, err := DecodeConfig([]byte("apiVersion: awsccmctl.io/v1alpha1\nkind: InstallConfiguration\nclusterName: a\nregion: us-west-2\n"))
	if err != nil {
		t.Fatal(err)
	}
	v := Values{Image: "x:1", ConfigureCloudRoutes: true}
	if err := c.ApplyTo(&v); err != nil {
		t.Fatal(err)
	}
	if v.Image != "x:1" || !v.ConfigureCloudRoutes || v.ClusterName != "a" || v.Region != "us-west-2" {
		t.Fatalf("ApplyTo: %+v", v)
	}
}

// TestApplyToMonitoringLabels: monitoringLabels reach Values, and an
// InstallConfiguration's labels without monitoring are refused.
func TestApplyToMonitoringLabels(t *testing.T) {
	const head = "apiVersion: awsccmctl.io/v1alpha1\nkind: InstallConfiguration\n"
	c, err := DecodeConfig([]byte(head + "monitoring: true\nmonitoringLabels: {release: kube-prometheus-stack}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var v Values
	if err := c.ApplyTo(&v); err != nil {
		t.Fatal(err)
	}
	if !v.Monitoring || v.MonitoringLabels["release"] != "kube-prometheus-stack" {
		t.Errorf("ApplyTo: monitoring %t, labels %v", v.Monitoring, v.MonitoringLabels)
	}
	if err := loadValues([]byte(head + "monitoringLabels: {release: x}\n")); err == nil || !strings.Contains(err.Error(), "monitoringLabels") {
		t.Errorf("labels without monitoring: %v, want a monitoringLabels error", err)
	}
}
