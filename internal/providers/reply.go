package providers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/baton-agents/baton/core"
)

// Normalized stop reasons. Providers map their own to these; a reason with
// no equivalent is passed through as the provider spelled it.
const (
	StopEndTurn         = "end_turn"
	StopToolUse         = "tool_use"
	StopMaxTokens       = "max_tokens"
	StopSequence        = "stop_sequence"
	StopContentFiltered = "content_filtered"
)

// Usage keys of ModelReply.Usage. prompt_tokens counts every input token
// (cached ones included), completion_tokens every output token (reasoning
// included), total_tokens their sum. The extras are reported only when
// non-zero, and only by providers that count them separately: Anthropic,
// for one, includes extended-thinking tokens in its output count and
// reports no reasoning figure.
const (
	UsagePrompt     = "prompt_tokens"
	UsageCompletion = "completion_tokens"
	UsageTotal      = "total_tokens"
	UsageCacheRead  = "cache_read_tokens"
	UsageCacheWrite = "cache_write_tokens"
	UsageReasoning  = "reasoning_tokens"
)

// Usage builds ModelReply.Usage. total is used when it is at least
// prompt+completion; otherwise the sum is. Zero extras are left out.
func Usage(prompt, completion, total int64, extras map[string]int64) map[string]any {
	u := map[string]any{UsagePrompt: prompt, UsageCompletion: completion}
	if sum := prompt + completion; total < sum {
		total = sum
	}
	u[UsageTotal] = total
	for k, v := range extras {
		if v != 0 {
			u[k] = v
		}
	}
	return u
}

// Metadata builds ModelReply.RequestMetadata: provider, model, and the
// request id and response id when known.
func Metadata(provider, model, requestID, responseID string, attempts int) map[string]any {
	m := map[string]any{"provider": provider, "model": model}
	if requestID != "" {
		m["request_id"] = requestID
	}
	if responseID != "" {
		m["response_id"] = responseID
	}
	if attempts > 1 {
		m["attempts"] = int64(attempts)
	}
	return m
}

// DecodeObject decodes a JSON object, keeping numbers exact
// (json.Number). Empty input is an empty object; anything but an object
// is an error.
func DecodeObject(data []byte) (map[string]any, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("unexpected data after the JSON value")
	}
	if v == nil {
		return map[string]any{}, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("a JSON object is required, got %s", jsonKind(v))
	}
	return m, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "a value"
}

// ArgumentsError reports tool-call arguments that are not a JSON object.
// It is retryable (a new sample usually repairs them) unless the reply was
// cut off at the token limit, which a retry would repeat. The raw
// arguments are not included: they are model output, and errors reach
// logs.
func ArgumentsError(provider, callID, toolName, stopReason string, err error) error {
	e := fmt.Errorf("%s: the model sent tool call %s (%s) with arguments that are not a JSON object: %v", provider, callID, toolName, err)
	if stopReason == StopMaxTokens {
		return fmt.Errorf("%w; the reply was cut off at the token limit: raise the model's max_tokens option", e)
	}
	return core.Retryable(e)
}

// Marshal encodes v as JSON without HTML escaping and without the
// trailing newline.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// ReplyError is a malformed 2xx response: not retried, because the same
// request would get the same answer.
func ReplyError(provider, requestID, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if requestID != "" {
		msg += " (request id " + requestID + ")"
	}
	return errors.New(provider + ": " + strings.TrimSpace(msg))
}
