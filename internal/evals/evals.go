// Package evals is the declarations side of evaluations: the dataset
// format (JSONL, one case a line, events/schemas/eval-case.schema.json),
// its validation with line numbers, and the deterministic checks a case
// run is scored with. It imports core only: the durable runner starts
// and scores the case runs (internal/durable/evals.go).
package evals

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"strings"

	"github.com/baton-agents/baton/core"
)

// Limits of a dataset.
const (
	MaxCases     = 1000
	MaxCaseBytes = 64 << 10
	maxIDLen     = 128
)

// Case is one case of a dataset: what the run is asked (Input, or the
// first message of a recorded run, FromRun) and what it must do.
type Case struct {
	ID      string `json:"id"`
	Input   *Input `json:"input,omitempty"`
	FromRun string `json:"from_run,omitempty"`
	Expect  Expect `json:"expect"`
}

// Input is a case's own input: its messages, the client tools the run
// may call and their scripted answers, and a model override.
type Input struct {
	Messages      []any            `json:"messages"`
	Tools         []map[string]any `json:"tools,omitempty"`
	ClientResults []ClientAnswer   `json:"client_results,omitempty"`
	Model         *core.ModelSpec  `json:"model,omitempty"`
}

// ClientAnswer is a scripted answer to a client tool's call: to every
// call of Tool whose parameters match Parameters (when set), in order.
type ClientAnswer struct {
	Tool       string         `json:"tool"`
	Parameters map[string]any `json:"parameters,omitempty"`
	Result     any            `json:"result,omitempty"`
	Error      string         `json:"error,omitempty"`
}

// Expect is what a case's run must do.
type Expect struct {
	Final      *FinalCheck `json:"final,omitempty"`
	Trajectory *Trajectory `json:"trajectory,omitempty"`
	MaxTurns   int         `json:"max_turns,omitempty"`
	MaxTokens  int64       `json:"max_tokens,omitempty"`
	MaxCostUSD float64     `json:"max_cost_usd,omitempty"`
	// Rubric is what a judge agent scores the run on (when the eval has
	// a judge).
	Rubric string `json:"rubric,omitempty"`
}

// FinalCheck checks the run's final answer: equal to Equals, holding
// each of Contains, matching Regex, and, parsed as JSON, valid against
// Schema.
type FinalCheck struct {
	Equals   *string        `json:"equals,omitempty"`
	Contains []string       `json:"contains,omitempty"`
	Regex    string         `json:"regex,omitempty"`
	Schema   map[string]any `json:"schema,omitempty"`
}

// Trajectory checks the run's tool calls: the Tools in order, all of the
// run's calls (exact) or some of them (subset), each with at least the
// parameters given.
type Trajectory struct {
	Mode  string     `json:"mode,omitempty"`
	Tools []ToolStep `json:"tools"`
}

// ToolStep is one call of a trajectory.
type ToolStep struct {
	Name       string         `json:"name"`
	Parameters map[string]any `json:"parameters,omitempty"`
}

// Trajectory modes.
const (
	TrajectoryExact  = "exact"
	TrajectorySubset = "subset"
)

// LineError is a dataset line that is not a valid case.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// Parse reads a JSONL dataset: one case a line (blank lines skipped). The
// first line that is not a valid case is a *LineError.
func Parse(r io.Reader) ([]Case, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxCaseBytes+1)
	var out []Case
	seen := map[string]int{}
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var c Case
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		dec.UseNumber()
		if err := dec.Decode(&c); err != nil {
			return nil, &LineError{Line: n, Err: fmt.Errorf("not a case: %v", err)}
		}
		if dec.More() {
			return nil, &LineError{Line: n, Err: fmt.Errorf("one JSON object a line")}
		}
		if err := c.Validate(); err != nil {
			return nil, &LineError{Line: n, Err: err}
		}
		if first, dup := seen[c.ID]; dup {
			return nil, &LineError{Line: n, Err: fmt.Errorf("id %q is the id of line %d too", c.ID, first)}
		}
		seen[c.ID] = n
		if out = append(out, c); len(out) > MaxCases {
			return nil, &LineError{Line: n, Err: fmt.Errorf("a dataset has at most %d cases", MaxCases)}
		}
	}
	if err := sc.Err(); err != nil {
		if err == bufio.ErrTooLong {
			return nil, &LineError{Line: len(seen) + 1, Err: fmt.Errorf("a line is at most %d bytes", MaxCaseBytes)}
		}
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the dataset has no case")
	}
	return out, nil
}

