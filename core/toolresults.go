package core

import (
	"encoding/json"
	"fmt"
)

// ToolResult is a normalized tool result.
type ToolResult struct {
	Success   bool           `json:"success"`
	ToolName  string         `json:"tool_name"`
	Result    any            `json:"result,omitempty"`
	Error     string         `json:"error,omitempty"`
	ErrorType string         `json:"error_type,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	Runtime   map[string]any `json:"runtime,omitempty"`
}

// jsonObject is the result as the generic JSON object encoding/json
// makes of it (the same keys, omitempty included), so its canonical
// encoding needs no JSON round trip.
func (r ToolResult) jsonObject() map[string]any {
	m := map[string]any{"success": r.Success, "tool_name": r.ToolName}
	if r.Result != nil {
		m["result"] = r.Result
	}
	if r.Error != "" {
		m["error"] = r.Error
	}
	if r.ErrorType != "" {
		m["error_type"] = r.ErrorType
	}
	if len(r.Metadata) > 0 {
		m["metadata"] = r.Metadata
	}
	if len(r.Runtime) > 0 {
		m["runtime"] = r.Runtime
	}
	return m
}

// resultHash is canonicalHash(r.jsonObject(), false), written without
// building the object when its values are generic.
func (r ToolResult) resultHash() string {
	bp := canonicalBufs.Get().(*[]byte)
	defer canonicalBufs.Put(bp)
	b, ok := r.appendCanonical((*bp)[:0])
	*bp = b[:0]
	if !ok {
		h, _ := canonicalHash(r.jsonObject(), false)
		return h
	}
	return SHA256Tagged(b)
}

// appendCanonical appends the canonical encoding of r.jsonObject(): its
// keys in sorted order, each value as appendCanonical writes it. ok is
// false when a value is not generic.
func (r ToolResult) appendCanonical(dst []byte) (out []byte, ok bool) {
	dst = append(dst, '{')
	if r.Error != "" {
		dst = appendJSONString(append(dst, `"error":`...), r.Error)
		dst = append(dst, ',')
	}
	if r.ErrorType != "" {
		dst = appendJSONString(append(dst, `"error_type":`...), r.ErrorType)
		dst = append(dst, ',')
	}
	if len(r.Metadata) > 0 {
		if dst, _, ok = appendCanonical(append(dst, `"metadata":`...), r.Metadata, false); !ok {
			return dst, false
		}
		dst = append(dst, ',')
	}
	if r.Result != nil {
		if dst, _, ok = appendCanonical(append(dst, `"result":`...), r.Result, false); !ok {
			return dst, false
		}
		dst = append(dst, ',')
	}
	if len(r.Runtime) > 0 {
		if dst, _, ok = appendCanonical(append(dst, `"runtime":`...), r.Runtime, false); !ok {
			return dst, false
		}
		dst = append(dst, ',')
	}
	if r.Success {
		dst = append(dst, `"success":true,`...)
	} else {
		dst = append(dst, `"success":false,`...)
	}
	dst = appendJSONString(append(dst, `"tool_name":`...), r.ToolName)
	return append(dst, '}'), true
}

// Tool result error types.
const (
	ErrTypeToolNotFound      = "tool_not_found"
	ErrTypeMissingParameters = "missing_required_parameters"
	ErrTypeInvalidParameters = "invalid_parameters"
	ErrTypeExecutorException = "executor_exception"
	ErrTypeDuplicateToolCall = "duplicate_tool_call"
	ErrTypeTimedOut          = "timed_out"
	ErrTypeInDoubt           = "in_doubt"
	ErrTypeRejected          = "rejected"
	ErrTypeGuardrailDenied   = "guardrail_denied"
	ErrTypeForbidden         = "forbidden"
	ErrTypeCancelled         = "cancelled"
	ErrTypeSkipped           = "skipped"
	ErrTypeClientError       = "client_error"
	ErrTypeMediatorRejected  = "mediator_rejected"
	// ErrTypeTooManyPending: the run already had MaxOpenPending
	// approvals and client-tool requests open; the call was not asked.
	ErrTypeTooManyPending = "too_many_pending"
)

// ToolExecutionResult is the raw, caller-owned record of one mediated
// call (raw parameters included).
type ToolExecutionResult struct {
	ToolName   string         `json:"tool_name"`
	ToolCallID string         `json:"tool_call_id"`
	Parameters map[string]any `json:"parameters"`
	Result     ToolResult     `json:"result"`
	Runtime    map[string]any `json:"runtime,omitempty"`
	TurnCount  int            `json:"turn_count"`
	// ResultRef, when set, says the record was stored without its result
	// body because the call's tool_result message holds the same bytes:
	// "message_text" (the result is the message's text) or "message_json"
	// (the message's text is the result's canonical JSON). Readers restore
	// the body and clear it; it never appears in an envelope.
	ResultRef string `json:"result_ref,omitempty"`
	// ReplayedFrom is set on a forked run's result taken from its
	// source's record (fork.go): the recorded result it repeats.
	ReplayedFrom *ReplayRef `json:"replayed_from,omitempty"`
	// Seq is the sequence number of the call's tool_result message; stores
	// key the record by it.
	Seq int64 `json:"-"`
}

// AuditEvent is the safe replay record of one tool call: hashes and
// status, never raw parameters.
type AuditEvent struct {
	SchemaVersion      int    `json:"schema_version"`
	Type               string `json:"type"`
	TurnCount          int    `json:"turn_count"`
	ToolName           string `json:"tool_name"`
	ToolCallID         string `json:"tool_call_id"`
	ToolSource         string `json:"tool_source"`
	Executor           string `json:"executor"`
	ParametersSHA256   string `json:"parameters_sha256"`
	ParametersRedacted bool   `json:"parameters_redacted"`
	Success            bool   `json:"success"`
	ResultStatus       string `json:"result_status"`
	ResultSHA256       string `json:"result_sha256"`
	ErrorType          string `json:"error_type,omitempty"`
	// Approval is the decision on the call's approval action and who
	// made it; absent for a call that needed no approval or whose action
	// expired or was cancelled undecided.
	Approval *ApprovalRecord `json:"approval,omitempty"`
	// Seq is the sequence number of the call's tool_result message.
	Seq int64 `json:"-"`
}

// ApprovalRecord is the decision on a call's approval action: accept or
// reject, and the resolver that decided, when the decision named one.
type ApprovalRecord struct {
	Decision string    `json:"decision"`
	Resolver *Resolver `json:"resolver,omitempty"`
}

// NormalizeToolOutput turns what an executor returned into a normalized
// result: an error becomes a failed executor_exception result; an object
// with a boolean "success" is read as a result envelope; anything else is
// a successful result. The declaration's runtime metadata is merged under
// the executor's, and metadata.citations is normalized.
func NormalizeToolOutput(decl ToolDeclaration, output any, execErr error) ToolResult {
	if execErr != nil {
		return failedResult(decl.Name, decl, ErrTypeExecutorException, "Tool execution failed: "+execErr.Error())
	}
	g, err := ToJSONValue(output)
	if err != nil {
		return failedResult(decl.Name, decl, ErrTypeExecutorException, "Tool execution failed: the executor returned a value that is not JSON: "+err.Error())
	}
	res := ToolResult{ToolName: decl.Name}
	var execRuntime map[string]any
	if m, ok := g.(map[string]any); ok {
		if succ, ok := m["success"].(bool); ok {
			res.Success = succ
			res.Result = m["result"]
			if e, ok := m["error"].(string); ok {
				res.Error = e
			} else if m["error"] != nil {
				b, _ := CanonicalJSON(m["error"])
				res.Error = string(b)
			}
			if et, ok := m["error_type"].(string); ok {
				res.ErrorType = et
			}
			if md, ok := m["metadata"].(map[string]any); ok {
				res.Metadata = md
			}
			if rt, ok := m["runtime"].(map[string]any); ok {
				execRuntime = rt
			}
			if !res.Success {
				if res.Error == "" {
					res.Error = "The tool reported a failure"
				}
				if res.ErrorType == "" {
					res.ErrorType = "tool_error"
				}
			} else {
				res.Error, res.ErrorType = "", ""
			}
		} else {
			res.Success = true
			res.Result = g
		}
	} else {
		res.Success = true
		res.Result = g
	}
	res.Runtime = mergeRuntime(decl.Runtime, execRuntime)
	if res.Metadata != nil {
		if c, present := res.Metadata["citations"]; present {
			res.Metadata["citations"] = NormalizeCitations(c)
		}
	}
	return res
}

// failedResult is a failed result of errType with msg for a call of the
// tool named name, carrying decl's runtime metadata.
func failedResult(name string, decl ToolDeclaration, errType, msg string) ToolResult {
	return ToolResult{Success: false, ToolName: name, Error: msg, ErrorType: errType, Runtime: mergeRuntime(decl.Runtime, nil)}
}

// mergeRuntime overlays result-scoped runtime metadata on the
// declaration's.
func mergeRuntime(decl, exec map[string]any) map[string]any {
	if len(decl) == 0 && len(exec) == 0 {
		return nil
	}
	out := map[string]any{}
	for k, v := range decl {
		out[k] = v
	}
	for k, v := range SanitizeRuntimeMetadata(exec) {
		out[k] = v
	}
	return out
}

var citationStringKeys = []string{"source", "source_id", "item_id", "fragment_id", "source_title", "source_url", "excerpt", "restriction_reason"}

var accessStatuses = map[string]bool{"allowed": true, "denied": true, "partial": true, "source_restricted": true}

// NormalizeCitations normalizes metadata.citations to a list of small
// citation objects: known string fields must be strings, score a number,
// access_status one of allowed, denied, partial, source_restricted; other
// caller-owned fields are kept and sensitive keys are redacted. Entries
// that are not objects are dropped.
func NormalizeCitations(v any) []any {
	var items []any
	switch t := v.(type) {
	case []any:
		items = t
	case map[string]any:
		items = []any{t}
	default:
		return []any{}
	}
	out := make([]any, 0, len(items))
	for _, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			continue
		}
		c := map[string]any{}
		for k, val := range m {
			if IsSensitiveKey(k) {
				continue
			}
			c[k] = val
		}
		for _, k := range citationStringKeys {
			if val, present := c[k]; present {
				if _, ok := val.(string); !ok {
					delete(c, k)
				}
			}
		}
		if sc, present := c["score"]; present {
			if _, ok := sc.(json.Number); !ok {
				if _, ok := sc.(float64); !ok {
					delete(c, "score")
				}
			}
		}
		if as, present := c["access_status"]; present {
			if s, ok := as.(string); !ok || !accessStatuses[s] {
				delete(c, "access_status")
			}
		}
		if len(c) > 0 {
			out = append(out, c)
		}
	}
	return out
}

func resultText(res ToolResult) string {
	if !res.Success {
		return res.Error
	}
	switch v := res.Result.(type) {
	case nil:
		return ""
	case string:
		return v
	}
	b, err := CanonicalJSON(res.Result)
	if err != nil {
		return fmt.Sprint(res.Result)
	}
	return string(b)
}

// eventResult is the result a tool_result event carries: the result
// message's text after the redaction audit events get (a failed result's
// text is its error), cut to at most limit bytes, and whether it was cut.
// A result truncated for storage (stored) is reported by its size only:
// its preview is raw JSON text, which redaction cannot see into.
func eventResult(res ToolResult, stored bool, limit int) (string, bool) {
	if stored {
		m, _ := res.Result.(map[string]any)
		b, _ := CanonicalJSON(map[string]any{"truncated": true, "original_bytes": m["original_bytes"]})
		return string(b), true
	}
	if res.Success && res.Result != nil {
		res.Result, _ = Redact(res.Result)
	}
	text := resultText(res)
	if len(text) <= limit {
		return text, false
	}
	return truncateUTF8(text, limit), true
}

func auditEvent(turn int, decl ToolDeclaration, c *CallState, res ToolResult) AuditEvent {
	canon, redacted := c.canonical()
	paramsHash := sha256TaggedString(canon)
	resultHash := res.resultHash()
	source, executor := decl.Source, decl.Executor
	if decl.Name == "" {
		source, executor = "unknown", "none"
	}
	status := "success"
	if !res.Success {
		status = "error"
	}
	return AuditEvent{
		SchemaVersion: 1, Type: "tool_call", TurnCount: turn, ToolName: c.Name, ToolCallID: c.ID,
		ToolSource: source, Executor: executor, ParametersSHA256: paramsHash, ParametersRedacted: redacted,
		Success: res.Success, ResultStatus: status, ResultSHA256: resultHash, ErrorType: res.ErrorType,
		Approval: c.Approval,
	}
}
