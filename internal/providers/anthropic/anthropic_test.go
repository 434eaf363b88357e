package anthropic

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/providers"
	"github.com/baton-agents/baton/internal/providers/providertest"
)

const testKey = "sk-ant-test-SECRET-abcdef0123456789"

var spec = core.ModelSpec{Provider: Name, Model: "claude-sonnet-4-5", Options: map[string]any{"temperature": json.Number("0.2")}}

var checkHeaders = providertest.Want("/v1/messages", map[string]string{
	"x-api-key": testKey, "anthropic-version": "2023-06-01", "Authorization": "",
})

var suite = providertest.HTTPSuite(New, "", testKey, checkHeaders)

func meta(model, reqID, msgID string) map[string]any {
	return providertest.Meta("anthropic", model, reqID, msgID)
}

const sonnet = "claude-sonnet-4-5-20250929"

// withMax is spec with every option the provider accepts.
var withMax = core.ModelSpec{Provider: Name, Model: spec.Model, Options: map[string]any{"max_tokens": 1024, "stop": []any{"END"}, "top_p": 0.9}}

func TestReplies(t *testing.T) {
	leading := core.ModelRequest{
		RunID: "r-2", SessionID: "s-2", Turn: 3, Model: core.ModelSpec{Provider: Name, Model: "claude-haiku-4-5"},
		Messages: []core.Message{
			{Role: core.RoleAssistant, Content: "Hello again."},
			{Role: core.RoleToolCall, Metadata: map[string]any{core.MetaToolCallID: "call.1/x", core.MetaToolName: "ability/send_email",
				core.MetaParameters: map[string]any{"to": "bob@example.com"}}},
			{Role: core.RoleToolResult, Content: "", Metadata: map[string]any{core.MetaToolCallID: "call.1/x", core.MetaSuccess: true}},
			{Role: core.RoleUser, Content: "first"},
			{Role: core.RoleUser, Content: ""},
			{Role: core.RoleUser, Content: "second"},
			{Role: core.RoleAssistant, Content: "ok"},
			{Role: core.RoleAssistant, Content: "and more"},
			{Role: core.RoleUser, Content: "thanks"},
		},
		Tools: providertest.Tools(),
	}
	noTools := providertest.Transcript(spec)
	noTools.Tools = nil
	suite.Replies(t, []providertest.ReplyCase{
		{Name: "plain", Req: providertest.Plain(withMax), Want: core.ModelReply{
			Content: "The capital of France is Paris.", StopReason: "end_turn", Usage: providertest.Usage(21, 10), RequestMetadata: meta(sonnet, "req_011plain", "msg_01Plain")}},
		{Name: "tool_call", Req: providertest.ToolRequest(spec, false), Want: core.ModelReply{
			Content: "I'll look at Monday first.", StopReason: "tool_use",
			ToolCalls: []core.ToolCallRequest{{ID: "toolu_01A09q90qw90lq917835lq9", Name: "client/get_calendar", Parameters: map[string]any{"day": "monday"}}},
			Usage:     providertest.Usage(412, 61), RequestMetadata: meta(sonnet, "req_011tool", "msg_01Tool")}},
		{Name: "parallel", Req: providertest.ToolRequest(spec, true), Want: core.ModelReply{
			StopReason: "tool_use",
			ToolCalls: []core.ToolCallRequest{
				{ID: "toolu_01mon", Name: "client/get_calendar", Parameters: map[string]any{"day": "monday"}},
				{ID: "toolu_01tue", Name: "client/get_calendar", Parameters: map[string]any{"day": "tuesday", "limit": json.Number("10")}},
			},
			Usage: providertest.Usage(412, 90), RequestMetadata: meta(sonnet, "req_011par", "msg_01Par")}},
		{Name: "tool_result", Req: providertest.Transcript(spec), Want: core.ModelReply{
			Content: "You have standup at 09:00 on Monday. I did not email Bob.", StopReason: "end_turn",
			Usage: providertest.Usage(640, 22), RequestMetadata: meta(sonnet, "req_011res", "msg_01Res")}},
		{Name: "usage", Req: providertest.Plain(spec), Want: core.ModelReply{
			Content: "Paris.", StopReason: "end_turn",
			Usage: map[string]any{"prompt_tokens": int64(4250), "completion_tokens": int64(5), "total_tokens": int64(4255),
				"cache_write_tokens": int64(1200), "cache_read_tokens": int64(3000)},
			RequestMetadata: meta(sonnet, "req_011usage", "msg_01Usage")}},
		{Name: "throttled", Req: providertest.Plain(spec), Sleeps: []time.Duration{3 * time.Second, time.Second}, Want: core.ModelReply{
			Content: "The capital of France is Paris.", StopReason: "end_turn", Usage: providertest.Usage(21, 10),
			RequestMetadata: map[string]any{"provider": "anthropic", "model": sonnet, "request_id": "req_011ok", "response_id": "msg_01Thr", "attempts": int64(3)}}},
		{Name: "server_blocks", Req: providertest.ToolRequest(spec, false), Want: core.ModelReply{
			Content: "Monday is not a public holiday, so I'll look at your calendar.", StopReason: "tool_use",
			ToolCalls: []core.ToolCallRequest{{ID: "toolu_01Srv", Name: "client/get_calendar", Parameters: map[string]any{"day": "monday"}}},
			Usage:     providertest.Usage(2100, 350), RequestMetadata: meta(sonnet, "req_011srv", "msg_01Srv")}},
		{Name: "tool_history", Req: noTools, Want: core.ModelReply{
			Content: "Understood, no email.", StopReason: "end_turn", Usage: providertest.Usage(310, 6), RequestMetadata: meta(sonnet, "req_011hist", "msg_01Hist")}},
		{Name: "leading_assistant", Req: leading, Want: core.ModelReply{
			Content: "Done.", StopReason: "end_turn", Usage: providertest.Usage(90, 2), RequestMetadata: meta("claude-haiku-4-5", "req_011lead", "msg_01Lead")}},
	})
}

