package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/providers/providertest"
)

const testKey = "sk-ant-test-SECRET-abcdef0123456789"

var spec = core.ModelSpec{Provider: Name, Model: "claude-sonnet-4-5", Options: map[string]any{"temperature": json.Number("0.2")}}

func checkHeaders(t *testing.T, r providertest.Request) {
	t.Helper()
	if r.Path != "/v1/messages" {
		t.Errorf("path %s, want /v1/messages", r.Path)
	}
	if got := r.Header.Get("x-api-key"); got != testKey {
		t.Errorf("x-api-key header %q", got)
	}
	if got := r.Header.Get("anthropic-version"); got != "2023-06-01" {
		t.Errorf("anthropic-version header %q", got)
	}
	if got := r.Header.Get("Authorization"); got != "" {
		t.Errorf("unexpected Authorization header %q", got)
	}
}

func newProvider(t *testing.T, url string, sleeps *providertest.Sleeps, log *slog.Logger) *Provider {
	t.Helper()
	p, err := New(Config{BaseURL: url, APIKey: testKey, Retry: providertest.Policy(sleeps), Log: log})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func meta(model, reqID, msgID string) map[string]any {
	return map[string]any{"provider": "anthropic", "model": model, "request_id": reqID, "response_id": msgID}
}

func usage(p, c int64) map[string]any {
	return map[string]any{"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}
}

const sonnet = "claude-sonnet-4-5-20250929"

func TestReplies(t *testing.T) {
	withMax := spec
	withMax.Options = map[string]any{"max_tokens": 1024, "stop": []any{"END"}, "top_p": 0.9}
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
	cases := []struct {
		name   string
		req    core.ModelRequest
		want   core.ModelReply
		sleeps []time.Duration
	}{
		{name: "plain", req: providertest.Plain(withMax), want: core.ModelReply{
			Content: "The capital of France is Paris.", StopReason: "end_turn", Usage: usage(21, 10), RequestMetadata: meta(sonnet, "req_011plain", "msg_01Plain")}},
		{name: "tool_call", req: providertest.ToolRequest(spec, false), want: core.ModelReply{
			Content: "I'll look at Monday first.", StopReason: "tool_use",
			ToolCalls: []core.ToolCallRequest{{ID: "toolu_01A09q90qw90lq917835lq9", Name: "client/get_calendar", Parameters: map[string]any{"day": "monday"}}},
			Usage:     usage(412, 61), RequestMetadata: meta(sonnet, "req_011tool", "msg_01Tool")}},
		{name: "parallel", req: providertest.ToolRequest(spec, true), want: core.ModelReply{
			StopReason: "tool_use",
			ToolCalls: []core.ToolCallRequest{
				{ID: "toolu_01mon", Name: "client/get_calendar", Parameters: map[string]any{"day": "monday"}},
				{ID: "toolu_01tue", Name: "client/get_calendar", Parameters: map[string]any{"day": "tuesday", "limit": json.Number("10")}},
			},
			Usage: usage(412, 90), RequestMetadata: meta(sonnet, "req_011par", "msg_01Par")}},
		{name: "tool_result", req: providertest.Transcript(spec), want: core.ModelReply{
			Content: "You have standup at 09:00 on Monday. I did not email Bob.", StopReason: "end_turn",
			Usage: usage(640, 22), RequestMetadata: meta(sonnet, "req_011res", "msg_01Res")}},
		{name: "usage", req: providertest.Plain(spec), want: core.ModelReply{
			Content: "Paris.", StopReason: "end_turn",
			Usage: map[string]any{"prompt_tokens": int64(4250), "completion_tokens": int64(5), "total_tokens": int64(4255),
				"cache_write_tokens": int64(1200), "cache_read_tokens": int64(3000)},
			RequestMetadata: meta(sonnet, "req_011usage", "msg_01Usage")}},
		{name: "throttled", req: providertest.Plain(spec), sleeps: []time.Duration{3 * time.Second, time.Second}, want: core.ModelReply{
			Content: "The capital of France is Paris.", StopReason: "end_turn", Usage: usage(21, 10),
			RequestMetadata: map[string]any{"provider": "anthropic", "model": sonnet, "request_id": "req_011ok", "response_id": "msg_01Thr", "attempts": int64(3)}}},
		{name: "leading_assistant", req: leading, want: core.ModelReply{
			Content: "Done.", StopReason: "end_turn", Usage: usage(90, 2), RequestMetadata: meta("claude-haiku-4-5", "req_011lead", "msg_01Lead")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := providertest.Replay(t, tc.name, checkHeaders)
			var sleeps providertest.Sleeps
			got, err := newProvider(t, srv.URL, &sleeps, nil).Complete(context.Background(), tc.req)
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("reply\n got %#v\nwant %#v", got, tc.want)
			}
			if d := sleeps.Delays(); !reflect.DeepEqual(d, tc.sleeps) && (len(d) > 0 || len(tc.sleeps) > 0) {
				t.Errorf("sleeps %v, want %v", d, tc.sleeps)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	cases := []struct {
		name      string
		retryable bool
		requests  int
		contains  []string
	}{
		{name: "bad_request", requests: 1, contains: []string{"anthropic: HTTP 400 (invalid_request_error): max_tokens: 100000 > 64000", "request id req_011bad"}},
		{name: "server_error", retryable: true, requests: 4, contains: []string{"after 4 attempts", "HTTP 529 (overloaded_error): Overloaded", "request id req_011e4"}},
		{name: "unauthorized", requests: 1, contains: []string{"HTTP 401 (authentication_error): invalid x-api-key: [redacted]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := providertest.Replay(t, tc.name, checkHeaders)
			var sleeps providertest.Sleeps
			_, err := newProvider(t, srv.URL, &sleeps, nil).Complete(context.Background(), providertest.Plain(spec))
			if err == nil {
				t.Fatal("Complete succeeded")
			}
			if core.IsRetryable(err) != tc.retryable {
				t.Errorf("IsRetryable = %v, want %v (%v)", core.IsRetryable(err), tc.retryable, err)
			}
			for _, s := range tc.contains {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("error leaks the API key: %v", err)
			}
			if n := len(srv.Requests()); n != tc.requests {
				t.Errorf("%d requests, want %d", n, tc.requests)
			}
		})
	}
}

func TestKeyNeverLeaks(t *testing.T) {
	srv := providertest.Replay(t, "leak_5xx", checkHeaders)
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var sleeps providertest.Sleeps
	_, err := newProvider(t, srv.URL, &sleeps, log).Complete(context.Background(), providertest.Plain(spec))
	if err == nil || !core.IsRetryable(err) {
		t.Fatalf("want a retryable error, got %v", err)
	}
	if strings.Contains(err.Error(), testKey) || strings.Contains(logs.String(), testKey) {
		t.Fatalf("the API key leaked:\nerror: %v\nlogs: %s", err, logs.String())
	}
	if !strings.Contains(logs.String(), "model call failed; retrying") {
		t.Errorf("no retry log lines:\n%s", logs.String())
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
	for _, opts := range []map[string]any{{"base_url": "https://attacker.example"}, {"api_key": "x"}, {"top_k": 5}, {"temperature": "hot"}} {
		s := spec
		s.Options = opts
		if _, err := p.Complete(context.Background(), providertest.Plain(s)); err == nil || core.IsRetryable(err) {
			t.Errorf("options %v: want a permanent error, got %v", opts, err)
		}
	}
}