// Check validates a dataset given as cases (the API's JSON): the first
// case that is not valid is a *LineError whose Line is its position
// (from 1).
func Check(cases []Case) error {
	if len(cases) == 0 {
		return fmt.Errorf("the dataset has no case")
	}
	if len(cases) > MaxCases {
		return fmt.Errorf("a dataset has at most %d cases, this one %d", MaxCases, len(cases))
	}
	seen := map[string]int{}
	for i, c := range cases {
		if err := c.Validate(); err != nil {
			return &LineError{Line: i + 1, Err: err}
		}
		if first, dup := seen[c.ID]; dup {
			return &LineError{Line: i + 1, Err: fmt.Errorf("id %q is the id of case %d too", c.ID, first)}
		}
		seen[c.ID] = i + 1
	}
	return nil
}

// Validate checks a case on its own.
func (c Case) Validate() error {
	switch {
	case strings.TrimSpace(c.ID) == "" || len(c.ID) > maxIDLen:
		return fmt.Errorf("id: 1 to %d characters", maxIDLen)
	case (c.Input == nil) == (c.FromRun == ""):
		return fmt.Errorf("a case has an input or a from_run, one of them")
	}
	if in := c.Input; in != nil {
		if len(in.Messages) == 0 {
			return fmt.Errorf("input.messages: at least one message")
		}
		if _, err := core.NormalizeMessages(in.Messages); err != nil {
			return fmt.Errorf("input.%v", err)
		}
		for i, t := range in.Tools {
			if name, _ := t["name"].(string); !strings.HasPrefix(name, "client/") {
				return fmt.Errorf("input.tools[%d]: a case declares client/* tools only", i)
			}
			if _, rej := core.NormalizeRequestTools([]any{t}); len(rej) > 0 {
				return fmt.Errorf("input.tools[%d]: %s", i, rej[0].Reason)
			}
		}
		for i, a := range in.ClientResults {
			if !strings.HasPrefix(a.Tool, "client/") {
				return fmt.Errorf("input.client_results[%d].tool: a client/* tool", i)
			}
			if a.Error != "" && a.Result != nil {
				return fmt.Errorf("input.client_results[%d]: a result or an error, not both", i)
			}
		}
	}
	e := c.Expect
	if f := e.Final; f != nil {
		if f.Regex != "" {
			if _, err := regexp.Compile(f.Regex); err != nil {
				return fmt.Errorf("expect.final.regex: %v", err)
			}
		}
		if f.Schema != nil {
			if _, err := core.ValidateValue(f.Schema, nil); err != nil {
				return fmt.Errorf("expect.final.schema: %v", err)
			}
		}
	}
	if t := e.Trajectory; t != nil {
		if t.Mode != "" && t.Mode != TrajectoryExact && t.Mode != TrajectorySubset {
			return fmt.Errorf("expect.trajectory.mode: exact or subset, got %q", t.Mode)
		}
		for i, s := range t.Tools {
			if s.Name == "" {
				return fmt.Errorf("expect.trajectory.tools[%d].name is required", i)
			}
		}
	}
	if e.MaxTurns < 0 || e.MaxTokens < 0 || e.MaxCostUSD < 0 || math.IsNaN(e.MaxCostUSD) {
		return fmt.Errorf("expect: ceilings are not negative")
	}
	return nil
}
