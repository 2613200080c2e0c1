package root

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
)

// TestConfigFileStrict runs `awsccmctl --config F version` on every
// testdata/config file: valid-* set -o json; invalid-* exit 2 (nothing
// written to stdout) with every line of the sibling .err file in the error.
// viper alone took a key in any case (the last spelling won), read only the
// first YAML document and ignored keys no flag has.
func TestConfigFileStrict(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "config", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			out, _, err := runAll(t, "--config", f, "version")
			if strings.HasPrefix(name, "valid-") {
				if err != nil || !json.Valid([]byte(out)) {
					t.Fatalf("exit %d (%v), stdout %q: want the file's output: json", exitcode.Of(err), err, out)
				}
				return
			}
			want, rerr := os.ReadFile(strings.TrimSuffix(f, ".yaml") + ".err")
			if rerr != nil {
				t.Fatalf("invalid fixture without .err file: %v", rerr)
			}
			if code := exitcode.Of(err); code != exitcode.Usage {
				t.Fatalf("exit %d (%v), want %d; stdout %q", code, err, exitcode.Usage, out)
			}
			for _, line := range strings.Split(strings.TrimSpace(string(want)), "\n") {
				if !strings.Contains(err.Error(), line) {
					t.Errorf("error does not say %q:\n%v", line, err)
				}
			}
		})
	}
}
