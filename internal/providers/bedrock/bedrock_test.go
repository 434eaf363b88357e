package bedrock

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/providers"
	"github.com/baton-agents/baton/internal/providers/providertest"
)

const (
	claude       = "anthropic.claude-3-5-sonnet-20240620-v1:0"
	testSecretAK = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYSECRETKEY"
)

var spec = core.ModelSpec{Provider: Name, Model: claude, Options: map[string]any{"max_tokens": json.Number("512"), "temperature": json.Number("0.5")}}

func checker(model string) func(t *testing.T, r providertest.Request) {
	return checkPath(model, "converse")
}

// checkPath asserts that a request went to operation op of model, signed
// with the test credentials.
func checkPath(model, op string) func(t *testing.T, r providertest.Request) {
	return func(t *testing.T, r providertest.Request) {
		t.Helper()
		if want := "/model/" + strings.ReplaceAll(url.PathEscape(model), ":", "%3A") + "/" + op; r.Path != want {
			t.Errorf("path %s, want %s", r.Path, want)
		}
		if a := r.Header.Get("Authorization"); !strings.HasPrefix(a, "AWS4-HMAC-SHA256 Credential=AKIDTEST/") || !strings.Contains(a, "/us-east-1/bedrock/aws4_request") {
			t.Errorf("request is not SigV4-signed for bedrock in the provider's region (us-east-1) with the test credentials: %q", a)
		}
		if strings.Contains(r.Header.Get("Authorization"), testSecretAK) {
			t.Error("the secret key was sent")
		}
	}
}

// suite points the real SDK client at the replay server.
var suite = providertest.Suite{
	New: func(endpoint string, sleeps *providertest.Sleeps, log *slog.Logger) (core.ModelProvider, error) {
		client := NewClient(aws.Config{
			Region:      "us-west-2",
			Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", testSecretAK, ""),
		}, "us-east-1", endpoint)
		return New(client, Config{Retry: providertest.Policy(sleeps), Log: log})
	},
	Check: checker,
	// ConverseStream takes the same request at another path.
	StreamCheck: func(model string) func(t *testing.T, r providertest.Request) {
		return checkPath(model, "converse-stream")
	},
	Secret: testSecretAK,
}

func meta(reqID string) map[string]any {
	return providertest.Meta("bedrock", claude, reqID, "")
}

func TestReplies(t *testing.T) {
	llama := core.ModelSpec{Provider: Name, Model: "meta.llama3-1-70b-instruct-v1:0"}
	noTools := providertest.Transcript(spec)
	noTools.Tools = nil
	suite.Replies(t, []providertest.ReplyCase{
		{Name: "plain", Req: providertest.Plain(spec), Want: core.ModelReply{
			Content: "The capital of France is Paris.", StopReason: "end_turn", Usage: providertest.Usage(21, 10), RequestMetadata: meta("2f1c2c1e-0000-4000-8000-000000000001")}},
		{Name: "tool_call", Req: providertest.ToolRequest(spec, false), Want: core.ModelReply{
			Content: "I'll look at Monday first.", StopReason: "tool_use",
			ToolCalls: []core.ToolCallRequest{{ID: "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", Name: "client/get_calendar", Parameters: map[string]any{"day": "monday"}}},
			Usage:     providertest.Usage(412, 61), RequestMetadata: meta("2f1c2c1e-0000-4000-8000-000000000002")}},
		{Name: "parallel", Req: providertest.ToolRequest(spec, true), Want: core.ModelReply{
			StopReason: "tool_use",
			ToolCalls: []core.ToolCallRequest{
				{ID: "tooluse_mon", Name: "client/get_calendar", Parameters: map[string]any{"day": "monday"}},
				{ID: "tooluse_tue", Name: "client/get_calendar", Parameters: map[string]any{"day": "tuesday", "limit": json.Number("10")}},
			},
			Usage: providertest.Usage(412, 90), RequestMetadata: meta("2f1c2c1e-0000-4000-8000-000000000003")}},
		{Name: "tool_result", Req: providertest.Transcript(spec), Want: core.ModelReply{
			Content: "You have standup at 09:00 on Monday. I did not email Bob.", StopReason: "end_turn",
			Usage: providertest.Usage(640, 22), RequestMetadata: meta("2f1c2c1e-0000-4000-8000-000000000004")}},
		{Name: "usage", Req: providertest.Plain(spec), Want: core.ModelReply{
			Content: "Paris.", StopReason: "end_turn",
			Usage: map[string]any{"prompt_tokens": int64(4250), "completion_tokens": int64(5), "total_tokens": int64(4255),
				"cache_read_tokens": int64(3000), "cache_write_tokens": int64(1200)},
			RequestMetadata: meta("2f1c2c1e-0000-4000-8000-000000000005")}},
		{Name: "throttled", Req: providertest.Plain(spec), Sleeps: []time.Duration{500 * time.Millisecond, time.Second}, Want: core.ModelReply{
			Content: "The capital of France is Paris.", StopReason: "end_turn", Usage: providertest.Usage(21, 10),
			RequestMetadata: map[string]any{"provider": "bedrock", "model": claude, "request_id": "thr-ok", "attempts": int64(3)}}},
		{Name: "tool_history", Req: noTools, Want: core.ModelReply{
			Content: "Understood, no email.", StopReason: "end_turn", Usage: providertest.Usage(310, 6), RequestMetadata: meta("hist-1")}},
		{Name: "llama_result", Req: providertest.Transcript(llama), Want: core.ModelReply{
			Content: "OK.", StopReason: "end_turn", Usage: providertest.Usage(300, 2),
			RequestMetadata: providertest.Meta("bedrock", llama.Model, "llama-1", "")}},
	})
}

