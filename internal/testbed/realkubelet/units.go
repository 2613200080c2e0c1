package realkubelet

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// The node's systemd, as far as starting kubelet.service goes: this file
// builds the kubelet's command line from the unit files under the node's
// root at each start, as systemd does, so that an edit of any of them (by
// the tool under test) is what the next start runs. It is written apart
// from the product's reader (internal/nodefiles): a test of that reader's
// edits must not agree with it by sharing its code.

// unitDirs are systemd's unit folders, highest precedence first.
var unitDirs = []string{"/etc/systemd/system", "/run/systemd/system", "/lib/systemd/system", "/usr/lib/systemd/system"}

// unitName is the kubelet's unit.
const unitName = "kubelet.service"

// varRef matches ${NAME} inside a word of ExecStart=.
var varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// commandLine returns the command line systemd would start kubelet.service
// with, from the unit files under root: the unit (the first found in
// unitDirs), then its drop-ins (<dir>/kubelet.service.d/*.conf of every
// unit folder, in name order; a name in a folder of higher precedence
// hides the same name below it). Environment= and EnvironmentFile= (read
// now; "-" marks an optional one) set variables, those from files winning;
// the last ExecStart= runs, an empty one clearing the earlier ones. A word
// "$NAME" becomes the variable's words split at white space (none when it
// is empty), and ${NAME} inside a word its value.
func commandLine(root string) ([]string, error) {
	files, err := unitFiles(root)
	if err != nil {
		return nil, err
	}
	var (
		env      = map[string]string{}
		envFiles []string
		exec     string
	)
	for _, f := range files {
		entries, err := serviceEntries(filepath.Join(root, f))
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			switch e.key {
			case "Environment":
				words, err := splitQuoted(e.value)
				if err != nil {
					return nil, fmt.Errorf("%s: Environment=%s: %w", f, e.value, err)
				}
				for _, w := range words {
					k, v, ok := strings.Cut(w, "=")
					if !ok {
						return nil, fmt.Errorf("%s: Environment=%s: %q is not NAME=VALUE", f, e.value, w)
					}
					env[k] = v
				}
			case "EnvironmentFile":
				if e.value == "" {
					envFiles = nil
				} else {
					envFiles = append(envFiles, e.value)
				}
			case "ExecStart":
				exec = e.value
			}
		}
	}
	for _, f := range envFiles {
		optional := strings.HasPrefix(f, "-")
		f = strings.TrimPrefix(f, "-")
		vars, err := readEnvFile(filepath.Join(root, f))
		if errors.Is(err, os.ErrNotExist) && optional {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("EnvironmentFile=%s: %w", f, err)
		}
		for k, v := range vars {
			env[k] = v
		}
	}
	if exec == "" {
		return nil, fmt.Errorf("%s under %s has no ExecStart=", unitName, root)
	}
	words, err := splitQuoted(strings.TrimLeft(exec, "-@+!:"))
	if err != nil {
		return nil, fmt.Errorf("ExecStart=%s: %w", exec, err)
	}
	var argv []string
	for _, w := range words {
		if name, ok := strings.CutPrefix(w, "$"); ok && !strings.HasPrefix(name, "{") {
			argv = append(argv, strings.Fields(env[name])...)
			continue
		}
		argv = append(argv, varRef.ReplaceAllStringFunc(w, func(ref string) string { return env[ref[2:len(ref)-1]] }))
	}
	return argv, nil
}

// unitFiles returns the node paths of the unit and its drop-ins, in the
// order systemd applies them.
func unitFiles(root string) ([]string, error) {
	var unit string
	dropIns := map[string]string{} // base name -> node path
	for _, d := range unitDirs {
		if _, err := os.Stat(filepath.Join(root, d, unitName)); err == nil && unit == "" {
			unit = d + "/" + unitName
		}
		matches, err := filepath.Glob(filepath.Join(root, d, unitName+".d", "*.conf"))
		if err != nil {
			return nil, err
		}
		for _, m := range matches {
			if _, seen := dropIns[filepath.Base(m)]; !seen {
				dropIns[filepath.Base(m)] = d + "/" + unitName + ".d/" + filepath.Base(m)
			}
		}
	}
	if unit == "" {
		return nil, fmt.Errorf("no %s under %s (looked in %s)", unitName, root, strings.Join(unitDirs, ", "))
	}
	names := make([]string, 0, len(dropIns))
	for n := range dropIns {
		names = append(names, n)
	}
	slices.Sort(names)
	files := []string{unit}
	for _, n := range names {
		files = append(files, dropIns[n])
	}
	return files, nil
}

type unitEntry struct{ key, value string }

// serviceEntries returns the [Service] section's assignments in order.
func serviceEntries(path string) ([]unitEntry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []unitEntry
	section := ""
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[':
			section = strings.Trim(line, "[]")
		case section == "Service":
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				return nil, fmt.Errorf("%s: %q is not KEY=VALUE", path, line)
			}
			out = append(out, unitEntry{strings.TrimSpace(k), strings.TrimSpace(v)})
		}
	}
	return out, nil
}

// readEnvFile reads NAME=VALUE lines; a value in double or single quotes
// loses them (and, in double quotes, the backslash before " \ $ `).
func readEnvFile(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	vars := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("%s: %q is not NAME=VALUE", path, line)
		}
		v = strings.TrimSpace(v)
		if v != "" && (v[0] == '"' || v[0] == '\'') {
			words, err := splitQuoted(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", path, k, err)
			}
			if len(words) != 1 {
				return nil, fmt.Errorf("%s: %s: want one quoted value, got %s", path, k, v)
			}
			v = words[0]
		}
		vars[strings.TrimSpace(k)] = v
	}
	return vars, nil
}

// splitQuoted splits s at white space outside quotes and removes the
// quotes; in double quotes a backslash escapes the next character.
func splitQuoted(s string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		in    bool // inside a word
		quote byte
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote == '"' && c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
		case quote != 0:
			cur.WriteByte(c)
		case c == '"' || c == '\'':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote in %q", quote, s)
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}
