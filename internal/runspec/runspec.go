// Package runspec is the one validation path of a run's start request:
// the POST /v1/runs body, decoded strictly and checked against the agents
// and the enabled model providers, and the error codes every driving
// adapter answers with. The HTTP API (internal/httpapi) and the intake
// queue's handler (internal/intake) both use it, so a body the API refuses
// is refused by the intake with the same code and message.
package runspec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/evals"
)

// Error is a refusal with an HTTP status and a machine code: the API's
// {"error":{"code","message","details"}} and the intake's dead-letter
// attributes.
type Error struct {
	Status  int
	Code    string
	Message string
	Details map[string]any
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Errorf returns an Error.
func Errorf(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

var sessionIDRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._:\-]{1,128}$`) })

// Limits on a start request.
const (
	maxMessages      = 1000
	maxTools         = 128
	maxMetadataBytes = 16 << 10
)

// Body is the body of POST /v1/runs.
type Body struct {
	Agent             string            `json:"agent"`
	SessionID         *string           `json:"session_id"`
	Messages          []any             `json:"messages"`
	Tools             []map[string]any  `json:"tools"`
	Model             *core.ModelSpec   `json:"model"`
	MaxTurns          *WholeNumber      `json:"max_turns"`
	Budgets           core.BudgetLimits `json:"budgets"`
	ContextBudget     *WholeNumber      `json:"context_budget"`
	ParallelToolCalls *bool             `json:"parallel_tool_calls"`
	StreamTokens      *bool             `json:"stream_tokens"`
	Metadata          map[string]any    `json:"metadata"`
	// Callback is checked by the agent (agents.Agent.RunConfig).
	Callback *agents.CallbackRequest `json:"callback"`
	// Alias names the alias the run's agent version comes from (default:
	// "default"); AgentVersion names the version itself, when the agent
	// allows agent_version.
	Alias        string `json:"alias"`
	AgentVersion string `json:"agent_version"`
	// MemorySubject names the end user whose memories the run uses, when
	// the agent allows memory_subject (a subject other than the caller's
	// own needs the memories:subject scope).
	MemorySubject *string `json:"memory_subject"`
}

// Overrides are the start-run settings a protocol edge lets its caller
// forward beside its own request (AG-UI's forwardedProps.baton, an A2A
// message's metadata.baton): the same fields as in a Body.
type Overrides struct {
	Model             *core.ModelSpec   `json:"model"`
	MaxTurns          *WholeNumber      `json:"max_turns"`
	Budgets           core.BudgetLimits `json:"budgets"`
	ContextBudget     *WholeNumber      `json:"context_budget"`
	ParallelToolCalls *bool             `json:"parallel_tool_calls"`
}

// Apply sets b's overridable fields to o's.
func (o Overrides) Apply(b *Body) {
	b.Model, b.MaxTurns, b.Budgets, b.ContextBudget, b.ParallelToolCalls = o.Model, o.MaxTurns, o.Budgets, o.ContextBudget, o.ParallelToolCalls
}

// WholeNumber is a JSON integer as JSON Schema's "integer" has it: any
// number with a zero fractional part (2, 2.0, 2e0), within int64.
type WholeNumber int

// UnmarshalJSON reads a whole number.
func (n *WholeNumber) UnmarshalJSON(b []byte) error {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		kind := map[byte]string{'"': "string", '{': "object", '[': "array", 't': "bool", 'f': "bool"}[b[0]]
		if kind == "" {
			kind = "number " + string(b)
		}
		return &json.UnmarshalTypeError{Value: kind, Type: reflect.TypeFor[int]()}
	}
	*n = WholeNumber(f)
	return nil
}

// Int is the number as an *int (nil stays nil).
func (n *WholeNumber) Int() *int {
	if n == nil {
		return nil
	}
	v := int(*n)
	return &v
}

// Validator checks start bodies against a deployment's agents and
// enabled model providers.
type Validator struct {
	Agents    *agents.Registry
	Providers []string
}

// Request validates b and returns the start request it describes, without
// a principal (the caller sets it). Its errors are *Error.
func (v Validator) Request(b Body) (durable.StartRequest, error) {
	if strings.TrimSpace(b.Agent) == "" {
		return durable.StartRequest{}, Errorf(400, "invalid_request", "agent is required")
	}
	req := durable.StartRequest{Agent: b.Agent, Metadata: b.Metadata, Alias: b.Alias, Version: b.AgentVersion}
	if err := VersionChoice(b.Alias, b.AgentVersion); err != nil {
		return req, err
	}
	if b.SessionID != nil {
		if !sessionIDRe().MatchString(*b.SessionID) {
			return req, Errorf(400, "invalid_request", "session_id must be 1 to 128 letters, digits or . _ : -")
		}
		req.SessionID = *b.SessionID
	}
	if len(b.Messages) == 0 {
		return req, Errorf(400, "invalid_request", "messages must hold at least one message")
	}
	if len(b.Messages) > maxMessages {
		return req, Errorf(400, "invalid_request", "at most %d messages per request", maxMessages)
	}
	msgs, err := core.NormalizeMessages(b.Messages)
	if err != nil {
		return req, Errorf(400, "invalid_message", "%v", err)
	}
	req.Messages = msgs
	if len(b.Tools) > maxTools {
		return req, Errorf(400, "invalid_tool_declaration", "at most %d tools per request", maxTools)
	}
	for i, t := range b.Tools {
		name, _ := t["name"].(string)
		if !strings.HasPrefix(name, "client/") {
			return req, &Error{Status: 400, Code: "invalid_tool_declaration",
				Message: fmt.Sprintf("tools[%d]: callers may declare only client/* tools, got %q", i, name), Details: map[string]any{"index": i}}
		}
		if _, rej := core.NormalizeRequestTools([]any{t}); len(rej) > 0 {
			return req, &Error{Status: 400, Code: "invalid_tool_declaration",
				Message: fmt.Sprintf("tools[%d] (%s): %s", i, name, rej[0].Reason), Details: map[string]any{"index": i}}
		}
		req.RequestTools = append(req.RequestTools, t)
	}
	if req.Overrides, err = v.overrides(Overrides{Model: b.Model, MaxTurns: b.MaxTurns, Budgets: b.Budgets, ContextBudget: b.ContextBudget,
		ParallelToolCalls: b.ParallelToolCalls}); err != nil {
		return req, err
	}
	req.Overrides.StreamTokens = b.StreamTokens
	req.Overrides.Callback = b.Callback
	if b.MemorySubject != nil {
		if err := core.ValidateSubject(*b.MemorySubject); err != nil {
			return req, Errorf(400, "invalid_request", "memory_subject: %s", strings.TrimPrefix(err.Error(), core.ErrInvalidInput.Error()+": "))
		}
		req.Overrides.MemorySubject = b.MemorySubject
	}
	if b.Metadata != nil {
		if mb, _ := json.Marshal(b.Metadata); len(mb) > maxMetadataBytes {
			return req, Errorf(400, "invalid_request", "metadata is larger than %d bytes", maxMetadataBytes)
		}
	}
	if agent, ok := v.Agents.Get(b.Agent); ok && b.Model == nil && !v.providerEnabled(agent.Spec.Model.Provider) {
		return req, Errorf(400, "provider_not_enabled", "agent %s uses model provider %q, which is not enabled in this deployment", b.Agent, agent.Spec.Model.Provider)
	}
	return req, nil
}

// overrides checks the overridable settings of a request (whether its
// agent allows each is the agent's to say, agents.Agent.RunConfig).
func (v Validator) overrides(o Overrides) (agents.Overrides, error) {
	var out agents.Overrides
	if o.Model != nil {
		if !v.providerEnabled(o.Model.Provider) {
			return out, Errorf(400, "provider_not_enabled", "model provider %q is not enabled in this deployment (enabled: %s)", o.Model.Provider, strings.Join(v.Providers, ", "))
		}
		out.Model = o.Model
	}
	if o.MaxTurns != nil && (*o.MaxTurns < 1 || *o.MaxTurns > 1000) {
		return out, Errorf(400, "invalid_request", "max_turns must be between 1 and 1000")
	}
	if o.ContextBudget != nil && *o.ContextBudget < 0 {
		return out, Errorf(400, "invalid_request", "context_budget must not be negative")
	}
	out.MaxTurns, out.Budgets, out.ContextBudget, out.ParallelToolCalls = o.MaxTurns.Int(), o.Budgets, o.ContextBudget.Int(), o.ParallelToolCalls
	return out, nil
}

// VersionChoice checks a request's choice of version: an alias, or a
// version id, or neither.
func VersionChoice(alias, version string) error {
	if alias != "" && !core.ValidAliasName(alias) {
		return Errorf(400, "invalid_request", "alias %q: an alias name is 1 to 63 lowercase letters, digits, _ or -", alias)
	}
	if version != "" && !core.ValidAgentVersionID(version) {
		return Errorf(400, "invalid_request", "agent_version %q: a version id is av_ and 16 hex digits (baton agents versions lists them)", version)
	}
	if alias != "" && version != "" {
		return Errorf(400, "invalid_request", "name an alias or an agent_version, not both")
	}
	return nil
}

// ForkBody is the body of POST /v1/runs/{run_id}/fork: the message to
// fork at, its replacement, the version, the tool mode and the settings
// the agent lets a caller override.
type ForkBody struct {
	Seq          *WholeNumber `json:"seq"`
	Content      *string      `json:"content"`
	Tools        string       `json:"tools"`
	Alias        string       `json:"alias"`
	AgentVersion string       `json:"agent_version"`
	Overrides
}

// maxContentBytes bounds a fork's replacement message.
const maxContentBytes = 256 << 10

// Fork validates a fork of run runID and returns the request it
// describes, without a caller (the caller sets it). Its errors are
// *Error.
func (v Validator) Fork(runID string, b ForkBody) (durable.ForkRequest, error) {
	req := durable.ForkRequest{Source: runID, Tools: b.Tools, Alias: b.Alias, Version: b.AgentVersion, Content: b.Content}
	if b.Seq == nil {
		return req, Errorf(400, "invalid_request", "seq is required: the sequence number of the user or assistant message to fork at")
	}
	req.Seq = int64(*b.Seq)
	if req.Tools != "" && !core.ValidForkTools(req.Tools) {
		return req, Errorf(400, "invalid_request", "tools must be reuse, replay or live, got %q", req.Tools)
	}
	if err := VersionChoice(b.Alias, b.AgentVersion); err != nil {
		return req, err
	}
	if b.Content != nil && len(*b.Content) > maxContentBytes {
		return req, Errorf(400, "invalid_request", "content is larger than %d bytes", maxContentBytes)
	}
	var err error
	req.Overrides, err = v.overrides(b.Overrides)
	return req, err
}

func (v Validator) providerEnabled(p string) bool {
	for _, q := range v.Providers {
		if q == p {
			return true
		}
	}
	return false
}

var idemKeyRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[\x21-\x7e]{1,255}$`) })