func TestErrors(t *testing.T) {
	suite.Errors(t, []providertest.ErrorCase{
		{Name: "bad_request", Req: providertest.Plain(spec), Requests: 1, Contains: []string{"bedrock: HTTP 400 (ValidationException): The provided model identifier is invalid.", "request id bad-1"}},
		{Name: "access_denied", Req: providertest.Plain(spec), Requests: 1, Contains: []string{"HTTP 403 (AccessDeniedException): You don't have access", "check the API key or credentials"}},
		{Name: "server_error", Req: providertest.Plain(spec), Retryable: true, Requests: 4, Contains: []string{"after 4 attempts", "HTTP 500 (InternalServerException)", "request id ise-4"}},
	})
}

func TestTranscriptAlternates(t *testing.T) {
	in, err := buildInput(providertest.Transcript(spec), providers.NewToolNames(providertest.Tools()))
	if err != nil {
		t.Fatal(err)
	}
	if in.Messages[0].Role != "user" || len(in.Messages) != 3 {
		t.Fatalf("messages: %+v", in.Messages)
	}
}

func TestOptionsRefused(t *testing.T) {
	p := suite.Provider(t, "http://127.0.0.1:1", &providertest.Sleeps{}, nil)
	providertest.RefusesOptions(t, p, spec, map[string]any{"region": "eu-west-1"}, map[string]any{"endpoint": "https://attacker.example"}, map[string]any{"top_k": 3})
}

func TestNetworkErrorIsRetried(t *testing.T) {
	var sleeps providertest.Sleeps
	// Nothing listens on port 1 of the loopback interface.
	_, err := suite.Provider(t, "http://127.0.0.1:1", &sleeps, nil).Complete(context.Background(), providertest.Plain(spec))
	if err == nil || !core.IsRetryable(err) {
		t.Fatalf("want a retryable error, got %v", err)
	}
	if len(sleeps.Delays()) != 3 {
		t.Errorf("sleeps %v, want 3 retries", sleeps.Delays())
	}
}

// TestToolHistoryWithoutTools checks that a transcript with tool calls and
// results is sent as text when the request declares no tools (Converse
// refuses toolUse and toolResult blocks without a toolConfig), and
// natively when it declares them.
func TestToolHistoryWithoutTools(t *testing.T) {
	providertest.ToolHistory(t, spec, func(t *testing.T, req core.ModelRequest) providertest.Encoded {
		in, err := buildInput(req, providers.NewToolNames(req.Tools))
		if err != nil {
			t.Fatal(err)
		}
		enc := providertest.Encoded{Dump: fmt.Sprintf("%+v", in)}
		if in.ToolConfig != nil {
			enc.Tools = len(in.ToolConfig.Tools)
			if enc.Tools == 0 {
				enc.Tools = -1 // an empty tool config is still a tool config
			}
		}
		var text strings.Builder
		for _, m := range in.Messages {
			enc.Roles = append(enc.Roles, string(m.Role))
			for _, b := range m.Content {
				switch v := b.(type) {
				case *types.ContentBlockMemberToolUse, *types.ContentBlockMemberToolResult:
					enc.ToolBlocks++
				case *types.ContentBlockMemberText:
					text.WriteString(v.Value + "\n")
				default:
					t.Errorf("unexpected content block %T", b)
				}
			}
		}
		enc.Text = text.String()
		return enc
	})
}