func TestErrors(t *testing.T) {
	suite.Errors(t, []providertest.ErrorCase{
		{Name: "bad_request", Req: providertest.Plain(spec), Requests: 1, Contains: []string{"anthropic: HTTP 400 (invalid_request_error): max_tokens: 100000 > 64000", "request id req_011bad"}},
		{Name: "server_error", Req: providertest.Plain(spec), Retryable: true, Requests: 4, Contains: []string{"after 4 attempts", "HTTP 529 (overloaded_error): Overloaded", "request id req_011e4"}},
		{Name: "unauthorized", Req: providertest.Plain(spec), Requests: 1, Contains: []string{"HTTP 401 (authentication_error): invalid x-api-key: [redacted]"}},
	})
}

func TestKeyNeverLeaks(t *testing.T) {
	logs, _ := suite.Leak(t, providertest.Plain(spec))
	if !strings.Contains(logs, "model call failed; retrying") {
		t.Errorf("no retry log lines:\n%s", logs)
	}
}

func TestConfigAndOptions(t *testing.T) {
	if _, err := New(Config{BaseURL: "https://api.anthropic.com"}); err == nil {
		t.Error("New without a key succeeded")
	}
	p, err := New(Config{BaseURL: "http://127.0.0.1:1", APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	providertest.RefusesOptions(t, p, spec, map[string]any{"base_url": "https://attacker.example"}, map[string]any{"api_key": "x"},
		map[string]any{"top_k": 5}, map[string]any{"temperature": "hot"})
}

// TestToolHistoryWithoutTools checks that a transcript with tool calls and
// results is sent as text when the request declares no tools (the API
// refuses tool_use and tool_result blocks without tools), and natively
// when it declares them.
func TestToolHistoryWithoutTools(t *testing.T) {
	providertest.ToolHistory(t, spec, func(t *testing.T, req core.ModelRequest) providertest.Encoded {
		body, err := buildRequest(req, providers.NewToolNames(req.Tools), false)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Messages []struct {
				Role    string           `json:"role"`
				Content []map[string]any `json:"content"`
			} `json:"messages"`
			Tools []any `json:"tools"`
		}
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		enc := providertest.Encoded{Tools: len(got.Tools), Dump: string(body)}
		if got.Tools == nil && strings.Contains(string(body), `"tools"`) {
			enc.Tools = -1 // an empty tools field is still a tools field
		}
		var text strings.Builder
		for _, m := range got.Messages {
			enc.Roles = append(enc.Roles, m.Role)
			for _, b := range m.Content {
				switch b["type"] {
				case "tool_use", "tool_result":
					enc.ToolBlocks++
				case "text":
					text.WriteString(b["text"].(string) + "\n")
				}
			}
		}
		enc.Text = text.String()
		return enc
	})
}

// TestContentBlocks checks that content blocks are decoded by type: text
// and tool_use are read, every other type is skipped whatever its shape,
// and a malformed text or tool_use block fails the reply.
func TestContentBlocks(t *testing.T) {
	cases := []struct {
		name    string
		content string
		want    core.ModelReply
		wantErr string
	}{
		{name: "thinking only", content: `[{"type":"thinking","thinking":"hmm","signature":"x"},{"type":"redacted_thinking","data":"y"}]`,
			want: core.ModelReply{StopReason: "end_turn"}},
		{name: "unknown blocks of any shape", content: `[{"type":"future","content":{"a":[1,2]}},{"type":"other","content":"s","text":7},"odd",42,{"type":"text","text":"hi"}]`,
			want: core.ModelReply{Content: "hi", StopReason: "end_turn"}},
		{name: "server tool use is not a call", content: `[{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"q"}},{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"u"}]}]`,
			want: core.ModelReply{StopReason: "end_turn"}},
		{name: "malformed text block", content: `[{"type":"text","text":{"not":"a string"}}]`, wantErr: "content[0] is not a valid text block"},
		{name: "malformed tool_use block", content: `[{"type":"text","text":"a"},{"type":"tool_use","id":7,"name":"x","input":{}}]`, wantErr: "content[1] is not a valid tool_use block"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"id":"msg_1","type":"message","role":"assistant","model":"m","stop_reason":"end_turn","content":` + tc.content + `}`
			got, err := parseResponse(providers.Response{Status: 200, Body: []byte(body), RequestID: "req_1", Attempts: 1}, "m", providers.NewToolNames(nil))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "request id req_1") {
					t.Fatalf("error %v, want one containing %q and the request id", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseResponse: %v", err)
			}
			tc.want.RequestMetadata = meta("m", "req_1", "msg_1")
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("reply\n got %#v\nwant %#v", got, tc.want)
			}
		})
	}
}
