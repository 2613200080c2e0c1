package nodephase

import (
	"fmt"
	"strings"

	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
)

// This file edits one variable of a systemd environment file (kubeadm's
// kubeadm-flags.env, kops's /etc/sysconfig/kubelet, /etc/default/kubelet):
// only the words of its value change; its quotes and every other line stay.

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
	var value *span
	for _, l := range nodefiles.ScanEnvFile(text) {
		if l.Assignment && l.Name == name {
			value = &span{l.ValueStart, l.ValueEnd}
		}
	}
	if value == nil {
		return envVar{}, fmt.Errorf("no %s= line", name)
	}
	raw := text[value.start:value.end]
	inner := *value
	if raw != "" && (raw[0] == '"' || raw[0] == '\'') {
		if len(raw) < 2 || raw[len(raw)-1] != raw[0] {
			return envVar{}, fmt.Errorf("%s: the value is not one quoted string; edit it by hand", name)
		}
		inner = span{value.start + 1, value.end - 1}
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
