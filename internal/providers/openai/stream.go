package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/providers"
)

// chunk is one event of a streamed chat completion (a
// chat.completion.chunk), or an error a server sends inside the stream.
type chunk struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content *string `json:"content"`
			Refusal *string `json:"refusal"`
			// Reasoning text, as servers such as vLLM, Ollama, DeepSeek
			// and OpenRouter name it; kept raw so that a shape other than
			// a string is ignored rather than failing the stream.
			ReasoningContent json.RawMessage `json:"reasoning_content"`
			Reasoning        json.RawMessage `json:"reasoning"`
			ToolCalls        []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *usage          `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// streamDecoder assembles a chat completion from its chunks: the text of
// choice 0, its tool calls from their fragments (by index: the id and the
// name in the first, pieces of the arguments after), its finish reason,
// and the usage of the last chunk that has one.
type streamDecoder struct {
	resp  providers.Response
	model string
	names *providers.ToolNames

	id, respModel    string
	content, refusal strings.Builder
	calls            []*streamCall
	byIndex          map[int]*streamCall
	finish           string
	usage            *usage
	choice           bool
}

// streamCall is a tool call being assembled.
type streamCall struct {
	id, name string
	args     []byte
}

func newStreamDecoder(resp providers.Response, model string, names *providers.ToolNames) providers.StreamDecoder {
	return &streamDecoder{resp: resp, model: model, names: names, byIndex: map[int]*streamCall{}}
}

// Event decodes one chunk; "[DONE]" ends the stream.
func (d *streamDecoder) Event(ctx context.Context, ev providers.Event) (bool, error) {
	if string(bytes.TrimSpace(ev.Data)) == "[DONE]" {
		if d.content.Len() == 0 {
			// The buffered reply's content is the refusal when there is
			// no text: stream it the same way.
			core.EmitToken(ctx, core.TokenDelta{Kind: core.DeltaToken, Text: d.refusal.String()})
		}
		return true, nil
	}
	var c chunk
	if err := json.Unmarshal(ev.Data, &c); err != nil {
		return false, providers.ReplyError(Name, d.resp.RequestID, "a chunk of the response stream is not a chat completion chunk: %v", err)
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		return false, providers.StreamError(Name, d.resp.RequestID, ev.Data)
	}
	if c.ID != "" {
		d.id = c.ID
	}
	if c.Model != "" {
		d.respModel = c.Model
	}
	if c.Usage != nil {
		d.usage = c.Usage
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		d.choice = true
		delta := ch.Delta
		thinking := jsonString(delta.ReasoningContent)
		if thinking == "" {
			thinking = jsonString(delta.Reasoning)
		}
		core.EmitToken(ctx, core.TokenDelta{Kind: core.DeltaThinking, Text: thinking})
		if delta.Content != nil {
			d.content.WriteString(*delta.Content)
			core.EmitToken(ctx, core.TokenDelta{Kind: core.DeltaToken, Text: *delta.Content})
		}
		if delta.Refusal != nil {
			d.refusal.WriteString(*delta.Refusal)
		}
		for _, tc := range delta.ToolCalls {
			call := d.byIndex[tc.Index]
			if call == nil || (tc.ID != "" && call.id != "" && tc.ID != call.id) {
				// A new index, or a new id at an index already used (a
				// server that sends each whole call at index 0).
				call = &streamCall{}
				d.byIndex[tc.Index] = call
				d.calls = append(d.calls, call)
			}
			if call.id == "" {
				call.id = tc.ID
			}
			if call.name == "" {
				call.name = tc.Function.Name
			}
			call.args = appendArguments(call.args, tc.Function.Arguments)
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			d.finish = *ch.FinishReason
		}
	}
	return false, nil
}

// Reply is the reply of the assembled completion, decoded as a buffered
// one.
func (d *streamDecoder) Reply(attempts int) (core.ModelReply, error) {
	if !d.choice {
		return core.ModelReply{}, providers.ReplyError(Name, d.resp.RequestID, "the response stream has no choices")
	}
	var ch choice
	content, refusal := d.content.String(), d.refusal.String()
	ch.Message.Content, ch.Message.Refusal = &content, &refusal
	ch.FinishReason = d.finish
	for _, c := range d.calls {
		args, err := json.Marshal(string(c.args))
		if err != nil {
			return core.ModelReply{}, err
		}
		ch.Message.ToolCalls = append(ch.Message.ToolCalls, toolCall{ID: c.id, Type: "function", Function: functionCall{Name: c.name, Arguments: args}})
	}
	resp := d.resp
	resp.Attempts = attempts
	return toReply(chatResponse{ID: d.id, Model: d.respModel, Choices: []choice{ch}, Usage: d.usage}, resp, d.model, d.names)
}

// appendArguments appends a fragment of a tool call's arguments: a JSON
// string (the API's shape) is appended as its text, anything else (a
// server sending the arguments as an object) as it is.
func appendArguments(args []byte, raw json.RawMessage) []byte {
	if len(raw) == 0 || string(raw) == "null" {
		return args
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return append(args, s...)
	}
	return append(args, raw...)
}

// jsonString is raw's value when it is a JSON string, or "".
func jsonString(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}
