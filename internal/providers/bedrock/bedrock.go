package bedrock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"
	smithydocument "github.com/aws/smithy-go/document"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/providers"
)

// Name is the provider name in model specs.
const Name = providers.Bedrock

// EmptyResult is the text sent for a tool result with no content.
const EmptyResult = "(empty)"

// ConverseAPI is the part of the bedrockruntime client the provider uses.
type ConverseAPI interface {
	Converse(ctx context.Context, in *bedrockruntime.ConverseInput, opts ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseOutput, error)
	ConverseStream(ctx context.Context, in *bedrockruntime.ConverseStreamInput, opts ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseStreamOutput, error)
}

var _ ConverseAPI = (*bedrockruntime.Client)(nil)

// Config configures a Provider.
type Config struct {
	Retry providers.RetryPolicy
	Log   *slog.Logger
}

// Provider calls Bedrock Converse. It is safe for concurrent use; build it
// once per cold start.
type Provider struct {
	client ConverseAPI
	retry  providers.RetryPolicy
	log    *slog.Logger
}

var _ core.ModelProvider = (*Provider)(nil)

// NewClient builds the Bedrock runtime client of the provider from the
// process's AWS configuration (awsenv), in region, at endpoint when it is
// set.
func NewClient(cfg aws.Config, region, endpoint string) *bedrockruntime.Client {
	return bedrockruntime.NewFromConfig(cfg, func(o *bedrockruntime.Options) {
		o.Region = region
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
}

// New builds a Provider on client (NewClient).
func New(client *bedrockruntime.Client, cfg Config) (*Provider, error) {
	if client == nil {
		return nil, fmt.Errorf("bedrock: a bedrockruntime client is required")
	}
	return &Provider{client: client, retry: cfg.Retry.WithDefaults(), log: cfg.Log}, nil
}

// Complete runs one model turn: Converse, or ConverseStream when ctx asks
// for tokens (core.StreamsTokens).
func (p *Provider) Complete(ctx context.Context, req core.ModelRequest) (core.ModelReply, error) {
	names := providers.NewToolNames(req.Tools)
	in, err := buildInput(req, names)
	if err != nil {
		return core.ModelReply{}, err
	}
	if core.StreamsTokens(ctx) {
		return p.stream(ctx, streamInput(in), req.Model.Model, names)
	}
	var out *bedrockruntime.ConverseOutput
	attempts, err := p.retry.Do(ctx, p.log, Name, func(ctx context.Context) error {
		o, err := p.client.Converse(ctx, in, noSDKRetries)
		if err != nil {
			return classify(err)
		}
		out = o
		return nil
	})
	if err != nil {
		return core.ModelReply{}, err
	}
	return parseOutput(out, req.Model.Model, names, attempts)
}

// noSDKRetries switches the SDK's retryer off for one call: the
// provider's policy retries, and the SDK must not retry too.
func noSDKRetries(o *bedrockruntime.Options) {
	o.Retryer = aws.NopRetryer{}
	o.RetryMaxAttempts = 0
}

// supportsStatus reports whether the model accepts toolResult.status.
func supportsStatus(modelID string) bool {
	return strings.Contains(modelID, "anthropic.") || strings.Contains(modelID, "amazon.nova")
}

func buildInput(req core.ModelRequest, names *providers.ToolNames) (*bedrockruntime.ConverseInput, error) {
	opts, conv, err := providers.Prepare(Name, req, providers.CommonOptions)
	if err != nil {
		return nil, err
	}
	if len(req.Tools) == 0 {
		// Converse refuses toolUse and toolResult blocks without a
		// toolConfig.
		if conv, err = conv.ToolHistoryAsText(); err != nil {
			return nil, fmt.Errorf("bedrock: %w", err)
		}
	}
	model := strings.TrimSpace(req.Model.Model)
	in := &bedrockruntime.ConverseInput{ModelId: aws.String(model)}
	for _, s := range conv.System {
		in.System = append(in.System, &types.SystemContentBlockMemberText{Value: s})
	}
	status := supportsStatus(model)
	for _, m := range conv.Alternate() {
		msg := types.Message{Role: types.ConversationRoleUser}
		if m.Role == providers.RoleAssistant {
			msg.Role = types.ConversationRoleAssistant
		}
		for _, part := range m.Parts {
			switch {
			case part.Call != nil:
				msg.Content = append(msg.Content, &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
					ToolUseId: aws.String(providers.WireID(part.Call.ID)),
					Name:      aws.String(names.Wire(part.Call.Name)),
					Input:     document.NewLazyDocument(toDocument(part.Call.Arguments)),
				}})
			case part.Result != nil:
				text := part.Result.Content
				if strings.TrimSpace(text) == "" {
					text = EmptyResult
				}
				tr := types.ToolResultBlock{
					ToolUseId: aws.String(providers.WireID(part.Result.ID)),
					Content:   []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: text}},
				}
				if part.Result.IsError && status {
					tr.Status = types.ToolResultStatusError
				}
				msg.Content = append(msg.Content, &types.ContentBlockMemberToolResult{Value: tr})
			default:
				msg.Content = append(msg.Content, &types.ContentBlockMemberText{Value: part.Text})
			}
		}
		in.Messages = append(in.Messages, msg)
	}
	if opts.MaxTokens != nil || opts.Temperature != nil || opts.TopP != nil || len(opts.Stop) > 0 {
		ic := &types.InferenceConfiguration{StopSequences: opts.Stop}
		if opts.MaxTokens != nil {
			ic.MaxTokens = aws.Int32(int32(*opts.MaxTokens))
		}
		if opts.Temperature != nil {
			ic.Temperature = aws.Float32(float32(*opts.Temperature))
		}
		if opts.TopP != nil {
			ic.TopP = aws.Float32(float32(*opts.TopP))
		}
		in.InferenceConfig = ic
	}
	if len(req.Tools) > 0 {
		tc := &types.ToolConfiguration{}
		for _, d := range req.Tools {
			spec := types.ToolSpecification{
				Name:        aws.String(names.Wire(d.Name)),
				InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(toDocument(providers.ToolSchema(d.Parameters)))},
			}
			if d.Description != "" {
				spec.Description = aws.String(d.Description)
			}
			tc.Tools = append(tc.Tools, &types.ToolMemberToolSpec{Value: spec})
		}
		in.ToolConfig = tc
	}
	return in, nil
}

