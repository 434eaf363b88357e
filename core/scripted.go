package core

import (
	"context"
	"encoding/json"
	"fmt"
)

// ProviderScripted is the provider name of the scripted model.
const ProviderScripted = "scripted"

// ScriptedTurn is one scripted model reply.
type ScriptedTurn struct {
	Content         string            `json:"content,omitempty"`
	ToolCalls       []ToolCallRequest `json:"tool_calls,omitempty"`
	Usage           map[string]any    `json:"usage,omitempty"`
	RequestMetadata map[string]any    `json:"request_metadata,omitempty"`
	// Error makes the turn fail with this message, as a provider error.
	Error string `json:"error,omitempty"`
}

// ScriptedModel replays the turns in the request's ModelSpec: model turn N
// gets scripted turn N. It keeps no state, so a retried step gets the same
// reply, and a script that runs out fails the run with a clear error.
type ScriptedModel struct{}

var _ ModelProvider = ScriptedModel{}

// Complete returns the scripted reply for req.Turn.
func (ScriptedModel) Complete(_ context.Context, req ModelRequest) (ModelReply, error) {
	turns := req.Model.Turns
	if req.Turn < 1 || req.Turn > len(turns) {
		return ModelReply{}, fmt.Errorf("scripted model exhausted: turn %d was requested but the script has %d turn(s)", req.Turn, len(turns))
	}
	t := turns[req.Turn-1]
	if t.Error != "" {
		return ModelReply{}, fmt.Errorf("scripted model error: %s", t.Error)
	}
	calls := make([]ToolCallRequest, len(t.ToolCalls))
	for i, c := range t.ToolCalls {
		c.Parameters = cloneObject(c.Parameters)
		if c.Parameters == nil {
			c.Parameters = map[string]any{}
		}
		calls[i] = c
	}
	meta := cloneObject(t.RequestMetadata)
	if meta == nil {
		meta = map[string]any{"provider": ProviderScripted, "turn": json.Number(fmt.Sprint(req.Turn))}
		if req.Model.Model != "" {
			meta["model"] = req.Model.Model
		}
	}
	return ModelReply{
		Content:         t.Content,
		ToolCalls:       calls,
		Usage:           cloneObject(t.Usage),
		RequestMetadata: meta,
		StopReason:      map[bool]string{true: "tool_use", false: "end_turn"}[len(calls) > 0],
	}, nil
}

// UnmarshalJSON reads a tool call with exact numbers.
func (c *ToolCallRequest) UnmarshalJSON(b []byte) error {
	var w struct {
		ID         string         `json:"id"`
		Name       string         `json:"name"`
		Parameters map[string]any `json:"parameters"`
	}
	if err := decodeJSON(b, &w); err != nil {
		return err
	}
	*c = ToolCallRequest(w)
	return nil
}
