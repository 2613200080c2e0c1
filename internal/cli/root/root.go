// Package root builds the awsccmctl root command: global flags, viper
// configuration (flags > AWSCCMCTL_* environment > a config file decoded
// strictly first, config.go > defaults) and the subcommands. Execute runs
// it as the binary does and keeps -o json's contract for every command: one
// JSON document on stdout whatever the exit code (output.go).
package root

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"golang.org/x/term"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/cli/installcmd"
	"github.com/awsccmctl/awsccmctl/internal/cli/migratecmd"
	"github.com/awsccmctl/awsccmctl/internal/cli/preflightcmd"
	"github.com/awsccmctl/awsccmctl/internal/cli/versioncmd"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
)

// EnvPrefix prefixes every environment variable awsccmctl reads.
const EnvPrefix = "AWSCCMCTL"

// Output formats.
const (
	OutputText = "text"
	OutputJSON = "json"
)

// Streams are where commands write: results to Out, progress and logs to
// Err; In answers prompts (nil: none, so commands that ask need --approve).
// InvokedAs is the binary's os.Args[0], for Execute: run as PluginBinary,
// help names the CLI `kubectl awsccm` (plugin.go); empty is awsccmctl.
type Streams struct {
	In        io.Reader
	Out, Err  io.Writer
	InvokedAs string
}

// NewCommand returns the root command. Execute runs it with -o json's
// contract kept for every command; a command run from NewCommand directly
// writes as each command does.
func NewCommand(streams Streams) *cobra.Command { return newCommand(streams, nil) }

// newCommand returns the root command; gate, when set, is streams.Out,
// which learns the -o value once the configuration is read.
func newCommand(streams Streams, gate *jsonStdout) *cobra.Command {
	v := viper.New()
	var configFile string
	// running is the command being run, for -o refusals that name it.
	var running *cobra.Command
	cmd := &cobra.Command{
		Use:           "awsccmctl",
		Short:         "Move Kubernetes clusters on AWS to the external cloud controller manager, and run it",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			quietClientGo()
			if configFile != "" {
				if err := checkConfigFile(configFile, cmd); err != nil {
					return err
				}
			}
			if err := loadConfig(v, configFile, cmd.Flags()); err != nil {
				return err
			}
			running = cmd
			if err := gate.decide(cmd, v.GetString("output")); err != nil {
				return err
			}
			if err := checkOutput(cmd, v.GetString("output")); err != nil {
				return err
			}
			return checkKubeconfig(cmd)
		},
	}
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.Err)
	cmd.PersistentFlags().StringVar(&configFile, "config", "", "configuration file: one YAML document whose keys are the command's long flag names, exactly (an unknown key is an error)")
	cmd.PersistentFlags().StringP("output", "o", OutputText, "output format: text or json (preflight also junit; some commands write text only)")
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return exitcode.UsageError(err) })

	// output returns the -o value if it is one of allowed.
	output := func(allowed ...string) (string, error) {
		o := v.GetString("output")
		if !slices.Contains(allowed, o) {
			name := "this command"
			if running != nil {
				name = running.CommandPath()
			}
			return "", exitcode.UsageError(fmt.Errorf("--output %q: %s writes %s", o, name, orList(allowed)))
		}
		return o, nil
	}
	cmd.AddCommand(versioncmd.NewCommand(streams.Out, func() (bool, error) {
		o, err := output(OutputText, OutputJSON)
		return o == OutputJSON, err
	}))
	cmd.AddCommand(preflightcmd.NewCommand(preflightcmd.Streams{Out: streams.Out, Err: streams.Err}, func() (string, error) {
		return output(OutputText, OutputJSON, preflight.FormatJUnit)
	}))
	cmd.AddCommand(migratecmd.NewCommand(migratecmd.Streams{In: streams.In, Out: streams.Out, Err: streams.Err,
		Output:     func() (string, error) { return output(OutputText, OutputJSON) },
		IsTerminal: func() bool { return isTerminal(streams.In) },
	}))
	cmd.AddCommand(installcmd.NewCommand(installcmd.Streams{Out: streams.Out, Err: streams.Err, Output: func() (string, error) {
		return output(OutputText, OutputJSON)
	}}))
	// cobra adds help and completion when it executes; add them now so
	// that strictArgs and the completions see the whole tree.
	cmd.InitDefaultHelpCmd()
	cmd.InitDefaultCompletionCmd()
	strictArgs(cmd)
	registerCompletions(cmd)
	return cmd
}

// loadConfig binds every flag to viper so a value comes from, in order, the
// flag, AWSCCMCTL_<FLAG_NAME>, the config file, then the flag's default;
// then it writes the winning value back into unset flags so commands read
// plain flag values.
func loadConfig(v *viper.Viper, file string, flags *pflag.FlagSet) error {
	v.SetEnvPrefix(EnvPrefix)
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()
	if file != "" {
		v.SetConfigFile(file)
		if err := v.ReadInConfig(); err != nil {
			return exitcode.UsageError(fmt.Errorf("read config file %s: %w", file, err))
		}
	}
	if err := v.BindPFlags(flags); err != nil {
		return err
	}
	var errs []string
	flags.VisitAll(func(f *pflag.Flag) {
		if f.Changed || !v.IsSet(f.Name) {
			return
		}
		if err := flags.Set(f.Name, v.GetString(f.Name)); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", f.Name, err))
		}
	})
	if len(errs) > 0 {
		return exitcode.UsageError(fmt.Errorf("configuration: %s", strings.Join(errs, "; ")))
	}
	return nil
}

// isTerminal reports whether r is a terminal.
func isTerminal(r io.Reader) bool {
	f, ok := r.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}
