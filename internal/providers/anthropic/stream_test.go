package anthropic

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/providers/providertest"
)

var tok, think = providertest.Token, providertest.Thinking

// TestStreamReplies replays recorded streams and checks the deltas and
// that the reply equals the buffered reply of the same message.
func TestStreamReplies(t *testing.T) {
	plain := core.ModelReply{
		Content: "The capital of France is Paris.", StopReason: "end_turn", Usage: providertest.Usage(21, 10), RequestMetadata: meta(sonnet, "req_011plain", "msg_01Plain")}
	plainDeltas := tok("The capital", " of France", " is Paris.")
	retried := plain
	retried.RequestMetadata = map[string]any{"provider": "anthropic", "model": sonnet, "request_id": "req_011plain", "response_id": "msg_01Plain", "attempts": int64(2)}
	suite.Streams(t, []providertest.StreamCase{
		{Name: "stream_plain", Buffered: "plain", Req: providertest.Plain(withMax), Deltas: plainDeltas, Want: plain},
		{Name: "stream_tool_call", Buffered: "tool_call", Req: providertest.ToolRequest(spec, false), Deltas: tok("I'll look", " at Monday", " first."), Want: core.ModelReply{
			Content: "I'll look at Monday first.", StopReason: "tool_use",
			ToolCalls: []core.ToolCallRequest{{ID: "toolu_01A09q90qw90lq917835lq9", Name: "client/get_calendar", Parameters: map[string]any{"day": "monday"}}},
			Usage:     providertest.Usage(412, 61), RequestMetadata: meta(sonnet, "req_011tool", "msg_01Tool")}},
		{Name: "stream_parallel", Buffered: "parallel", Req: providertest.ToolRequest(spec, true), Want: core.ModelReply{
			StopReason: "tool_use",
			ToolCalls: []core.ToolCallRequest{
				{ID: "toolu_01mon", Name: "client/get_calendar", Parameters: map[string]any{"day": "monday"}},
				{ID: "toolu_01tue", Name: "client/get_calendar", Parameters: map[string]any{"day": "tuesday", "limit": json.Number("10")}},
			},
			Usage: providertest.Usage(412, 90), RequestMetadata: meta(sonnet, "req_011par", "msg_01Par")}},
		{Name: "stream_usage", Buffered: "usage", Req: providertest.Plain(spec), Deltas: tok("Paris."), Want: core.ModelReply{
			Content: "Paris.", StopReason: "end_turn",
			Usage: map[string]any{"prompt_tokens": int64(4250), "completion_tokens": int64(5), "total_tokens": int64(4255),
				"cache_write_tokens": int64(1200), "cache_read_tokens": int64(3000)},
			RequestMetadata: meta(sonnet, "req_011usage", "msg_01Usage")}},
		{Name: "stream_server_blocks", Buffered: "server_blocks", Req: providertest.ToolRequest(spec, false),
			Deltas: append(think("The user wants Monday's calendar;", " a public holiday would matter,", " so search first."),
				tok("Monday is not a public holiday", ", so I'll look", " at your calendar.")...),
			Want: core.ModelReply{
				Content: "Monday is not a public holiday, so I'll look at your calendar.", StopReason: "tool_use",
				ToolCalls: []core.ToolCallRequest{{ID: "toolu_01Srv", Name: "client/get_calendar", Parameters: map[string]any{"day": "monday"}}},
				Usage:     providertest.Usage(2100, 350), RequestMetadata: meta(sonnet, "req_011srv", "msg_01Srv")}},
		// The overloaded_error event fails the first attempt after one
		// delta; the client sees that delta, then the retry's.
		{Name: "stream_overloaded", Req: providertest.Plain(withMax), Deltas: append(tok("The capital"), plainDeltas...),
			Sleeps: []time.Duration{500 * time.Millisecond}, Want: retried},
	})
}

