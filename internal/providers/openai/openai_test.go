package openai

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

const testKey = "sk-test-SECRET-0123456789abcdef"

var spec = core.ModelSpec{Provider: Name, Model: "gpt-4o-mini", Options: map[string]any{"max_tokens": json.Number("256"), "temperature": 0.2}}

func checkHeaders(t *testing.T, r providertest.Request) {
	t.Helper()
	if r.Path != "/v1/chat/completions" {
		t.Errorf("path %s, want /v1/chat/completions", r.Path)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization header %q", got)
	}
	if got := r.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type %q", got)
	}
}

func newProvider(t *testing.T, url string, sleeps *providertest.Sleeps, log *slog.Logger) *Provider {
	t.Helper()
	p, err := New(Config{BaseURL: url + "/v1", APIKey: testKey, Retry: providertest.Policy(sleeps), Log: log})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReplies(t *testing.T) {
	cases := []struct {
		name   string
		req    core.ModelRequest
		want   core.ModelReply
		sleeps []time.Duration
	}{
		{
			name: "plain", req: providertest.Plain(spec),
			want: core.ModelReply{
				Content: "The capital of France is Paris.", StopReason: "end_turn",
				Usage:           map[string]any{"prompt_tokens": int64(25), "completion_tokens": int64(8), "total_tokens": int64(33)},
				RequestMetadata: map[string]any{"provider": "openai", "model": "gpt-4o-mini-2024-07-18", "request_id": "req_plain_1", "response_id": "chatcmpl-plain1"},
			},
		},
		{
			name: "tool_call", req: providertest.ToolRequest(spec, false),
			want: core.ModelReply{
				StopReason:      "tool_use",
				ToolCalls:       []core.ToolCallRequest{{ID: "call_Ab12", Name: "client/get_calendar", Parameters: map[string]any{"day": "monday"}}},
				Usage:           map[string]any{"prompt_tokens": int64(80), "completion_tokens": int64(15), "total_tokens": int64(95)},
				RequestMetadata: map[string]any{"provider": "openai", "model": "gpt-4o-mini-2024-07-18", "request_id": "req_tool_1", "response_id": "chatcmpl-tool1"},
			},
		},
		{
			name: "parallel", req: providertest.ToolRequest(spec, true),
			want: core.ModelReply{
				Content: "Checking both days.", StopReason: "tool_use",
				ToolCalls: []core.ToolCallRequest{
					{ID: "call_mon", Name: "client/get_calendar", Parameters: map[string]any{"day": "monday"}},
					{ID: "call_tue", Name: "client/get_calendar", Parameters: map[string]any{"day": "tuesday", "limit": json.Number("10.5")}},
				},
				Usage:           map[string]any{"prompt_tokens": int64(80), "completion_tokens": int64(30), "total_tokens": int64(110)},
				RequestMetadata: map[string]any{"provider": "openai", "model": "gpt-4o-mini-2024-07-18", "request_id": "req_par_1", "response_id": "chatcmpl-par1"},
			},
		},
		{
			name: "tool_result", req: providertest.Transcript(spec),
			want: core.ModelReply{
				Content: "You have standup at 09:00 on Monday. I did not email Bob.", StopReason: "end_turn",
				Usage:           map[string]any{"prompt_tokens": int64(210), "completion_tokens": int64(18), "total_tokens": int64(228)},
				RequestMetadata: map[string]any{"provider": "openai", "model": "gpt-4o-mini-2024-07-18", "request_id": "req_res_1", "response_id": "chatcmpl-res1"},
			},
		},
		{
			name: "usage", req: providertest.Plain(spec),
			want: core.ModelReply{
				Content: "Paris.", StopReason: "end_turn",
				Usage: map[string]any{"prompt_tokens": int64(2048), "completion_tokens": int64(320), "total_tokens": int64(2368),
					"cache_read_tokens": int64(1920), "reasoning_tokens": int64(256), "completion_rejected_prediction_tokens": int64(3)},
				RequestMetadata: map[string]any{"provider": "openai", "model": "o4-mini-2025-04-16", "request_id": "req_usage_1", "response_id": "chatcmpl-usage1"},
			},
		},
		{
			name: "throttled", req: providertest.Plain(spec),
			// Retry-After: 2 is honoured; the second retry uses the
			// backoff bound (jitter picks the maximum in tests).
			sleeps: []time.Duration{2 * time.Second, 1 * time.Second},
			want: core.ModelReply{
				Content: "The capital of France is Paris.", StopReason: "end_turn",
				Usage:           map[string]any{"prompt_tokens": int64(25), "completion_tokens": int64(8), "total_tokens": int64(33)},
				RequestMetadata: map[string]any{"provider": "openai", "model": "gpt-4o-mini-2024-07-18", "request_id": "req_429_ok", "response_id": "chatcmpl-thr1", "attempts": int64(3)},
			},
		},
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
		req       core.ModelRequest
		retryable bool
		requests  int
		contains  []string
	}{
		{name: "bad_request", req: providertest.Plain(spec), requests: 1,
			contains: []string{"openai: HTTP 400 (invalid_request_error)", "Invalid type for 'messages[1].content'", "request id req_400"}},
		{name: "server_error", req: providertest.Plain(spec), retryable: true, requests: 4,
			contains: []string{"after 4 attempts", "HTTP 500 (server_error)", "request id req_500_4"}},
		{name: "unauthorized", req: providertest.Plain(spec), requests: 1,
			contains: []string{"HTTP 401", "Incorrect API key provided: [redacted]", "check the API key"}},
		{name: "invalid_arguments", req: providertest.ToolRequest(spec, false), retryable: true, requests: 1,
			contains: []string{"tool call call_bad (client/get_calendar)", "not a JSON object"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := providertest.Replay(t, tc.name, checkHeaders)
			var sleeps providertest.Sleeps
			_, err := newProvider(t, srv.URL, &sleeps, nil).Complete(context.Background(), tc.req)
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
			if tc.name == "server_error" {
				// Full jitter bounds 0.5s, 1s, 2s (jitter picks the bound in tests).
				if want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}; !reflect.DeepEqual(sleeps.Delays(), want) {
					t.Errorf("sleeps %v, want %v", sleeps.Delays(), want)
				}
			}
		})
	}
}

