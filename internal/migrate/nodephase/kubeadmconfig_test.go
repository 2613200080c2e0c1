package nodephase

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// clusterConfig is the part of a ClusterConfiguration the tests look at,
// extraArgs flattened from either API version.
type clusterConfig struct {
	api, kcm map[string]string
	volumes  []map[string]any
	keys     []string // top-level keys in order
}

func readClusterConfig(t *testing.T, data []byte) clusterConfig {
	t.Helper()
	var raw map[string]any
	if err := yaml.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	args := func(comp string) map[string]string {
		out := map[string]string{}
		c, _ := raw[comp].(map[string]any)
		switch a := c["extraArgs"].(type) {
		case map[string]any:
			for k, v := range a {
				out[k] = v.(string)
			}
		case []any:
			for _, it := range a {
				m := it.(map[string]any)
				out[m["name"].(string)] = m["value"].(string)
			}
		}
		return out
	}
	cc := clusterConfig{api: args("apiServer"), kcm: args("controllerManager")}
	if c, ok := raw["controllerManager"].(map[string]any); ok {
		vs, _ := c["extraVolumes"].([]any)
		for _, v := range vs {
			cc.volumes = append(cc.volumes, v.(map[string]any))
		}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(doc.Content[0].Content); i += 2 {
		cc.keys = append(cc.keys, doc.Content[0].Content[i].Value)
	}
	return cc
}

func TestEditClusterConfiguration(t *testing.T) {
	for _, input := range []string{"v1beta3-intree", "v1beta4-intree", "v1beta3-default"} {
		original, err := os.ReadFile(filepath.Join("testdata", "kubeadm-config", input+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		before := readClusterConfig(t, original)
		for _, phase := range []Phase{PhaseControlPlaneLeaderMigration, PhaseControlPlaneExternal} {
			t.Run(input+"/"+string(phase), func(t *testing.T) {
				out, err := EditClusterConfiguration(original, phase, LeaderMigrationConfigPath)
				if err != nil {
					t.Fatal(err)
				}
				golden := filepath.Join("testdata", "kubeadm-config", "golden", input+"."+string(phase)+".yaml")
				if *update {
					if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(golden, out, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run the test with -update)", err)
				}
				if !bytes.Equal(out, want) {
					t.Errorf("differs from %s:\n%s", golden, unifiedDiff("golden", "got", want, out, true, true))
				}
				after := readClusterConfig(t, out)
				if strings.Join(after.keys, ",") != strings.Join(before.keys, ",") {
					t.Errorf("top-level keys %v, were %v", after.keys, before.keys)
				}
				checkClusterConfig(t, phase, before, after)
				// The phase's output is its own fixed point.
				again, err := EditClusterConfiguration(out, phase, LeaderMigrationConfigPath)
				if err != nil || !bytes.Equal(again, out) {
					t.Errorf("editing the output again: %v\n%s", err, unifiedDiff("first", "second", out, again, true, true))
				}
			})
		}
		t.Run(input+"/restore", func(t *testing.T) {
			out, err := EditClusterConfiguration(original, PhaseRestore, LeaderMigrationConfigPath)
			if err != nil || !bytes.Equal(out, original) {
				t.Errorf("restore: %v", err)
			}
		})
	}
}

func checkClusterConfig(t *testing.T, phase Phase, before, after clusterConfig) {
	t.Helper()
	lmVolumes := 0
	for _, v := range after.volumes {
		if v["name"] == LeaderMigrationVolumeName {
			lmVolumes++
			if v["hostPath"] != LeaderMigrationConfigPath || v["mountPath"] != LeaderMigrationConfigPath || v["readOnly"] != true || v["pathType"] != "File" {
				t.Errorf("leader-migration volume %v", v)
			}
		}
	}
	switch phase {
	case PhaseControlPlaneLeaderMigration:
		if after.kcm["enable-leader-migration"] != "true" || after.kcm["leader-migration-config"] != LeaderMigrationConfigPath || lmVolumes != 1 {
			t.Errorf("controllerManager: %v, %d leader-migration volumes", after.kcm, lmVolumes)
		}
		if after.kcm["cloud-provider"] != before.kcm["cloud-provider"] || len(after.api) != len(before.api) {
			t.Errorf("leader migration changed more: %v %v", after.kcm, after.api)
		}
	case PhaseControlPlaneExternal:
		if after.kcm["cloud-provider"] != "external" || lmVolumes != 0 {
			t.Errorf("controllerManager: %v, %d leader-migration volumes", after.kcm, lmVolumes)
		}
		for _, f := range []string{"cloud-config", "enable-leader-migration", "leader-migration-config"} {
			if _, ok := after.kcm[f]; ok {
				t.Errorf("controllerManager keeps %s", f)
			}
		}
		for _, f := range []string{"cloud-config", "cloud-provider"} {
			if _, ok := after.api[f]; ok {
				t.Errorf("apiServer keeps %s", f)
			}
		}
		if v, ok := after.api["enable-admission-plugins"]; ok && (strings.Contains(v, pluginPVL) || v == "") {
			t.Errorf("apiServer enable-admission-plugins=%q", v)
		}
		if after.api["authorization-mode"] != before.api["authorization-mode"] {
			t.Errorf("apiServer lost authorization-mode")
		}
	default:
		// The other phases do not edit kubeadm-config.
	}
}

func TestEditClusterConfigurationKeepsComments(t *testing.T) {
	in := "# written by the bootstrap script\napiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\ncontrollerManager:\n  extraArgs:\n    cloud-provider: aws # in-tree\n    v: \"2\"\n"
	out, err := EditClusterConfiguration([]byte(in), PhaseControlPlaneExternal, "")
	if err != nil {
		t.Fatal(err)
	}
	want := "# written by the bootstrap script\napiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\ncontrollerManager:\n  extraArgs:\n    cloud-provider: external # in-tree\n    v: \"2\"\n"
	if string(out) != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
}

func TestEditClusterConfigurationRefuses(t *testing.T) {
	v3 := "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\n"
	cases := []struct {
		name, in string
		phase    Phase
		want     string
	}{
		{"kubelet phase", v3, PhaseKubeletExternal, "has no ClusterConfiguration change"},
		{"unknown phase", v3, "x", "has no ClusterConfiguration change"},
		{"not YAML", "a: [", PhaseControlPlaneExternal, "not valid YAML"},
		{"two documents", v3 + "---\n" + v3, PhaseControlPlaneExternal, "one YAML document"},
		{"not a mapping", "- a\n", PhaseControlPlaneExternal, "not a mapping"},
		{"another kind", "apiVersion: kubeadm.k8s.io/v1beta3\nkind: InitConfiguration\n", PhaseControlPlaneExternal, "want ClusterConfiguration"},
		{"old API version", "apiVersion: kubeadm.k8s.io/v1beta1\nkind: ClusterConfiguration\n", PhaseControlPlaneExternal, "not supported"},
		{"v1beta3 with a list of extraArgs", v3 + "apiServer:\n  extraArgs:\n  - name: cloud-provider\n    value: aws\n", PhaseControlPlaneExternal, "extraArgs is not a map"},
		{"v1beta4 with a map of extraArgs", "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\napiServer:\n  extraArgs:\n    cloud-provider: aws\n", PhaseControlPlaneExternal, "extraArgs is not a list"},
		{"controllerManager not a mapping", v3 + "controllerManager: x\n", PhaseControlPlaneExternal, "controllerManager is not a mapping"},
		{"another leader-migration volume", v3 + "controllerManager:\n  extraVolumes:\n  - name: awsccmctl-leader-migration\n    hostPath: /other\n", PhaseControlPlaneLeaderMigration, "want /etc/kubernetes/awsccmctl/leader-migration.yaml"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := EditClusterConfiguration([]byte(c.in), c.phase, "")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
}
