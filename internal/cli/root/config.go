package root

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/yamldocs"
)

// flagConfig is the global --config flag.
const flagConfig = "config"

// checkConfigFile decodes the --config file strictly before viper reads it.
// viper alone is loose: it matches keys in any case (a later "Region" beat
// "region"), reads only the first YAML document, and ignores keys that are
// no flag, so a typo silently did nothing. The file must be one YAML
// document, a mapping whose keys are exactly long names of cmd's flags
// (case-sensitive, each once), each with a scalar or a list of scalars. Every
// problem is reported at once, as a usage error naming the key.
func checkConfigFile(file string, cmd *cobra.Command) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return exitcode.UsageError(fmt.Errorf("--%s: %w", flagConfig, err))
	}
	doc, err := configDocument(data)
	if err != nil {
		return exitcode.UsageError(fmt.Errorf("--%s %s: %w", flagConfig, file, err))
	}
	var values map[string]any
	// UnmarshalStrict refuses a key given twice.
	if err := yaml.UnmarshalStrict(doc, &values); err != nil {
		return exitcode.UsageError(fmt.Errorf("--%s %s: not a YAML mapping of flag names to values: %w", flagConfig, file, err))
	}
	flags := cmd.Flags()
	var problems []string
	for _, key := range slices.Sorted(maps.Keys(values)) {
		f := flags.Lookup(key)
		switch {
		case f == nil || key == flagConfig || key == "help":
			problems = append(problems, fmt.Sprintf("unknown key %q%s: keys are the long names of the flags of %s (%s --help)",
				key, caseHint(key, flags), cmd.CommandPath(), cmd.CommandPath()))
		case !scalarOrList(values[key]):
			problems = append(problems, fmt.Sprintf("%s: want a value or a list of values, not %T", key, values[key]))
		}
	}
	if len(problems) > 0 {
		return exitcode.UsageError(fmt.Errorf("--%s %s:\n  - %s", flagConfig, file, strings.Join(problems, "\n  - ")))
	}
	return nil
}

// configDocument returns the file's only YAML document; documents of only
// comments and blank lines do not count.
func configDocument(data []byte) ([]byte, error) {
	doc, err := yamldocs.One(data)
	if multi := (*yamldocs.MultipleError)(nil); errors.As(err, &multi) {
		return nil, fmt.Errorf("the file holds %d YAML documents; it must be one: document 2 and later would be ignored, merge them into one or remove the --- lines", multi.Documents)
	}
	return doc, err
}

// caseHint names the flag key differs from only in case.
func caseHint(key string, flags *pflag.FlagSet) string {
	hint := ""
	flags.VisitAll(func(f *pflag.Flag) {
		if f.Name != key && strings.EqualFold(f.Name, key) {
			hint = fmt.Sprintf(" (keys are case-sensitive: %s)", f.Name)
		}
	})
	return hint
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
