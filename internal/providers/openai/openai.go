package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/providers"
)

// Name is the provider name in model specs.
const Name = providers.OpenAI

// Config configures a Provider. BaseURL is the API root, such as
// https://api.openai.com/v1 or http://127.0.0.1:11434/v1; APIKey is sent
// as a Bearer token when not empty.
type Config = providers.ClientConfig

// Provider calls an OpenAI-compatible Chat Completions endpoint. It is
// safe for concurrent use; build it once per cold start.
type Provider struct {
	http *providers.HTTP
}

var _ core.ModelProvider = (*Provider)(nil)

// New builds a Provider.
func New(cfg Config) (*Provider, error) {
	h := http.Header{}
	if cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	t, err := cfg.Transport(Name, h, "x-request-id")
	if err != nil {
		return nil, err
	}
	return &Provider{http: t}, nil
}

// Wire shapes of the Chat Completions API.
type (
	chatRequest struct {
		Model               string    `json:"model"`
		Messages            []message `json:"messages"`
		Tools               []tool    `json:"tools,omitempty"`
		ParallelToolCalls   *bool     `json:"parallel_tool_calls,omitempty"`
		MaxTokens           *int      `json:"max_tokens,omitempty"`
		MaxCompletionTokens *int      `json:"max_completion_tokens,omitempty"`
		Temperature         *float64  `json:"temperature,omitempty"`
		TopP                *float64  `json:"top_p,omitempty"`
		Stop                []string  `json:"stop,omitempty"`
		Stream              bool      `json:"stream"`
		// StreamOptions asks a streamed completion to end with a chunk
		// holding the usage.
		StreamOptions *streamOptions `json:"stream_options,omitempty"`
	}
	streamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	}
	message struct {
		Role       string     `json:"role"`
		Content    *string    `json:"content"`
		ToolCalls  []toolCall `json:"tool_calls,omitempty"`
		ToolCallID string     `json:"tool_call_id,omitempty"`
	}
	toolCall struct {
		ID       string       `json:"id"`
		Type     string       `json:"type"`
		Function functionCall `json:"function"`
	}
	functionCall struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	tool struct {
		Type     string   `json:"type"`
		Function function `json:"function"`
	}
	function struct {
		Name        string         `json:"name"`
		Description string         `json:"description,omitempty"`
		Parameters  map[string]any `json:"parameters"`
	}
	chatResponse struct {
		ID      string   `json:"id"`
		Model   string   `json:"model"`
		Choices []choice `json:"choices"`
		Usage   *usage   `json:"usage"`
	}
	choice struct {
		Message struct {
			Content   *string    `json:"content"`
			Refusal   *string    `json:"refusal"`
			ToolCalls []toolCall `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	}
	usage struct {
		PromptTokens            int64                      `json:"prompt_tokens"`
		CompletionTokens        int64                      `json:"completion_tokens"`
		TotalTokens             int64                      `json:"total_tokens"`
		PromptTokensDetails     map[string]json.RawMessage `json:"prompt_tokens_details"`
		CompletionTokensDetails map[string]json.RawMessage `json:"completion_tokens_details"`
	}
)

var allowedOptions = append([]string{providers.OptMaxCompletionTokens}, providers.CommonOptions...)

// codec encodes chat completion requests and decodes their replies,
// buffered or streamed.
var codec = providers.Codec{Build: buildRequest, Parse: parseResponse, Stream: newStreamDecoder}

// Complete runs one model turn, streamed when ctx asks for tokens
// (core.StreamsTokens).
func (p *Provider) Complete(ctx context.Context, req core.ModelRequest) (core.ModelReply, error) {
	return p.http.Complete(ctx, "/chat/completions", req, codec)
}

func buildRequest(req core.ModelRequest, names *providers.ToolNames, stream bool) ([]byte, error) {
	opts, conv, err := providers.Prepare(Name, req, allowedOptions)
	if err != nil {
		return nil, err
	}
	out := chatRequest{
		Model: req.Model.Model, MaxTokens: opts.MaxTokens, MaxCompletionTokens: opts.MaxCompletionTokens,
		Temperature: opts.Temperature, TopP: opts.TopP, Stop: opts.Stop, Stream: stream,
	}
	if stream {
		out.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	str := func(s string) *string { return &s }
	if sys := conv.SystemText(); sys != "" {
		out.Messages = append(out.Messages, message{Role: "system", Content: str(sys)})
	}
	for _, t := range conv.Turns {
		switch t.Kind {
		case providers.TurnUser:
			out.Messages = append(out.Messages, message{Role: "user", Content: str(t.Text)})
		case providers.TurnAssistant:
			m := message{Role: "assistant"}
			if t.Text != "" || len(t.Calls) == 0 {
				m.Content = str(t.Text)
			}
			for _, c := range t.Calls {
				args, err := providers.Marshal(c.Arguments)
				if err != nil {
					return nil, fmt.Errorf("openai: encode the parameters of tool call %s: %w", c.ID, err)
				}
				enc, _ := json.Marshal(string(args))
				m.ToolCalls = append(m.ToolCalls, toolCall{ID: c.ID, Type: "function", Function: functionCall{Name: names.Wire(c.Name), Arguments: enc}})
			}
			out.Messages = append(out.Messages, m)
		case providers.TurnResults:
			for _, r := range t.Results {
				out.Messages = append(out.Messages, message{Role: "tool", Content: str(r.Content), ToolCallID: r.ID})
			}
		}
	}
	for _, d := range req.Tools {
		out.Tools = append(out.Tools, tool{Type: "function", Function: function{
			Name: names.Wire(d.Name), Description: d.Description, Parameters: providers.ToolSchema(d.Parameters),
		}})
	}
	if req.ParallelToolCalls && len(out.Tools) > 0 {
		t := true
		out.ParallelToolCalls = &t
	}
	return providers.Marshal(out)
}

var finishReasons = map[string]string{
	"stop":           providers.StopEndTurn,
	"tool_calls":     providers.StopToolUse,
	"function_call":  providers.StopToolUse,
	"length":         providers.StopMaxTokens,
	"content_filter": providers.StopContentFiltered,
}

func parseResponse(resp providers.Response, model string, names *providers.ToolNames) (core.ModelReply, error) {
	var cr chatResponse
	if err := json.Unmarshal(resp.Body, &cr); err != nil {
		return core.ModelReply{}, providers.ReplyError(Name, resp.RequestID, "the response is not a chat completion: %v", err)
	}
	if len(cr.Choices) == 0 {
		return core.ModelReply{}, providers.ReplyError(Name, resp.RequestID, "the response has no choices")
	}
	return toReply(cr, resp, model, names)
}

// toReply makes the reply of a chat completion with at least one choice,
// whether it came whole or was assembled from a stream.
func toReply(cr chatResponse, resp providers.Response, model string, names *providers.ToolNames) (core.ModelReply, error) {
	ch := cr.Choices[0]
	stop := ch.FinishReason
	if s, ok := finishReasons[stop]; ok {
		stop = s
	}
	reply := core.ModelReply{StopReason: stop}
	if ch.Message.Content != nil {
		reply.Content = *ch.Message.Content
	}
	if reply.Content == "" && ch.Message.Refusal != nil {
		reply.Content = *ch.Message.Refusal
	}
	for _, tc := range ch.Message.ToolCalls {
		name := names.Baton(tc.Function.Name)
		args, err := decodeArguments(tc.Function.Arguments)
		if err != nil {
			return core.ModelReply{}, providers.ArgumentsError(Name, tc.ID, name, stop, err)
		}
		reply.ToolCalls = append(reply.ToolCalls, core.ToolCallRequest{ID: tc.ID, Name: name, Parameters: args})
	}
	if len(reply.ToolCalls) > 0 && stop == providers.StopEndTurn {
		// Some compatible servers report "stop" with tool calls.
		reply.StopReason = providers.StopToolUse
	}
	if u := cr.Usage; u != nil {
		extras := map[string]int64{}
		detail := func(prefix string, m map[string]json.RawMessage) {
			for k, raw := range m {
				var n int64
				if json.Unmarshal(raw, &n) != nil {
					continue
				}
				switch k {
				case "cached_tokens":
					extras[providers.UsageCacheRead] += n
				case "reasoning_tokens":
					extras[providers.UsageReasoning] += n
				default:
					extras[prefix+k] += n
				}
			}
		}
		detail("prompt_", u.PromptTokensDetails)
		detail("completion_", u.CompletionTokensDetails)
		reply.Usage = providers.Usage(u.PromptTokens, u.CompletionTokens, u.TotalTokens, extras)
	}
	if cr.Model != "" {
		model = cr.Model
	}
	reply.RequestMetadata = providers.Metadata(Name, model, resp.RequestID, cr.ID, resp.Attempts)
	return reply, nil
}

// decodeArguments accepts the arguments as a JSON string holding an
// object (the API's shape) or as an object (some compatible servers).
func decodeArguments(raw json.RawMessage) (map[string]any, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return providers.DecodeObject([]byte(s))
	}
	if len(raw) == 0 || string(raw) == "null" {
		return map[string]any{}, nil
	}
	return providers.DecodeObject(raw)
}
