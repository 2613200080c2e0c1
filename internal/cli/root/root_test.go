package root

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
)

func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := NewCommand(Streams{Out: &out, Err: &errOut})
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestVersionText(t *testing.T) {
	out, err := run(t, "version")
	if err != nil || !strings.HasPrefix(out, "awsccmctl ") {
		t.Fatalf("version = %q, %v", out, err)
	}
}

// TestOutputPrecedence: flag > AWSCCMCTL_* environment > config file > default.
func TestOutputPrecedence(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "awsccmctl.yaml")
	if err := os.WriteFile(cfg, []byte("output: json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	isJSON := func(s string) bool { return json.Valid([]byte(s)) }

	if out, err := run(t, "--config", cfg, "version"); err != nil || !isJSON(out) {
		t.Fatalf("config file output=json: %q, %v", out, err)
	}
	t.Setenv("AWSCCMCTL_OUTPUT", "text")
	if out, err := run(t, "--config", cfg, "version"); err != nil || isJSON(out) {
		t.Fatalf("env must beat the config file: %q, %v", out, err)
	}
	if out, err := run(t, "--config", cfg, "-o", "json", "version"); err != nil || !isJSON(out) {
		t.Fatalf("flag must beat the env: %q, %v", out, err)
	}
}

func TestUsageErrorsExitTwo(t *testing.T) {
	for name, args := range map[string][]string{
		"unknown flag":   {"--nope", "version"},
		"bad output":     {"-o", "yaml", "version"},
		"missing config": {"--config", "/nonexistent/awsccmctl.yaml", "version"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := run(t, args...)
			if code := exitcode.Of(err); code != exitcode.Usage {
				t.Fatalf("exit code = %d (%v), want %d", code, err, exitcode.Usage)
			}
		})
	}
}

func TestCompletion(t *testing.T) {
	out, err := run(t, "completion", "bash")
	if err != nil || !strings.Contains(out, "awsccmctl") {
		t.Fatalf("completion bash: %v", err)
	}
}
