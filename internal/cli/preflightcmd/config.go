package preflightcmd

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
)

// flagConfigFile is the global --config flag (internal/cli/root), whose
// keys are long flag names.
const flagConfigFile = "config"

// checkConfigKeys decodes the --config file strictly for preflight: the root
// command's viper reads it loosely, so a misspelt key ("ignore-check",
// "Region") would silently do nothing. Every key must be a flag of this
// command, with a scalar or a list of scalars as its value; all problems are
// reported at once, as a usage error. An empty file name is no file.
func checkConfigKeys(file string, flags *pflag.FlagSet) error {
	if file == "" {
		return nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return exitcode.UsageError(fmt.Errorf("--%s: %w", flagConfigFile, err))
	}
	var values map[string]any
	if err := yaml.UnmarshalStrict(data, &values); err != nil {
		return exitcode.UsageError(fmt.Errorf("--%s %s: not a YAML mapping of flag names to values: %w", flagConfigFile, file, err))
	}
	var problems []string
	for _, key := range slices.Sorted(maps.Keys(values)) {
		f := flags.Lookup(key)
		switch {
		case f == nil || key == flagConfigFile:
			problems = append(problems, fmt.Sprintf("unknown key %q: keys are the long names of preflight's flags (awsccmctl preflight --help)", key))
		case !scalarOrList(values[key]):
			problems = append(problems, fmt.Sprintf("%s: want a value or a list of values, not %T", key, values[key]))
		}
	}
	if len(problems) > 0 {
		return exitcode.UsageError(fmt.Errorf("--%s %s:\n  - %s", flagConfigFile, file, strings.Join(problems, "\n  - ")))
	}
	return nil
}

// scalarOrList reports whether v is what a flag can take: a string, number
// or bool, or a list of those.
func scalarOrList(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		return false
	case []any:
		return !slices.ContainsFunc(v, func(e any) bool {
			switch e.(type) {
			case map[string]any, []any:
				return true
			}
			return false
		})
	}
	return true
}
