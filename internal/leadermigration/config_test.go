package leadermigration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	lmconfig "k8s.io/controller-manager/pkg/leadermigration/config"
)

// The rendered file must be read by cloud-provider's own reader (strict) and
// pass its validation: resourceLock is defaulted by the reader, never written.
func TestRenderIsReadByTheControllerManagerLibrary(t *testing.T) {
	for _, component := range []string{ComponentKCM, ComponentCCM} {
		t.Run(component, func(t *testing.T) {
			data, err := Render(component)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(data), "resourceLock") {
				t.Errorf("rendered file carries resourceLock (current CCMs refuse it):\n%s", data)
			}
			p := filepath.Join(t.TempDir(), "lm.yaml")
			if err := os.WriteFile(p, data, 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := lmconfig.ReadLeaderMigrationConfiguration(p)
			if err != nil {
				t.Fatalf("the controller-manager library refuses the file: %v\n%s", err, data)
			}
			if errs := lmconfig.ValidateLeaderMigrationConfiguration(cfg); len(errs) > 0 {
				t.Fatalf("invalid: %v", errs)
			}
			if cfg.LeaderName != LeaseName {
				t.Errorf("leaderName = %q", cfg.LeaderName)
			}
			got := map[string]string{}
			for _, l := range cfg.ControllerLeaders {
				got[l.Name] = l.Component
			}
			for _, name := range append(KCMNames(), CCMNames()...) {
				if got[name] != component {
					t.Errorf("controller %q assigned to %q, want %q", name, got[name], component)
				}
			}
			if err := Validate(data, component); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

func TestValidateRejects(t *testing.T) {
	good, err := Render(ComponentCCM)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, data, component, want string }{
		{"resource lock (trap A)", string(good) + "resourceLock: leases\n", ComponentCCM, "unknown field"},
		{"documented names only (trap B)", `apiVersion: controllermanager.config.k8s.io/v1
kind: LeaderMigrationConfiguration
leaderName: cloud-provider-extraction-migration
controllerLeaders:
- {name: route, component: cloud-controller-manager}
- {name: service, component: cloud-controller-manager}
- {name: cloud-node-lifecycle, component: cloud-controller-manager}
`, ComponentCCM, `"service-lb-controller" is not listed`},
		{"other component", string(good), ComponentKCM, "assigned to"},
		{"other lease", strings.Replace(string(good), LeaseName, "other", 1), ComponentCCM, "leaderName"},
		{"not YAML", "{", ComponentCCM, "leader migration configuration"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Validate([]byte(c.data), c.component)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Validate = %v, want an error containing %q", err, c.want)
			}
		})
	}
	if _, err := Render("kubelet"); err == nil {
		t.Error("Render accepted an unknown component")
	}
}
