package durable

import (
	"fmt"

	"github.com/baton-agents/baton/core"
)

// Result references: a stored tool result whose body is the tool_result
// message's content is written once, in the message.
const (
	refText = "message_text"
	refJSON = "message_json"
)

// dedupeResults returns the output with tool results that repeat their
// tool_result message's content stored as references (see
// core.ToolExecutionResult.ResultRef), so a large result is written once.
func dedupeResults(out core.Output) core.Output {
	if len(out.ToolResults) == 0 {
		return out
	}
	content := make(map[int64]string, len(out.Messages))
	for _, m := range out.Messages {
		if m.Role == core.RoleToolResult {
			content[m.Seq] = m.Content
		}
	}
	results := make([]core.ToolExecutionResult, len(out.ToolResults))
	for i, r := range out.ToolResults {
		results[i] = r
		c, ok := content[r.Seq]
		if !ok || !r.Result.Success || r.Result.Result == nil {
			continue
		}
		if s, isText := r.Result.Result.(string); isText {
			if s == c {
				results[i].Result.Result, results[i].ResultRef = nil, refText
			}
			continue
		}
		if b, err := core.CanonicalJSON(r.Result.Result); err == nil && string(b) == c {
			results[i].Result.Result, results[i].ResultRef = nil, refJSON
		}
	}
	out.ToolResults = results
	return out
}

// restoreResults puts the bodies of referenced tool results back from the
// transcript.
func restoreResults(results []core.ToolExecutionResult, transcript []core.Message) ([]core.ToolExecutionResult, error) {
	var bySeq map[int64]string
	for i := range results {
		r := &results[i]
		if r.ResultRef == "" {
			continue
		}
		if bySeq == nil {
			bySeq = make(map[int64]string, len(transcript))
			for _, m := range transcript {
				if m.Role == core.RoleToolResult {
					bySeq[m.Seq] = m.Content
				}
			}
		}
		c, ok := bySeq[r.Seq]
		if !ok {
			return nil, fmt.Errorf("tool result %s refers to message %d, which is missing", r.ToolCallID, r.Seq)
		}
		switch r.ResultRef {
		case refText:
			r.Result.Result = c
		case refJSON:
			var v any
			if err := core.DecodeJSON([]byte(c), &v); err != nil {
				return nil, fmt.Errorf("tool result %s: message %d is not JSON: %w", r.ToolCallID, r.Seq, err)
			}
			r.Result.Result = v
		default:
			return nil, fmt.Errorf("tool result %s: unknown result reference %q", r.ToolCallID, r.ResultRef)
		}
		r.ResultRef = ""
	}
	return results, nil
}
