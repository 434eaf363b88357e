package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/baton-agents/baton/internal/executors"
	"github.com/baton-agents/baton/internal/toolspec"
)

// DefaultTimeout bounds a hook's call when its timeout is unset.
const DefaultTimeout = 5 * time.Second

// Hook names, the "hook" field of every request.
const (
	NameMediator   = "pre_tool_mediator"
	NameCompletion = "completion_policy"
	NameGuardrail  = "guardrail"
)

// Hook is one configured http or lambda hook.
type Hook struct {
	name string
	ep   executors.Endpoint
}

// New builds the hook ex configures, once, at cold start: its signing
// secret is resolved and its endpoint built by remote. name names the
// hook in errors. ctx bounds the cold-start lookups only.
func New(ctx context.Context, remote *executors.Remote, name string, ex toolspec.Executor) (*Hook, error) {
	if ex.Type != toolspec.TypeHTTP && ex.Type != toolspec.TypeLambda {
		return nil, fmt.Errorf("%s: type must be http or lambda, got %q", name, ex.Type)
	}
	if ex.Timeout == "" {
		ex.Timeout = DefaultTimeout.String()
	}
	ep, err := remote.Endpoint(ctx, name, ex)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &Hook{name: name, ep: ep}, nil
}

// Call sends req as JSON (key, when set, is its idempotency key) and
// decodes the answer, which must be one JSON object with only out's
// fields, into out.
func (h *Hook) Call(ctx context.Context, req any, key string, out any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(req); err != nil {
		return fmt.Errorf("%s hook: encode the request: %w", h.name, err)
	}
	raw, err := h.ep.Call(ctx, bytes.TrimSuffix(buf.Bytes(), []byte("\n")), key)
	if err != nil {
		return fmt.Errorf("%s hook: %w", h.name, err)
	}
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return fmt.Errorf("%s hook: invalid answer: want a JSON object, got %q", h.name, excerpt(t))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("%s hook: invalid answer: %w", h.name, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s hook: invalid answer: unexpected data after the JSON object", h.name)
	}
	return nil
}

// excerpt is the start of an answer, for errors.
func excerpt(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "…"
	}
	return string(b)
}

// idempotencyKey is the key of one hook's decision on one tool call.
func idempotencyKey(runID, toolCallID, hook string) string {
	return runID + ":" + toolCallID + ":" + hook
}
