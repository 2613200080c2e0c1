package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"sort"
	"strings"
)

// Errors that name what is wrong with the input; each is wrapped with the
// file's path and the details.
var (
	// ErrRead means the results file could not be read.
	ErrRead = errors.New("cannot read the results")
	// ErrMalformed means the results file is not the JSON the bench writes.
	ErrMalformed = errors.New("malformed results JSON")
	// ErrInvalidRun means a run of the chosen scenario has a missing or
	// impossible value.
	ErrInvalidRun = errors.New("invalid run")
	// ErrNoRuns means the file holds no run of the chosen scenario.
	ErrNoRuns = errors.New("no runs for the scenario")
	// ErrNoFigures means the scenario's runs hold none of the figures drawn.
	ErrNoFigures = errors.New("none of the charted figures")
)

// Results is the bench harness's results file. Fields this program does not
// use are ignored.
type Results struct {
	// Runs are the measurements, one per scenario, binary, flag set and
	// Node count (repeats are allowed).
	Runs []Run `json:"runs"`
}

// Run is one measured run of a scenario.
type Run struct {
	// Scenario is the bench scenario, such as "join".
	Scenario string `json:"scenario"`
	// Flags names the flag set: "defaults" or "rendered".
	Flags string `json:"flags"`
	// Binary names the CCM binary: "this" or "upstream".
	Binary string `json:"binary"`
	// Nodes is the Node count the run was measured at.
	Nodes float64 `json:"nodes"`
	// Figures are the measured figures by snake_case key. Values stay raw so
	// that an unknown key of any type is ignored rather than failing.
	Figures map[string]json.RawMessage `json:"figures"`
}

// measuredRun is a validated run: its known figures decoded, missing ones
// absent.
type measuredRun struct {
	key     seriesKey
	nodes   float64
	figures map[string]float64
}

// readResults reads and decodes the results file at path.
func readResults(path string) (*Results, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if pe, ok := errors.AsType[*fs.PathError](err); ok {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s: %w: %w", path, ErrRead, err)
	}
	return decodeResults(path, data)
}

// decodeResults decodes a results file's content; path only names it in
// errors.
func decodeResults(path string, data []byte) (*Results, error) {
	var r Results
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w: %s", path, ErrMalformed, describeJSONError(data, err))
	}
	return &r, nil
}

// describeJSONError says where in data a decoding error is, as a line and
// column. The decoder's offsets count the bytes read up to and including the
// offending one.
func describeJSONError(data []byte, err error) string {
	if se, ok := errors.AsType[*json.SyntaxError](err); ok {
		line, col := lineColumn(data, se.Offset-1)
		return fmt.Sprintf("line %d, column %d: %v", line, col, se)
	}
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		line, col := lineColumn(data, te.Offset-1)
		field := te.Field
		if field == "" {
			field = "the top level"
		}
		return fmt.Sprintf("line %d, column %d: %s is JSON %s, want %s", line, col, field, te.Value, jsonKind(te.Type.Kind().String()))
	}
	return err.Error()
}

// jsonKind names a Go kind the way the results schema does.
func jsonKind(kind string) string {
	switch kind {
	case "struct", "map":
		return "an object"
	case "slice":
		return "an array"
	case "float64", "int":
		return "a number"
	}
	return "a " + kind
}

// lineColumn turns a byte offset into a 1-based line and column.
func lineColumn(data []byte, offset int64) (line, col int) {
	offset = min(max(offset, 0), int64(len(data)))
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

// runsFor validates and returns the runs of scenario with their known
// figures decoded. It fails if a run is invalid, if there is no run, or if
// no run holds a figure that is drawn.
func runsFor(path string, r *Results, scenario string, figs []figure) ([]measuredRun, error) {
	var runs []measuredRun
	for i, run := range r.Runs {
		if run.Scenario != scenario {
			continue
		}
		m, err := validateRun(run, figs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w: runs[%d] (binary %q, flags %q, nodes %v): %w", path, ErrInvalidRun, i, run.Binary, run.Flags, run.Nodes, err)
		}
		runs = append(runs, m)
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("%s: %w %q (%s)", path, ErrNoRuns, scenario, scenariosIn(r))
	}
	for _, m := range runs {
		if len(m.figures) > 0 {
			return runs, nil
		}
	}
	keys := make([]string, len(figs))
	for i, f := range figs {
		keys[i] = f.key
	}
	return nil, fmt.Errorf("%s: %w: no run of scenario %q (%d in the file) has any of %s", path, ErrNoFigures, scenario, len(runs), strings.Join(keys, ", "))
}

// scenariosIn describes which scenarios a file has runs for.
func scenariosIn(r *Results) string {
	if len(r.Runs) == 0 {
		return "the file has no runs"
	}
	seen := map[string]bool{}
	var names []string
	for _, run := range r.Runs {
		if !seen[run.Scenario] {
			seen[run.Scenario] = true
			names = append(names, fmt.Sprintf("%q", run.Scenario))
		}
	}
	sort.Strings(names)
	return "the file has runs for " + strings.Join(names, ", ")
}

// validateRun checks one run and decodes its known figures. A figure that is
// absent or null is missing; one that is not a non-negative number is an
// error.
func validateRun(run Run, figs []figure) (measuredRun, error) {
	var problems []string
	if run.Binary == "" {
		problems = append(problems, "binary is missing")
	}
	if run.Flags == "" {
		problems = append(problems, "flags is missing")
	}
	if run.Nodes < 1 || run.Nodes != math.Trunc(run.Nodes) {
		problems = append(problems, fmt.Sprintf("nodes must be a whole number >= 1, got %v", run.Nodes))
	}
	m := measuredRun{
		key:     seriesKey{Binary: run.Binary, Flags: run.Flags},
		nodes:   run.Nodes,
		figures: map[string]float64{},
	}
	for _, f := range figs {
		raw, ok := run.Figures[f.key]
		if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			continue
		}
		var v float64
		if err := json.Unmarshal(raw, &v); err != nil {
			problems = append(problems, fmt.Sprintf("figure %s must be a number, got %s", f.key, raw))
			continue
		}
		if v < 0 {
			problems = append(problems, fmt.Sprintf("figure %s must not be negative, got %v", f.key, v))
			continue
		}
		m.figures[f.key] = v
	}
	if len(problems) > 0 {
		return measuredRun{}, errors.New(strings.Join(problems, "; "))
	}
	return m, nil
}
