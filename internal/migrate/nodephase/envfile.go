package nodephase

import (
	"fmt"
	"strings"
)

// This file edits one variable of a systemd environment file (kubeadm's
// kubeadm-flags.env, kops's /etc/sysconfig/kubelet, /etc/default/kubelet):
// only the words of its value change; its quotes and every other line stay.

// envAssignment is one VAR=value of an environment file.
type envAssignment struct {
	name string
	// value is the raw value: from the first non-blank after "=" to the end
	// of the logical line, trailing blanks excluded.
	value span
}

// scanEnvFile finds the assignments as systemd reads them: "#" and ";" start
// comment lines, quotes may span lines and a backslash escapes the next
// character (a newline too).
func scanEnvFile(s string) []envAssignment {
	var out []envAssignment
	for i := 0; i < len(s); {
		switch s[i] {
		case '\n', '\r', ' ', '\t':
			i++
			continue
		case '#', ';':
			for i < len(s) && s[i] != '\n' {
				i++
			}
			continue
		}
		eol := strings.IndexByte(s[i:], '\n')
		if eol < 0 {
			eol = len(s) - i
		}
		key, _, ok := strings.Cut(s[i:i+eol], "=")
		if !ok {
			i += eol
			continue
		}
		i += len(key) + 1
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		start, end := i, i
		for i < len(s) && s[i] != '\n' {
			switch c := s[i]; c {
			case '"', '\'':
				j := i + 1
				for j < len(s) && s[j] != c {
					if c == '"' && s[j] == '\\' {
						j++
					}
					j++
				}
				i = min(j+1, len(s))
				end = i
			case '\\':
				i = min(i+2, len(s))
				end = i
			case ' ', '\t', '\r':
				i++
			default:
				i++
				end = i
			}
		}
		out = append(out, envAssignment{name: strings.TrimSpace(key), value: span{start, end}})
	}
	return out
}

// envVar is the value of a variable in an environment file, split into
// blank-separated words the tool can edit in place.
type envVar struct {
	words []string
	spans []span
	// emptyAt is where words go when the value has none.
	emptyAt int
}

// readEnvVar returns the last assignment of name (the one systemd uses).
// Values with quotes or backslashes inside are refused: their words cannot
// be edited without changing what they mean.
func readEnvVar(text, name string) (envVar, error) {
	var a *envAssignment
	all := scanEnvFile(text)
	for i := range all {
		if all[i].name == name {
			a = &all[i]
		}
	}
	if a == nil {
		return envVar{}, fmt.Errorf("no %s= line", name)
	}
	raw := text[a.value.start:a.value.end]
	inner := a.value
	if raw != "" && (raw[0] == '"' || raw[0] == '\'') {
		if len(raw) < 2 || raw[len(raw)-1] != raw[0] {
			return envVar{}, fmt.Errorf("%s: the value is not one quoted string; edit it by hand", name)
		}
		inner = span{a.value.start + 1, a.value.end - 1}
	}
	body := text[inner.start:inner.end]
	if strings.ContainsAny(body, "\"'\\\n\r") {
		return envVar{}, fmt.Errorf("%s: the value has quotes, backslashes or line breaks inside; edit it by hand", name)
	}
	v := envVar{emptyAt: inner.start}
	for i := 0; i < len(body); {
		if body[i] == ' ' || body[i] == '\t' {
			i++
			continue
		}
		j := i
		for j < len(body) && body[j] != ' ' && body[j] != '\t' {
			j++
		}
		v.words = append(v.words, body[i:j])
		v.spans = append(v.spans, span{inner.start + i, inner.start + j})
		i = j
	}
	return v, nil
}

// editEnvVar applies ops to the flags in variable name of an environment
// file and returns the new text.
func editEnvVar(text, name string, ops []flagOp) (string, error) {
	v, err := readEnvVar(text, name)
	if err != nil {
		return "", err
	}
	edits, _, err := editArgv(v.words, 0, ops)
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	te, err := wordEdits(v.spans, edits, v.emptyAt)
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return applyTextEdits(text, te)
}
