package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/providers"
)

// Name is the provider name in model specs.
const Name = providers.Anthropic

// APIVersion is the anthropic-version header the provider sends.
const APIVersion = "2023-06-01"

// DefaultMaxTokens is max_tokens when the model spec's options set none.
const DefaultMaxTokens = 4096

// Config configures a Provider. BaseURL is the API root, such as
// https://api.anthropic.com; APIKey is required.
type Config = providers.ClientConfig

// Provider calls the Anthropic Messages API. It is safe for concurrent
// use; build it once per cold start.
type Provider struct {
	http *providers.HTTP
}

var _ core.ModelProvider = (*Provider)(nil)

// New builds a Provider.
func New(cfg Config) (*Provider, error) {
	h := http.Header{}
	h.Set("x-api-key", cfg.APIKey)
	h.Set("anthropic-version", APIVersion)
	t, err := cfg.Transport(Name, h, "request-id")
	if err != nil {
		return nil, err
	}
	if cfg.APIKey == "" {
		return nil, fmt.Errorf("anthropic: an API key is required")
	}
	return &Provider{http: t}, nil
}

// Wire shapes of the Messages API.
type (
	messagesRequest struct {
		Model         string    `json:"model"`
		MaxTokens     int       `json:"max_tokens"`
		System        string    `json:"system,omitempty"`
		Messages      []message `json:"messages"`
		Tools         []tool    `json:"tools,omitempty"`
		Temperature   *float64  `json:"temperature,omitempty"`
		TopP          *float64  `json:"top_p,omitempty"`
		StopSequences []string  `json:"stop_sequences,omitempty"`
		Stream        bool      `json:"stream,omitempty"`
	}
	message struct {
		Role    string  `json:"role"`
		Content []block `json:"content"`
	}
	block struct {
		Type string `json:"type"`
		// text
		Text string `json:"text,omitempty"`
		// tool_use
		ID    string          `json:"id,omitempty"`
		Name  string          `json:"name,omitempty"`
		Input json.RawMessage `json:"input,omitempty"`
		// tool_result
		ToolUseID string `json:"tool_use_id,omitempty"`
		Content   string `json:"content,omitempty"`
		IsError   bool   `json:"is_error,omitempty"`
	}
	// replyBlock is a content block of a reply: only text and tool_use
	// blocks are read.
	replyBlock struct {
		Type  string          `json:"type"`
		Text  string          `json:"text"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	}
	tool struct {
		Name        string         `json:"name"`
		Description string         `json:"description,omitempty"`
		InputSchema map[string]any `json:"input_schema"`
	}
	// messagesResponse keeps each content block raw: blocks are decoded
	// one by one, by type, so a block of a type the provider does not
	// know (whose content may be an array or an object) cannot fail the
	// reply.
	messagesResponse struct {
		ID         string            `json:"id"`
		Type       string            `json:"type"`
		Model      string            `json:"model"`
		Content    []json.RawMessage `json:"content"`
		StopReason string            `json:"stop_reason"`
		Usage      *usage            `json:"usage"`
	}
	usage struct {
		InputTokens              int64 `json:"input_tokens"`
		OutputTokens             int64 `json:"output_tokens"`
		CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	}
)

// codec encodes Messages requests and decodes their replies, buffered or
// streamed.
var codec = providers.Codec{Build: buildRequest, Parse: parseResponse, Stream: newStreamDecoder}

// Complete runs one model turn, streamed when ctx asks for tokens
// (core.StreamsTokens).
func (p *Provider) Complete(ctx context.Context, req core.ModelRequest) (core.ModelReply, error) {
	return p.http.Complete(ctx, "/v1/messages", req, codec)
}

func buildRequest(req core.ModelRequest, names *providers.ToolNames, stream bool) ([]byte, error) {
	opts, conv, err := providers.Prepare(Name, req, providers.CommonOptions)
	if err != nil {
		return nil, err
	}
	out := messagesRequest{
		Model: req.Model.Model, MaxTokens: DefaultMaxTokens, System: conv.SystemText(),
		Temperature: opts.Temperature, TopP: opts.TopP, StopSequences: opts.Stop, Stream: stream,
	}
	if opts.MaxTokens != nil {
		out.MaxTokens = *opts.MaxTokens
	}
	if len(req.Tools) == 0 {
		// The API refuses tool_use and tool_result blocks in a request
		// that defines no tools.
		if conv, err = conv.ToolHistoryAsText(); err != nil {
			return nil, fmt.Errorf("anthropic: %w", err)
		}
	}
	for _, m := range conv.Alternate() {
		msg := message{Role: m.Role}
		for _, part := range m.Parts {
			switch {
			case part.Call != nil:
				input, err := providers.Marshal(part.Call.Arguments)
				if err != nil {
					return nil, fmt.Errorf("anthropic: encode the parameters of tool call %s: %w", part.Call.ID, err)
				}
				msg.Content = append(msg.Content, block{Type: "tool_use", ID: providers.WireID(part.Call.ID), Name: names.Wire(part.Call.Name), Input: input})
			case part.Result != nil:
				msg.Content = append(msg.Content, block{Type: "tool_result", ToolUseID: providers.WireID(part.Result.ID), Content: part.Result.Content, IsError: part.Result.IsError})
			default:
				msg.Content = append(msg.Content, block{Type: "text", Text: part.Text})
			}
		}
		out.Messages = append(out.Messages, msg)
	}
	for _, d := range req.Tools {
		out.Tools = append(out.Tools, tool{Name: names.Wire(d.Name), Description: d.Description, InputSchema: providers.ToolSchema(d.Parameters)})
	}
	return providers.Marshal(out)
}

func parseResponse(resp providers.Response, model string, names *providers.ToolNames) (core.ModelReply, error) {
	var mr messagesResponse
	if err := json.Unmarshal(resp.Body, &mr); err != nil {
		return core.ModelReply{}, providers.ReplyError(Name, resp.RequestID, "the response is not a message: %v", err)
	}
	if err := checkType(mr, resp.RequestID); err != nil {
		return core.ModelReply{}, err
	}
	var blocks []replyBlock
	for i, raw := range mr.Content {
		b, ok, err := readBlock(raw)
		if err != nil {
			return core.ModelReply{}, providers.ReplyError(Name, resp.RequestID, "content[%d] is %v", i, err)
		}
		if ok {
			blocks = append(blocks, b)
		}
	}
	return toReply(mr, blocks, resp, model, names)
}

// checkType fails a message whose type is not message.
func checkType(mr messagesResponse, reqID string) error {
	if mr.Type != "" && mr.Type != "message" {
		return providers.ReplyError(Name, reqID, "the response has type %q, want message", mr.Type)
	}
	return nil
}

// readBlock decodes a content block of a reply by its type: ok is false
// for a block that is neither text nor tool_use, which Baton skips
// whatever its shape: thinking, redacted_thinking, server_tool_use,
// web_search_tool_result and any type added later are not content and
// not a call for Baton to run. A text or tool_use block that does not
// decode is an error.
func readBlock(raw json.RawMessage) (b replyBlock, ok bool, err error) {
	var kind struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(raw, &kind) != nil || (kind.Type != "text" && kind.Type != "tool_use") {
		// Not even an object with a type, or a type Baton skips.
		return b, false, nil
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		return b, false, fmt.Errorf("not a valid %s block: %v", kind.Type, err)
	}
	return b, true, nil
}

// toReply makes the reply of a message from its text and tool_use
// blocks, whether it came whole or was assembled from a stream.
func toReply(mr messagesResponse, blocks []replyBlock, resp providers.Response, model string, names *providers.ToolNames) (core.ModelReply, error) {
	reply := core.ModelReply{StopReason: mr.StopReason}
	var text []string
	for _, b := range blocks {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "tool_use":
			name := names.Baton(b.Name)
			args, err := providers.DecodeObject(b.Input)
			if err != nil {
				return core.ModelReply{}, providers.ArgumentsError(Name, b.ID, name, mr.StopReason, err)
			}
			reply.ToolCalls = append(reply.ToolCalls, core.ToolCallRequest{ID: b.ID, Name: name, Parameters: args})
		}
	}
	reply.Content = strings.Join(text, "")
	if u := mr.Usage; u != nil {
		reply.Usage = providers.Usage(u.InputTokens+u.CacheCreationInputTokens+u.CacheReadInputTokens, u.OutputTokens, 0, map[string]int64{
			providers.UsageCacheWrite: u.CacheCreationInputTokens,
			providers.UsageCacheRead:  u.CacheReadInputTokens,
		})
	}
	if mr.Model != "" {
		model = mr.Model
	}
	reply.RequestMetadata = providers.Metadata(Name, model, resp.RequestID, mr.ID, resp.Attempts)
	return reply, nil
}