// TestStreamRequests checks that a streamed request is the buffered one
// plus "stream": true.
func TestStreamRequests(t *testing.T) {
	flags := map[string]any{"stream": true}
	for streamed, buffered := range map[string]string{"stream_plain": "plain", "stream_tool_call": "tool_call", "stream_parallel": "parallel"} {
		providertest.StreamedRequest(t, streamed, buffered, flags)
	}
}

func TestStreamErrors(t *testing.T) {
	suite.Errors(t, []providertest.ErrorCase{
		{Name: "stream_invalid", Stream: true, Req: providertest.Plain(withMax), Requests: 1,
			Contains: []string{"anthropic: invalid_request_error: Output blocked by content filtering policy (sent in the response stream) (request id req_011inv)"}},
		{Name: "stream_overloaded_out", Stream: true, Req: providertest.Plain(withMax), Retryable: true, Requests: 4,
			Contains: []string{"after 4 attempts", "anthropic: overloaded_error: Overloaded (sent in the response stream) (request id req_011o4)"}},
		{Name: "stream_truncated", Stream: true, Req: providertest.Plain(withMax), Retryable: true, Requests: 4,
			Sleeps:   []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second},
			Contains: []string{"after 4 attempts", "anthropic: request failed: the response stream ended before the reply was complete (request id req_011cut4)"}},
		{Name: "stream_malformed", Stream: true, Req: providertest.Plain(withMax), Requests: 1, ReplyError: true,
			Contains: []string{"anthropic: an event of the response stream does not decode", "request id req_011badjson"}},
	})
}

// TestStreamDecoder feeds event sequences a recorded stream does not
// hold.
func TestStreamDecoder(t *testing.T) {
	start := `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}`
	stop := `{"type":"message_stop"}`
	providertest.Decoders(t, newStreamDecoder, []providertest.DecoderCase{
		{Name: "tool_use input whole in content_block_start, usage replaced by message_delta", Events: []string{start,
			`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"client__get_calendar","input":{"day":"monday"}}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"input_tokens":12,"cache_read_input_tokens":4,"output_tokens":7}}`,
			`{"type":"some_future_event","x":[1]}`,
			stop,
		}, Want: core.ModelReply{StopReason: "tool_use",
			ToolCalls: []core.ToolCallRequest{{ID: "t1", Name: "client/get_calendar", Parameters: map[string]any{"day": "monday"}}},
			Usage:     map[string]any{"prompt_tokens": int64(16), "completion_tokens": int64(7), "total_tokens": int64(23), "cache_read_tokens": int64(4)}}},
		{Name: "text in content_block_start and an unknown block with deltas", Events: []string{start,
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"Hel"}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo"}}`,
			`{"type":"content_block_start","index":1,"content_block":{"type":"future_block","content":{"a":1}}}`,
			`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"not content"}}`,
			`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}`,
			stop,
		}, Want: core.ModelReply{Content: "Hello", StopReason: "end_turn", Usage: providertest.Usage(10, 3)}, Deltas: tok("Hel", "lo")},
		{Name: "input cut off at the token limit", Events: []string{start,
			`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"client__get_calendar","input":{}}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"day\": \"mon"}}`,
			`{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":3}}`,
			stop,
		}, WantErr: "the reply was cut off at the token limit"},
		{Name: "a delta of a block that did not start", Events: []string{start,
			`{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"x"}}`,
		}, WantErr: "a delta of content block 2, which did not start"},
		{Name: "a block started twice", Events: []string{start,
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		}, WantErr: "content block 0 started twice"},
		{Name: "a malformed text block", Events: []string{start,
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":7}}`,
		}, WantErr: "content block 0 is not a valid text block"},
		{Name: "message_stop without message_start", Events: []string{stop},
			WantErr: "the response stream has no message_start"},
		{Name: "a message of another type", Events: []string{`{"type":"message_start","message":{"id":"x","type":"completion"}}`},
			WantErr: `the response has type "completion", want message`},
	})
}