// ValidIdempotencyKey reports whether key is 1 to 255 visible ASCII
// characters.
func ValidIdempotencyKey(key string) bool { return idemKeyRe().MatchString(key) }

// Classify maps an error of the runner, of core or of this package to
// its Error; anything unknown is a 500 "internal".
func Classify(err error) *Error {
	var ae *Error
	if errors.As(err, &ae) {
		return ae
	}
	var oe *agents.OverrideError
	var ce *agents.CallbackError
	var tma *core.TooManyActiveError
	var fpe *durable.ForkPointError
	var le *evals.LineError
	switch {
	case errors.As(err, &ce):
		return &Error{Status: 400, Code: ce.Code, Message: ce.Message, Details: map[string]any{"field": "callback"}}
	case errors.As(err, &oe):
		return &Error{Status: 400, Code: "override_not_allowed", Message: err.Error(), Details: map[string]any{"field": oe.Field}}
	case errors.As(err, &le) && errors.Is(err, durable.ErrInvalidDataset):
		return &Error{Status: 400, Code: "invalid_dataset", Message: err.Error(), Details: map[string]any{"line": le.Line}}
	case errors.Is(err, durable.ErrInvalidDataset):
		return Errorf(400, "invalid_dataset", "%v", err)
	case errors.As(err, &fpe):
		return &Error{Status: 400, Code: "invalid_fork_point", Message: err.Error(), Details: map[string]any{"valid": fpe.Valid, "more": fpe.More}}
	case errors.Is(err, durable.ErrMemorySubject):
		return &Error{Status: http.StatusForbidden, Code: "forbidden", Message: err.Error(), Details: map[string]any{"field": agents.OverrideMemorySubject}}
	case errors.Is(err, durable.ErrUnknownAgent):
		return Errorf(400, "unknown_agent", "%v", err)
	case errors.Is(err, durable.ErrUnknownVersion):
		return Errorf(400, "unknown_agent_version", "%v", err)
	case errors.Is(err, durable.ErrVersionNotAllowed):
		return &Error{Status: 400, Code: "override_not_allowed", Message: err.Error(), Details: map[string]any{"field": agents.OverrideAgentVersion}}
	case errors.As(err, &tma):
		return &Error{Status: http.StatusTooManyRequests, Code: "too_many_active_runs",
			Message: fmt.Sprintf("tenant %s has %d unfinished runs, its limit; start this run when one of them finishes", tma.Tenant, tma.Limit),
			Details: map[string]any{"max_active_runs": tma.Limit}}
	case errors.Is(err, durable.ErrSessionBusy):
		return Errorf(409, "transcript_lock_contention", "the session has an unfinished run; wait for it to finish or cancel it")
	case errors.Is(err, durable.ErrAlreadyDecided):
		return Errorf(409, "already_decided", "%v", err)
	case errors.Is(err, durable.ErrFinished):
		return Errorf(409, "run_finished", "%v", err)
	case errors.Is(err, durable.ErrContention), errors.Is(err, core.ErrConflict), errors.Is(err, core.ErrLockHeld):
		return Errorf(409, "conflict", "the run is busy; retry the request")
	case errors.Is(err, core.ErrInvalidInput):
		return Errorf(400, "invalid_request", "%s", strings.TrimPrefix(err.Error(), core.ErrInvalidInput.Error()+": "))
	case errors.Is(err, core.ErrNotFound):
		return Errorf(404, "not_found", "no such run or pending item")
	}
	return Errorf(500, "internal", "internal error")
}

// Decode decodes exactly one JSON object into v, refusing unknown fields;
// an empty body is refused unless optional.
func Decode(body []byte, v any, optional bool) error {
	if len(bytes.TrimSpace(body)) == 0 {
		if optional {
			return nil
		}
		return Errorf(http.StatusBadRequest, "invalid_body", "a JSON object body is required")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		msg := err.Error()
		if strings.HasPrefix(msg, "json: unknown field ") {
			field := strings.Trim(strings.TrimPrefix(msg, "json: unknown field "), `"`)
			return &Error{Status: 400, Code: "unknown_field", Message: fmt.Sprintf("unknown field %q", field), Details: map[string]any{"field": field}}
		}
		return Errorf(http.StatusBadRequest, "invalid_body", "the body is not valid JSON for this endpoint: %s", strings.TrimPrefix(msg, "json: "))
	}
	if _, err := dec.Token(); err != io.EOF {
		return Errorf(http.StatusBadRequest, "invalid_body", "unexpected data after the JSON object")
	}
	return nil
}
