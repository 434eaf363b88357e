package executors

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"

	"github.com/baton-agents/baton/core"
)

// Error types of the failed tool results the remote executors return (in
// addition to core's executor_exception for transport errors and
// timeouts).
const (
	// ErrTypeHTTPStatus: the tool endpoint answered with a non-2xx status.
	ErrTypeHTTPStatus = "http_status"
	// ErrTypeResponseTooLarge: the response exceeded the size cap.
	ErrTypeResponseTooLarge = "response_too_large"
	// ErrTypeInvalidResponse: a successful response that is not JSON.
	ErrTypeInvalidResponse = "invalid_response"
	// ErrTypeFunctionError: the Lambda function raised an error.
	ErrTypeFunctionError = "function_error"
)

// Defaults of the remote executors.
const (
	DefaultTimeout          = 30 * time.Second
	DefaultMaxResponseBytes = 1 << 20 // 1 MiB
	excerptBytes            = 300
)

// payload is the JSON body of an http tool request and the Lambda event of
// a lambda tool: kind-free and stable, field names are the contract.
type payload struct {
	ToolName   string         `json:"tool_name"`
	ToolCallID string         `json:"tool_call_id"`
	RunID      string         `json:"run_id"`
	SessionID  string         `json:"session_id"`
	Parameters map[string]any `json:"parameters"`
	// IdempotencyKey is sent in the Lambda event only: an HTTP tool gets
	// it as the Idempotency-Key header.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

// encodePayload renders the request body; withKey adds idempotency_key.
func encodePayload(call core.ToolCall, withKey bool) ([]byte, error) {
	p := payload{ToolName: call.ToolName, ToolCallID: call.ToolCallID, RunID: call.RunID, SessionID: call.SessionID, Parameters: call.Parameters}
	if p.Parameters == nil {
		p.Parameters = map[string]any{}
	}
	if withKey {
		p.IdempotencyKey = call.Key()
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return nil, fmt.Errorf("encode the parameters of %s: %w", call.ToolName, err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// validJSON reports whether b is empty (no result) or one JSON value.
func validJSON(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) == 0 || json.Valid(b)
}

// decodeOutput reads a successful response body: empty is no result; a
// JSON value is the output (numbers kept exact); anything else is an
// error.
func decodeOutput(b []byte) (any, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("unexpected data after the JSON value")
	}
	return v, nil
}

// failed is a failed result envelope, read by core.NormalizeToolOutput
// with its error_type intact.
func failed(errType, msg string, metadata map[string]any) map[string]any {
	out := map[string]any{"success": false, "error": msg, "error_type": errType}
	if len(metadata) > 0 {
		out["metadata"] = metadata
	}
	return out
}

// excerpt is a short single-line printable prefix of a response body, with
// any occurrence of secret masked.
func excerpt(b []byte, secret []byte) string {
	truncated := len(b) > excerptBytes
	if truncated {
		b = b[:excerptBytes]
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	if len(secret) > 0 {
		s = strings.ReplaceAll(s, string(secret), core.RedactedValue)
	}
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	if truncated {
		s += "…"
	}
	return s
}

// limits bounds one call of an executor: how long it may run and how many
// response bytes it may return.
type limits struct {
	timeout time.Duration
	max     int64
}

// newLimits returns the limits, with DefaultTimeout and
// DefaultMaxResponseBytes standing in for zero or negative values.
func newLimits(timeout time.Duration, max int64) limits {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if max <= 0 {
		max = DefaultMaxResponseBytes
	}
	return limits{timeout: timeout, max: max}
}

// timedOut reports whether callCtx ended because its own timeout fired,
// rather than because the parent context was cancelled.
func timedOut(parent, callCtx context.Context) bool {
	return parent.Err() == nil && errors.Is(callCtx.Err(), context.DeadlineExceeded)
}
