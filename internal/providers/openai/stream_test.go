package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/providers/providertest"
)

var tok, think = providertest.Token, providertest.Thinking

var plainDeltas = tok("The", " capital", " of", " France", " is", " Paris", ".")

// TestStreamReplies replays recorded streams and checks the deltas and
// that the reply equals the buffered reply of the same completion.
func TestStreamReplies(t *testing.T) {
	reasoning := core.ModelReply{
		Content: "Paris is the capital.", StopReason: "end_turn", Usage: providertest.Usage(18, 42),
		RequestMetadata: meta("Qwen/Qwen3-8B", "req_reason_1", "chatcmpl-3f9a6c1e2b7d4e0f"),
	}
	reasoningDeltas := append(think("The user asks", " for the capital", " of France."), tok("Paris", " is the", " capital.")...)
	suite.Streams(t, []providertest.StreamCase{
		{Name: "stream_plain", Buffered: "plain", Req: providertest.Plain(spec), Deltas: plainDeltas, Want: core.ModelReply{
			Content: "The capital of France is Paris.", StopReason: "end_turn", Usage: providertest.Usage(25, 8),
			RequestMetadata: meta("gpt-4o-mini-2024-07-18", "req_plain_1", "chatcmpl-plain1")}},
		{Name: "stream_tool_call", Buffered: "tool_call", Req: providertest.ToolRequest(spec, false), Want: core.ModelReply{
			StopReason: "tool_use",
			ToolCalls:  []core.ToolCallRequest{{ID: "call_Ab12", Name: "client/get_calendar", Parameters: map[string]any{"day": "monday"}}},
			Usage:      providertest.Usage(80, 15), RequestMetadata: meta("gpt-4o-mini-2024-07-18", "req_tool_1", "chatcmpl-tool1")}},
		{Name: "stream_parallel", Buffered: "parallel", Req: providertest.ToolRequest(spec, true), Deltas: tok("Checking", " both", " days."), Want: core.ModelReply{
			Content: "Checking both days.", StopReason: "tool_use",
			ToolCalls: []core.ToolCallRequest{
				{ID: "call_mon", Name: "client/get_calendar", Parameters: map[string]any{"day": "monday"}},
				{ID: "call_tue", Name: "client/get_calendar", Parameters: map[string]any{"day": "tuesday", "limit": json.Number("10.5")}},
			},
			Usage: providertest.Usage(80, 30), RequestMetadata: meta("gpt-4o-mini-2024-07-18", "req_par_1", "chatcmpl-par1")}},
		{Name: "stream_usage", Buffered: "usage", Req: providertest.Plain(spec), Deltas: tok("Paris."), Want: core.ModelReply{
			Content: "Paris.", StopReason: "end_turn",
			Usage: map[string]any{"prompt_tokens": int64(2048), "completion_tokens": int64(320), "total_tokens": int64(2368),
				"cache_read_tokens": int64(1920), "reasoning_tokens": int64(256), "completion_rejected_prediction_tokens": int64(3)},
			RequestMetadata: meta("o4-mini-2025-04-16", "req_usage_1", "chatcmpl-usage1")}},
		{Name: "stream_reasoning", Buffered: "reasoning", Req: providertest.Plain(spec), Deltas: reasoningDeltas, Want: reasoning},
		{Name: "stream_reasoning_field", Buffered: "reasoning", Req: providertest.Plain(spec), Deltas: reasoningDeltas, Want: reasoning},
		{Name: "stream_fallback", Buffered: "plain", Req: providertest.Plain(spec), Deltas: tok("The capital of France is Paris."), Want: core.ModelReply{
			Content: "The capital of France is Paris.", StopReason: "end_turn", Usage: providertest.Usage(25, 8),
			RequestMetadata: meta("gpt-4o-mini-2024-07-18", "req_plain_1", "chatcmpl-plain1")}},
		{Name: "stream_throttled", Req: providertest.Plain(spec), Deltas: plainDeltas, Sleeps: []time.Duration{2 * time.Second}, Want: core.ModelReply{
			Content: "The capital of France is Paris.", StopReason: "end_turn", Usage: providertest.Usage(25, 8),
			RequestMetadata: map[string]any{"provider": "openai", "model": "gpt-4o-mini-2024-07-18", "request_id": "req_plain_1", "response_id": "chatcmpl-plain1", "attempts": int64(2)}}},
		{Name: "stream_no_done", Req: providertest.Plain(spec), Deltas: append(tok("Paris."), plainDeltas...), Sleeps: []time.Duration{500 * time.Millisecond}, Want: core.ModelReply{
			Content: "The capital of France is Paris.", StopReason: "end_turn", Usage: providertest.Usage(25, 8),
			RequestMetadata: map[string]any{"provider": "openai", "model": "gpt-4o-mini-2024-07-18", "request_id": "req_plain_1", "response_id": "chatcmpl-plain1", "attempts": int64(2)}}},
	})
}

// TestStreamRequests checks that a streamed request is the buffered one
// plus "stream": true and "stream_options": {"include_usage": true}.
func TestStreamRequests(t *testing.T) {
	flags := map[string]any{"stream": true, "stream_options": map[string]any{"include_usage": true}}
	for streamed, buffered := range map[string]string{"stream_plain": "plain", "stream_tool_call": "tool_call", "stream_parallel": "parallel"} {
		providertest.StreamedRequest(t, streamed, buffered, flags)
	}
	var buffered map[string]any
	raw, err := os.ReadFile(filepath.Join("testdata", "plain.request.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &buffered); err != nil {
		t.Fatal(err)
	}
	if _, ok := buffered["stream_options"]; ok || buffered["stream"] != false {
		t.Errorf("the buffered request asks for a stream: %s", raw)
	}
}

func TestStreamErrors(t *testing.T) {
	suite.Errors(t, []providertest.ErrorCase{
		{Name: "stream_truncated", Stream: true, Req: providertest.Plain(spec), Retryable: true, Requests: 4,
			Sleeps:   []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second},
			Contains: []string{"after 4 attempts", "openai: request failed: the response stream ended before the reply was complete", "request id req_cut_4"}},
		{Name: "stream_malformed", Stream: true, Req: providertest.Plain(spec), Requests: 1, ReplyError: true,
			Contains: []string{"openai: a chunk of the response stream is not a chat completion chunk", "request id req_bad_json"}},
		{Name: "stream_bad_request", Stream: true, Req: providertest.Plain(spec), Requests: 1,
			Contains: []string{"openai: BadRequestError: This model's maximum context length is 8192 tokens", "(sent in the response stream)", "request id req_vllm_400"}},
	})
}