// TestKeyNeverLeaks drives retries whose error bodies echo the key and
// asserts the key is in neither the error nor the logs.
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
	if !strings.Contains(err.Error(), "upstream rejected key [redacted]") {
		t.Errorf("error %q does not show the scrubbed provider message", err)
	}
	if n := strings.Count(logs.String(), "model call failed; retrying"); n != 3 {
		t.Errorf("%d retry log lines, want 3:\n%s", n, logs.String())
	}
}

func TestOptionsRefused(t *testing.T) {
	p, err := New(Config{BaseURL: "http://127.0.0.1:1/v1", APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []map[string]any{
		{"base_url": "https://attacker.example"},
		{"api_key_env": "AWS_SECRET_ACCESS_KEY"},
		{"frequency_penalty": 1},
		{"max_tokens": -1},
	} {
		s := spec
		s.Options = opts
		_, err := p.Complete(context.Background(), providertest.Plain(s))
		if err == nil || core.IsRetryable(err) {
			t.Errorf("options %v: want a permanent error, got %v", opts, err)
		}
	}
	s := spec
	s.Model = ""
	if _, err := p.Complete(context.Background(), providertest.Plain(s)); err == nil || !strings.Contains(err.Error(), "no model id") {
		t.Errorf("missing model: %v", err)
	}
}

func TestNoKeyNoAuthorizationHeader(t *testing.T) {
	srv := providertest.Replay(t, "plain", func(t *testing.T, r providertest.Request) {
		if h := r.Header.Get("Authorization"); h != "" {
			t.Errorf("Authorization sent without a key: %q", h)
		}
	})
	p, err := New(Config{BaseURL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Complete(context.Background(), providertest.Plain(spec)); err != nil {
		t.Fatal(err)
	}
}
