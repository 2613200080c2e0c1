package cloudconfig

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Render writes c as a cloud-config file that Parse reads back to an equal
// Config. Keys appear in the order of the Global and ServiceOverride fields,
// unset values (empty, false, 0) are left out, ServiceOverride sections are
// sorted by name, and values are quoted only when gcfg needs it. It fails
// only for values no cloud-config file can hold (carriage returns, NUL,
// invalid UTF-8, a newline in a section name).
func Render(c *Config) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("[Global]\n")
	if err := renderFields(&b, reflect.ValueOf(c.Global)); err != nil {
		return nil, fmt.Errorf("render [Global]: %w", err)
	}
	names := make([]string, 0, len(c.ServiceOverride))
	for name := range c.ServiceOverride {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		header, err := renderOverrideHeader(name)
		if err != nil {
			return nil, err
		}
		b.WriteString("\n" + header + "\n")
		o := c.ServiceOverride[name]
		if o == nil {
			o = &ServiceOverride{}
		}
		if err := renderFields(&b, reflect.ValueOf(*o)); err != nil {
			return nil, fmt.Errorf("render %s: %w", overrideHeader(name), err)
		}
	}
	return b.Bytes(), nil
}

func renderFields(b *bytes.Buffer, v reflect.Value) error {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		key, f := t.Field(i).Name, v.Field(i)
		var values []string
		switch f.Kind() {
		case reflect.String:
			if s := f.String(); s != "" {
				values = []string{s}
			}
		case reflect.Bool:
			if f.Bool() {
				values = []string{"true"}
			}
		case reflect.Int:
			if n := f.Int(); n != 0 {
				values = []string{strconv.FormatInt(n, 10)}
			}
		case reflect.Slice:
			values = f.Interface().([]string)
		default:
			return fmt.Errorf("%s: unsupported type %s", key, f.Type())
		}
		for _, s := range values {
			q, err := quoteValue(s)
			if err != nil {
				return fmt.Errorf("%s: %w", key, err)
			}
			fmt.Fprintf(b, "%s = %s\n", key, q)
		}
	}
	return nil
}

// quoteValue returns s as gcfg reads it back: bare when that is unambiguous,
// else in double quotes with \\, \", \n and \t escaped.
func quoteValue(s string) (string, error) {
	if err := representable(s); err != nil {
		return "", err
	}
	if s != "" && !strings.ContainsAny(s, "\";#\\\n\t") && s[0] != ' ' && s[len(s)-1] != ' ' {
		return s, nil
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`)
	return `"` + r.Replace(s) + `"`, nil
}

// renderOverrideHeader writes [ServiceOverride "<name>"]. In a section name
// gcfg only understands the escapes \\ and \", and no newline.
func renderOverrideHeader(name string) (string, error) {
	if name == "" {
		return "[ServiceOverride]", nil
	}
	// Unlike values, section names keep carriage returns as written.
	if !utf8.ValidString(name) || strings.ContainsAny(name, "\n\x00") {
		return "", fmt.Errorf("render ServiceOverride section name %q: a section name must be valid UTF-8 without newline or NUL", name)
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `[ServiceOverride "` + r.Replace(name) + `"]`, nil
}

func representable(s string) error {
	switch {
	case !utf8.ValidString(s):
		return fmt.Errorf("value is not valid UTF-8")
	case strings.ContainsAny(s, "\r\x00"):
		return fmt.Errorf("value contains a carriage return or NUL, which a cloud-config file cannot hold")
	}
	return nil
}
