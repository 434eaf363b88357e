package core

import (
	"encoding/json"
	"math"
	"strconv"
)

// NormalizeToolOutput turns what an executor returned into a normalized
// result: an error becomes a failed executor_exception result; an object
// with a boolean "success" is read as a result envelope; anything else is
// a successful result. The declaration's runtime metadata is merged under
// the executor's, and metadata.citations is normalized.
func NormalizeToolOutput(decl ToolDeclaration, output any, execErr error) ToolResult {
	res := ToolResult{ToolName: decl.Name}
	if execErr != nil {
		res.Success = false
		res.Error = "Tool execution failed: " + execErr.Error()
		res.ErrorType = ErrTypeExecutorException
		res.Runtime = mergeRuntime(decl.Runtime, nil)
		return res
	}
	g, err := ToJSONValue(output)
	if err != nil {
		res.Success = false
		res.Error = "Tool execution failed: the executor returned a value that is not JSON: " + err.Error()
		res.ErrorType = ErrTypeExecutorException
		res.Runtime = mergeRuntime(decl.Runtime, nil)
		return res
	}
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

// accumulateUsage sums numeric usage fields into total and takes
// non-numeric ones from the latest turn. total_tokens is derived from
// prompt and completion tokens when the turn does not report it.
func accumulateUsage(total, turn map[string]any) {
	if len(turn) == 0 {
		return
	}
	g, err := ToJSONValue(turn)
	if err != nil {
		return
	}
	tm, _ := g.(map[string]any)
	if _, has := tm["total_tokens"]; !has {
		p, pok := tm["prompt_tokens"]
		c, cok := tm["completion_tokens"]
		if pok || cok {
			tm["total_tokens"] = addNumbers(p, c)
		}
	}
	for k, v := range tm {
		if isNumber(v) {
			total[k] = addNumbers(total[k], v)
		} else {
			total[k] = v
		}
	}
}

func isNumber(v any) bool {
	switch v.(type) {
	case json.Number, float64, int, int64:
		return true
	}
	return false
}

func numberOf(v any) float64 {
	switch t := v.(type) {
	case json.Number:
		f, _ := t.Float64()
		return f
	case float64:
		return t
	case int:
		return float64(t)
	case int64:
		return float64(t)
	}
	return 0
}

// addNumbers adds two JSON numbers, staying integral when both are.
func addNumbers(a, b any) json.Number {
	ai, aInt := intOf(a)
	bi, bInt := intOf(b)
	if aInt && bInt {
		return json.Number(strconv.FormatInt(ai+bi, 10))
	}
	f := numberOf(a) + numberOf(b)
	if math.IsInf(f, 0) || math.IsNaN(f) {
		f = 0
	}
	return json.Number(strconv.FormatFloat(f, 'f', -1, 64))
}

func intOf(v any) (int64, bool) {
	switch t := v.(type) {
	case nil:
		return 0, true
	case json.Number:
		i, err := t.Int64()
		return i, err == nil
	case int:
		return int64(t), true
	case int64:
		return t, true
	case float64:
		if t == math.Trunc(t) && math.Abs(t) < 1<<53 {
			return int64(t), true
		}
	}
	return 0, false
}
