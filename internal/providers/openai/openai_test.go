package openai

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/providers/providertest"
)

const testKey = "sk-test-SECRET-0123456789abcdef"

var spec = core.ModelSpec{Provider: Name, Model: "gpt-4o-mini", Options: map[string]any{"max_tokens": json.Number("256"), "temperature": 0.2}}

var checkHeaders = providertest.Want("/v1/chat/completions", map[string]string{
	"Authorization": "Bearer " + testKey, "Content-Type": "application/json",
})

var suite = providertest.HTTPSuite(New, "/v1", testKey, checkHeaders)

func meta(model, reqID, respID string) map[string]any {
	return providertest.Meta("openai", model, reqID, respID)
}

func TestReplies(t *testing.T) {
	suite.Replies(t, []providertest.ReplyCase{
		{
			Name: "plain", Req: providertest.Plain(spec),
			Want: core.ModelReply{
				Content: "The capital of France is Paris.", StopReason: "end_turn",
				Usage:           providertest.Usage(25, 8),
				RequestMetadata: meta("gpt-4o-mini-2024-07-18", "req_plain_1", "chatcmpl-plain1"),
			},
		},
		{
			Name: "tool_call", Req: providertest.ToolRequest(spec, false),
			Want: core.ModelReply{
				StopReason:      "tool_use",
				ToolCalls:       []core.ToolCallRequest{{ID: "call_Ab12", Name: "client/get_calendar", Parameters: map[string]any{"day": "monday"}}},
				Usage:           providertest.Usage(80, 15),
				RequestMetadata: meta("gpt-4o-mini-2024-07-18", "req_tool_1", "chatcmpl-tool1"),
			},
		},
		{
			Name: "parallel", Req: providertest.ToolRequest(spec, true),
			Want: core.ModelReply{
				Content: "Checking both days.", StopReason: "tool_use",
				ToolCalls: []core.ToolCallRequest{
					{ID: "call_mon", Name: "client/get_calendar", Parameters: map[string]any{"day": "monday"}},
					{ID: "call_tue", Name: "client/get_calendar", Parameters: map[string]any{"day": "tuesday", "limit": json.Number("10.5")}},
				},
				Usage:           providertest.Usage(80, 30),
				RequestMetadata: meta("gpt-4o-mini-2024-07-18", "req_par_1", "chatcmpl-par1"),
			},
		},
		{
			Name: "tool_result", Req: providertest.Transcript(spec),
			Want: core.ModelReply{
				Content: "You have standup at 09:00 on Monday. I did not email Bob.", StopReason: "end_turn",
				Usage:           providertest.Usage(210, 18),
				RequestMetadata: meta("gpt-4o-mini-2024-07-18", "req_res_1", "chatcmpl-res1"),
			},
		},
		{
			Name: "usage", Req: providertest.Plain(spec),
			Want: core.ModelReply{
				Content: "Paris.", StopReason: "end_turn",
				Usage: map[string]any{"prompt_tokens": int64(2048), "completion_tokens": int64(320), "total_tokens": int64(2368),
					"cache_read_tokens": int64(1920), "reasoning_tokens": int64(256), "completion_rejected_prediction_tokens": int64(3)},
				RequestMetadata: meta("o4-mini-2025-04-16", "req_usage_1", "chatcmpl-usage1"),
			},
		},
		{
			Name: "throttled", Req: providertest.Plain(spec),
			// Retry-After: 2 is honoured; the second retry uses the
			// backoff bound (jitter picks the maximum in tests).
			Sleeps: []time.Duration{2 * time.Second, 1 * time.Second},
			Want: core.ModelReply{
				Content: "The capital of France is Paris.", StopReason: "end_turn",
				Usage:           providertest.Usage(25, 8),
				RequestMetadata: map[string]any{"provider": "openai", "model": "gpt-4o-mini-2024-07-18", "request_id": "req_429_ok", "response_id": "chatcmpl-thr1", "attempts": int64(3)},
			},
		},
	})
}

func TestErrors(t *testing.T) {
	suite.Errors(t, []providertest.ErrorCase{
		{Name: "bad_request", Req: providertest.Plain(spec), Requests: 1,
			Contains: []string{"openai: HTTP 400 (invalid_request_error)", "Invalid type for 'messages[1].content'", "request id req_400"}},
		{Name: "server_error", Req: providertest.Plain(spec), Retryable: true, Requests: 4,
			Contains: []string{"after 4 attempts", "HTTP 500 (server_error)", "request id req_500_4"},
			// Full jitter bounds 0.5s, 1s, 2s (jitter picks the bound in tests).
			Sleeps: []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}},
		{Name: "insufficient_quota", Req: providertest.Plain(spec), Requests: 1,
			Contains: []string{"openai: HTTP 429 (insufficient_quota)", "You exceeded your current quota", "request id req_quota_1"}},
		{Name: "unauthorized", Req: providertest.Plain(spec), Requests: 1,
			Contains: []string{"HTTP 401", "Incorrect API key provided: [redacted]", "check the API key"}},
		{Name: "invalid_arguments", Req: providertest.ToolRequest(spec, false), Retryable: true, Requests: 1, ReplyError: true,
			Contains: []string{"tool call call_bad (client/get_calendar)", "not a JSON object"}},
	})
}

// TestRetryObserver replays recorded 429s and checks that the observer
// in the call's context hears of each retry before its wait.
func TestRetryObserver(t *testing.T) {
	cases := []struct {
		name string
		want []core.ModelRetry
	}{
		{name: "throttled", want: []core.ModelRetry{
			{Provider: Name, Attempt: 1, Status: 429, Code: "requests", Wait: 2 * time.Second},
			{Provider: Name, Attempt: 2, Status: 429, Code: "requests", Wait: time.Second},
		}},
		{name: "plain"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := providertest.Replay(t, tc.name, checkHeaders)
			var sleeps providertest.Sleeps
			p := suite.Provider(t, srv.URL, &sleeps, nil)
			var got []core.ModelRetry
			ctx := core.WithModelRetryObserver(context.Background(), func(r core.ModelRetry) {
				if n := len(sleeps.Delays()); n != len(got) {
					t.Errorf("observer called after %d waits, want before wait %d", n, len(got)+1)
				}
				got = append(got, r)
			})
			if _, err := p.Complete(ctx, providertest.Plain(spec)); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("retries %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestKeyNeverLeaks drives retries whose error bodies echo the key and
// asserts the key is in neither the error nor the logs.
func TestKeyNeverLeaks(t *testing.T) {
	logs, err := suite.Leak(t, providertest.Plain(spec))
	if !strings.Contains(err.Error(), "upstream rejected key [redacted]") {
		t.Errorf("error %q does not show the scrubbed provider message", err)
	}
	if n := strings.Count(logs, "model call failed; retrying"); n != 3 {
		t.Errorf("%d retry log lines, want 3:\n%s", n, logs)
	}
}

func TestOptionsRefused(t *testing.T) {
	p, err := New(Config{BaseURL: "http://127.0.0.1:1/v1", APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	providertest.RefusesOptions(t, p, spec,
		map[string]any{"base_url": "https://attacker.example"},
		map[string]any{"api_key_env": "AWS_SECRET_ACCESS_KEY"},
		map[string]any{"frequency_penalty": 1},
		map[string]any{"max_tokens": -1},
	)
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