// toDocument converts a generic JSON value for the SDK's document
// encoder, which would write a json.Number as a string: numbers become
// smithy document numbers.
func toDocument(v any) any {
	switch t := v.(type) {
	case json.Number:
		return smithydocument.Number(t)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = toDocument(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = toDocument(x)
		}
		return out
	}
	return v
}

func parseOutput(out *bedrockruntime.ConverseOutput, model string, names *providers.ToolNames, attempts int) (core.ModelReply, error) {
	reqID, _ := awsmiddleware.GetRequestIDMetadata(out.ResultMetadata)
	msg, ok := out.Output.(*types.ConverseOutputMemberMessage)
	if !ok {
		return core.ModelReply{}, providers.ReplyError(Name, reqID, "the response holds no message")
	}
	r := converseReply{reqID: reqID, stop: string(out.StopReason), usage: out.Usage}
	for _, b := range msg.Value.Content {
		switch t := b.(type) {
		case *types.ContentBlockMemberText:
			r.text = append(r.text, t.Value)
		case *types.ContentBlockMemberToolUse:
			u := toolUse{id: aws.ToString(t.Value.ToolUseId), name: aws.ToString(t.Value.Name)}
			if t.Value.Input != nil {
				u.input, u.err = t.Value.Input.MarshalSmithyDocument()
			}
			r.calls = append(r.calls, u)
		}
	}
	return r.reply(model, names, attempts)
}

// converseReply is what a ModelReply is made of, whether the reply came
// whole (Converse) or streamed (ConverseStream): the text blocks, the
// toolUse blocks, the stop reason, the usage and the request id.
type converseReply struct {
	reqID string
	text  []string
	calls []toolUse
	stop  string
	usage *types.TokenUsage
}

// toolUse is a toolUse block: its input as JSON, or the error reading it.
type toolUse struct {
	id, name string
	input    []byte
	err      error
}

func (r converseReply) reply(model string, names *providers.ToolNames, attempts int) (core.ModelReply, error) {
	reply := core.ModelReply{StopReason: r.stop}
	for _, c := range r.calls {
		name := names.Baton(c.name)
		err := c.err
		var args map[string]any
		if err == nil {
			args, err = providers.DecodeObject(c.input)
		}
		if err != nil {
			return core.ModelReply{}, providers.ArgumentsError(Name, c.id, name, reply.StopReason, err)
		}
		reply.ToolCalls = append(reply.ToolCalls, core.ToolCallRequest{ID: c.id, Name: name, Parameters: args})
	}
	reply.Content = strings.Join(r.text, "")
	if u := r.usage; u != nil {
		in, outT, total := i64(u.InputTokens), i64(u.OutputTokens), i64(u.TotalTokens)
		read, write := i64(u.CacheReadInputTokens), i64(u.CacheWriteInputTokens)
		reply.Usage = providers.Usage(in+read+write, outT, total, map[string]int64{
			providers.UsageCacheRead: read, providers.UsageCacheWrite: write,
		})
	}
	reply.RequestMetadata = providers.Metadata(Name, model, r.reqID, "", attempts)
	return reply, nil
}

func i64(p *int32) int64 {
	if p == nil {
		return 0
	}
	return int64(*p)
}

// transientCodes are the Bedrock errors worth retrying.
var transientCodes = map[string]bool{
	"ThrottlingException":         true,
	"ServiceUnavailableException": true,
	"InternalServerException":     true,
	"ModelNotReadyException":      true,
	"ModelTimeoutException":       true,
	// Sent inside a ConverseStream response: "Retry your request."
	"ModelStreamErrorException": true,
}

// classify translates an SDK error into a *providers.Error: service
// errors keep their code, message, status and request id; failures to
// send are transient; anything else (a request the SDK could not
// serialize, a response it could not read) is returned as is and fails
// the call.
func classify(err error) error {
	pe := &providers.Error{Provider: Name}
	var se *smithyhttp.RequestSendError
	if errors.As(err, &se) || errors.Is(err, context.DeadlineExceeded) {
		pe.Transient = true
		pe.Err = err
		pe.Message = providers.Trim(err.Error(), providers.MaxErrorMessage)
		return pe
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		pe.Status = re.HTTPStatusCode()
		pe.RequestID = re.ServiceRequestID()
		if r := re.HTTPResponse(); r != nil && r.Response != nil {
			pe.RetryAfter = providers.RetryAfter(r.Header)
		}
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		pe.Code = ae.ErrorCode()
		pe.Message = providers.Trim(ae.ErrorMessage(), providers.MaxErrorMessage)
		pe.Transient = transientCodes[pe.Code] || providers.TransientStatus(pe.Status)
		return pe
	}
	if re != nil && pe.Status != 0 {
		pe.Message = providers.Trim(err.Error(), providers.MaxErrorMessage)
		pe.Transient = providers.TransientStatus(pe.Status)
		return pe
	}
	return fmt.Errorf("%s: %w", Name, err)
}