// TestStreamRetryAfterDeltas replays a stream that fails with a
// server_error chunk after two deltas: the call is retried, the client
// sees those two deltas, then the model_retry notice, then the whole
// reply's deltas, and the reply is the second attempt's alone.
func TestStreamRetryAfterDeltas(t *testing.T) {
	srv := providertest.Replay(t, "stream_server_error", checkHeaders)
	var sleeps providertest.Sleeps
	var seen []string
	ctx := core.WithTokenSink(context.Background(), func(d core.TokenDelta) { seen = append(seen, d.Kind+":"+d.Text) })
	ctx = core.WithModelRetryObserver(ctx, func(r core.ModelRetry) {
		seen = append(seen, fmt.Sprintf("retry:%d:%s", r.Attempt, r.Code))
	})
	got, err := suite.Provider(t, srv.URL, &sleeps, nil).Complete(ctx, providertest.Plain(spec))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"token:The", "token: capital", "retry:1:server_error"}
	for _, d := range plainDeltas {
		want = append(want, d.Kind+":"+d.Text)
	}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("seen\n got %q\nwant %q", seen, want)
	}
	if got.Content != "The capital of France is Paris." || got.RequestMetadata["attempts"] != int64(2) {
		t.Errorf("reply %#v", got)
	}
}

// TestStreamsAsItReads serves the first half of a stream and the rest
// only once the first delta has reached the sink: a provider that read
// the whole body before decoding it would never see the second half.
func TestStreamsAsItReads(t *testing.T) {
	head, tail := recordedSplit(t)
	srv := providertest.NewSplit(t, "text/event-stream", head, tail)
	got, err := suite.Provider(t, srv.URL, &providertest.Sleeps{}, nil).Complete(srv.Context(context.Background()), providertest.Plain(spec))
	if err != nil {
		t.Fatal(err)
	}
	if got.Content != "The capital of France is Paris." || !reflect.DeepEqual(srv.Deltas(), plainDeltas) {
		t.Errorf("content %q after deltas %q", got.Content, srv.Deltas())
	}
}

// TestStreamConnectionReset resets every attempt's connection after the
// first delta: each attempt fails with a transient read error, and the
// call ends retryable when the attempts run out.
func TestStreamConnectionReset(t *testing.T) {
	head, _ := recordedSplit(t)
	suite.Reset(t, providertest.Plain(spec), "text/event-stream", head)
}

// recordedSplit is stream_plain.sse cut after its first text delta.
func recordedSplit(t *testing.T) (head, tail []byte) {
	body, err := os.ReadFile(filepath.Join("testdata", "stream_plain.sse"))
	if err != nil {
		t.Fatal(err)
	}
	cut := strings.Index(string(body), `"content":" capital"`)
	return body[:cut], body[cut:]
}

// TestStreamDecoder feeds chunks a recorded stream does not hold.
func TestStreamDecoder(t *testing.T) {
	providertest.Decoders(t, newStreamDecoder, []providertest.DecoderCase{
		{Name: "refusal streams as the content", Events: []string{
			`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":null,"refusal":""}}]}`,
			`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"refusal":"I can't"}}]}`,
			`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"refusal":" help with that."}}]}`,
			`{"id":"c1","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			`[DONE]`,
		}, Want: core.ModelReply{Content: "I can't help with that.", StopReason: "end_turn"}, Deltas: tok("I can't help with that.")},
		{Name: "whole calls each at index 0, arguments as an object, stop with calls", Events: []string{
			`{"id":"c2","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"client__get_calendar","arguments":{"day":"monday"}}}]}}]}`,
			`{"id":"c2","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"ability__send_email","arguments":"{\"to\":\"bob@example.com\"}"}}]}}]}`,
			`{"id":"c2","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			`[DONE]`,
		}, Want: core.ModelReply{StopReason: "tool_use", ToolCalls: []core.ToolCallRequest{
			{ID: "a", Name: "client/get_calendar", Parameters: map[string]any{"day": "monday"}},
			{ID: "b", Name: "ability/send_email", Parameters: map[string]any{"to": "bob@example.com"}},
		}}},
		{Name: "other choices are ignored", Events: []string{
			`{"id":"c3","model":"m","choices":[{"index":1,"delta":{"content":"no"}},{"index":0,"delta":{"content":"yes"}}]}`,
			`[DONE]`,
		}, Want: core.ModelReply{Content: "yes"}, Deltas: tok("yes")},
		{Name: "no choices", Events: []string{`{"id":"c4","choices":[],"usage":{"prompt_tokens":1}}`, `[DONE]`},
			WantErr: "the response stream has no choices"},
		{Name: "arguments cut off at the token limit", Events: []string{
			`{"id":"c5","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"client__get_calendar","arguments":"{\"day\":\"mon"}}]}}]}`,
			`{"id":"c5","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`,
			`[DONE]`,
		}, WantErr: "the reply was cut off at the token limit"},
	})
}
