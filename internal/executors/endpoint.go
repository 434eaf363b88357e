package executors

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/baton-agents/baton/core"
)

// Endpoint is a remote JSON endpoint: an operator's URL (HTTP, requests
// signed with package toolsig) or a Lambda function (Lambda). Both run
// server tools (Execute) and the agents file's http and lambda hooks
// (Call, package hooks).
type Endpoint interface {
	core.ToolExecutor
	// Call sends body, one JSON document, and returns the endpoint's
	// answer: one JSON value, or nil when the answer is empty. key, when
	// set, is the request's idempotency key, sent as the Idempotency-Key
	// header over HTTP (a Lambda event has no headers: callers put it in
	// body). The call is bounded by the endpoint's timeout. An answer
	// that is a failure (a non-2xx status, a function error, an oversized
	// or non-JSON answer) is a *Failure; a transport error, an API error
	// or a timeout is any other error. Errors never contain the signing
	// secret.
	Call(ctx context.Context, body []byte, key string) (json.RawMessage, error)
}

var (
	_ Endpoint = (*HTTP)(nil)
	_ Endpoint = (*Lambda)(nil)
)

// Failure is an endpoint's failed answer. A tool gets it as a failed
// result with error_type Type (http_status, function_error,
// response_too_large or invalid_response).
type Failure struct {
	Type     string
	Message  string
	Metadata map[string]any
}

func (f *Failure) Error() string { return f.Message }

// execute runs a tool call on an endpoint: the call's payload (withKey
// adds idempotency_key), sent with the call's idempotency key; a Failure
// is a failed result envelope and a JSON answer is the tool's output.
func execute(ctx context.Context, e Endpoint, call core.ToolCall, withKey bool) (any, error) {
	body, err := encodePayload(call, withKey)
	if err != nil {
		return nil, err
	}
	raw, err := e.Call(ctx, body, call.Key())
	var f *Failure
	if errors.As(err, &f) {
		return failed(f.Type, f.Message, f.Metadata), nil
	}
	if err != nil {
		return nil, err
	}
	return decodeOutput(raw)
}
