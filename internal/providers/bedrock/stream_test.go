package bedrock

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/providers"
	"github.com/baton-agents/baton/internal/providers/providertest"
)

var tok, think = providertest.Token, providertest.Thinking

// TestStreamReplies drives the SDK's event stream decoding with recorded
// ConverseStream frames served over HTTP, checks the deltas, and that the
// reply equals the Converse reply of the same completion. The request
// bodies are the Converse golden requests: ConverseStream takes the same
// request.
func TestStreamReplies(t *testing.T) {
	plain := core.ModelReply{Content: "The capital of France is Paris.", StopReason: "end_turn", Usage: providertest.Usage(21, 10)}
	throttled := plain
	throttled.RequestMetadata = map[string]any{"provider": "bedrock", "model": claude, "request_id": "thr-ok", "attempts": int64(3)}
	suite.Streams(t, []providertest.StreamCase{
		{Name: "stream_tool_call", Buffered: "tool_call", Req: providertest.ToolRequest(spec, false), Deltas: tok("I'll look", " at Monday", " first."), Want: core.ModelReply{
			Content: "I'll look at Monday first.", StopReason: "tool_use",
			ToolCalls: []core.ToolCallRequest{{ID: "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", Name: "client/get_calendar", Parameters: map[string]any{"day": "monday"}}},
			Usage:     providertest.Usage(412, 61), RequestMetadata: meta("2f1c2c1e-0000-4000-8000-000000000002")}},
		{Name: "stream_parallel", Buffered: "parallel", Req: providertest.ToolRequest(spec, true), Want: core.ModelReply{
			StopReason: "tool_use",
			ToolCalls: []core.ToolCallRequest{
				{ID: "tooluse_mon", Name: "client/get_calendar", Parameters: map[string]any{"day": "monday"}},
				{ID: "tooluse_tue", Name: "client/get_calendar", Parameters: map[string]any{"day": "tuesday", "limit": json.Number("10")}},
			},
			Usage: providertest.Usage(412, 90), RequestMetadata: meta("2f1c2c1e-0000-4000-8000-000000000003")}},
		{Name: "stream_usage", Buffered: "usage", Req: providertest.Plain(spec), Deltas: tok("Paris."), Want: core.ModelReply{
			Content: "Paris.", StopReason: "end_turn",
			Usage: map[string]any{"prompt_tokens": int64(4250), "completion_tokens": int64(5), "total_tokens": int64(4255),
				"cache_read_tokens": int64(3000), "cache_write_tokens": int64(1200)},
			RequestMetadata: meta("2f1c2c1e-0000-4000-8000-000000000005")}},
		{Name: "stream_reasoning", Buffered: "reasoning", Req: providertest.Plain(spec),
			Deltas: append(think("The user asks", " for the capital of France."), tok("Paris", " is the capital.")...),
			Want:   core.ModelReply{Content: "Paris is the capital.", StopReason: "end_turn", Usage: providertest.Usage(40, 30), RequestMetadata: meta("reason-1")}},
		// A modelStreamErrorException after one delta, then a
		// throttlingException: both retried, and the client sees the
		// first attempt's delta before the whole reply's.
		{Name: "stream_throttled", Req: providertest.Plain(spec), Deltas: append(tok("The capital"), tok("The capital", " of France", " is Paris.")...),
			Sleeps: []time.Duration{500 * time.Millisecond, time.Second}, Want: throttled},
	})
}

func TestStreamErrors(t *testing.T) {
	suite.Errors(t, []providertest.ErrorCase{
		{Name: "stream_validation", Stream: true, Req: providertest.Plain(spec), Requests: 1,
			Contains: []string{"bedrock: ValidationException: The model returned the following errors: Input is too long for requested model. (sent in the response stream) (request id val-1)"}},
		{Name: "stream_truncated", Stream: true, Req: providertest.Plain(spec), Retryable: true, Requests: 4,
			Sleeps:   []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second},
			Contains: []string{"after 4 attempts", "bedrock: request failed: the response stream ended before the reply was complete (request id cut-4)"}},
		{Name: "stream_cut", Stream: true, Req: providertest.Plain(spec), Retryable: true, Requests: 4,
			Contains: []string{"after 4 attempts", "the response stream ended before the reply was complete (request id mid-4)"}},
		{Name: "stream_malformed", Stream: true, Req: providertest.Plain(spec), Requests: 1, ReplyError: true,
			Contains: []string{"bedrock: the response stream does not decode", "request id bad-1"}},
	})
}

// TestStreamsAsItReads serves the frames of a stream up to the first
// text delta and the rest only once that delta has reached the sink.
func TestStreamsAsItReads(t *testing.T) {
	head, tail := recordedSplit(t)
	srv := providertest.NewSplit(t, "application/vnd.amazon.eventstream", head, tail)
	got, err := suite.Provider(t, srv.URL, &providertest.Sleeps{}, nil).Complete(srv.Context(context.Background()), providertest.ToolRequest(spec, false))
	if err != nil {
		t.Fatal(err)
	}
	if got.Content != "I'll look at Monday first." || len(got.ToolCalls) != 1 || len(srv.Deltas()) != 3 {
		t.Errorf("reply %#v after deltas %q", got, srv.Deltas())
	}
}

// TestStreamConnectionReset resets every attempt's connection after the
// first delta: each attempt fails with a transient read error, and the
// call ends retryable when the attempts run out.
func TestStreamConnectionReset(t *testing.T) {
	head, _ := recordedSplit(t)
	suite.Reset(t, providertest.Plain(spec), "application/vnd.amazon.eventstream", head)
}

// recordedSplit is the frames of stream_tool_call.json encoded, cut
// after the first text delta.
func recordedSplit(t *testing.T) (head, tail []byte) {
	var fx providertest.Fixture
	raw, err := os.ReadFile(filepath.Join("testdata", "stream_tool_call.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &fx); err != nil {
		t.Fatal(err)
	}
	frames := fx.Exchanges[0].Frames
	if head, err = providertest.EncodeFrames(frames[:2]); err == nil {
		tail, err = providertest.EncodeFrames(frames[2:])
	}
	if err != nil {
		t.Fatal(err)
	}
	return head, tail
}

// TestStreamBodiesOnlyRead checks that ConverseStream requests reach the
// HTTP client with a body that only reads (see streamOptions).
func TestStreamBodiesOnlyRead(t *testing.T) {
	var got *http.Request
	o := bedrockruntime.Options{HTTPClient: clientFunc(func(r *http.Request) (*http.Response, error) {
		got = r
		return nil, io.EOF
	})}
	streamOptions(&o)
	body := io.NopCloser(strings.NewReader("{}"))
	if _, ok := body.(io.WriterTo); !ok {
		t.Fatal("the test body does not implement WriteTo")
	}
	_, _ = o.HTTPClient.Do(&http.Request{Body: body})
	if _, ok := got.Body.(io.WriterTo); ok {
		t.Error("the request body still implements WriteTo")
	}
	if o.Retryer == nil || o.RetryMaxAttempts != 0 {
		t.Error("SDK retries are not switched off")
	}
}

type clientFunc func(*http.Request) (*http.Response, error)

func (f clientFunc) Do(r *http.Request) (*http.Response, error) { return f(r) }

// TestStreamInputCopiesAll checks that the ConverseStream input holds
// every field buildInput sets, for a request that sets every option and
// declares tools.
func TestStreamInputCopiesAll(t *testing.T) {
	s := spec
	s.Options = map[string]any{"max_tokens": 100, "temperature": 0.5, "top_p": 0.9, "stop": []any{"END"}}
	in, err := buildInput(providertest.Transcript(s), providers.NewToolNames(providertest.Tools()))
	if err != nil {
		t.Fatal(err)
	}
	out := reflect.ValueOf(streamInput(in)).Elem()
	v := reflect.ValueOf(in).Elem()
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if !f.IsExported() || v.Field(i).IsZero() {
			continue
		}
		if o := out.FieldByName(f.Name); !o.IsValid() || !reflect.DeepEqual(o.Interface(), v.Field(i).Interface()) {
			t.Errorf("ConverseStreamInput.%s does not hold ConverseInput.%s", f.Name, f.Name)
		}
	}
}

// TestStreamAssembler feeds events a recorded stream does not hold.
func TestStreamAssembler(t *testing.T) {
	index := func(n int32) *int32 { return &n }
	call := func(n int32, id string) types.ConverseStreamOutput {
		return &types.ConverseStreamOutputMemberContentBlockStart{Value: types.ContentBlockStartEvent{ContentBlockIndex: index(n),
			Start: &types.ContentBlockStartMemberToolUse{Value: types.ToolUseBlockStart{ToolUseId: aws.String(id), Name: aws.String("client__get_calendar")}}}}
	}
	input := func(n int32, s string) types.ConverseStreamOutput {
		return &types.ConverseStreamOutputMemberContentBlockDelta{Value: types.ContentBlockDeltaEvent{ContentBlockIndex: index(n),
			Delta: &types.ContentBlockDeltaMemberToolUse{Value: types.ToolUseBlockDelta{Input: aws.String(s)}}}}
	}
	text := func(n int32, s string) types.ConverseStreamOutput {
		return &types.ConverseStreamOutputMemberContentBlockDelta{Value: types.ContentBlockDeltaEvent{ContentBlockIndex: index(n),
			Delta: &types.ContentBlockDeltaMemberText{Value: s}}}
	}
	stop := func(r types.StopReason) types.ConverseStreamOutput {
		return &types.ConverseStreamOutputMemberMessageStop{Value: types.MessageStopEvent{StopReason: r}}
	}
	cases := []struct {
		name    string
		events  []types.ConverseStreamOutput
		want    core.ModelReply
		deltas  []core.TokenDelta
		wantErr string
	}{
		{name: "a call without input; text in its block and unknown events change nothing",
			events: []types.ConverseStreamOutput{call(0, "t1"), text(0, "x"), &types.UnknownUnionMember{Tag: "future"}, text(1, "ok"), stop("tool_use")},
			want: core.ModelReply{Content: "ok", StopReason: "tool_use", ToolCalls: []core.ToolCallRequest{{ID: "t1", Name: "client/get_calendar", Parameters: map[string]any{}}},
				RequestMetadata: meta("r")},
			deltas: tok("ok")},
		{name: "input for a block that is not a toolUse", events: []types.ConverseStreamOutput{text(0, "a"), input(0, "{}")},
			wantErr: "toolUse input for content block 0, which did not start as a toolUse block"},
		{name: "input cut off at the token limit", events: []types.ConverseStreamOutput{call(0, "t1"), input(0, `{"day": "mon`), stop("max_tokens")},
			wantErr: "the reply was cut off at the token limit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var tokens providertest.Tokens
			ctx := tokens.Context(context.Background())
			a := &assembler{reqID: "r", blocks: map[int32]*streamBlock{}}
			var err error
			for _, ev := range tc.events {
				if err = a.event(ctx, ev); err != nil {
					break
				}
			}
			var got core.ModelReply
			if err == nil {
				got, err = a.result().reply(claude, providers.NewToolNames(providertest.Tools()), 1)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("reply\n got %#v\nwant %#v", got, tc.want)
			}
			if !reflect.DeepEqual(tokens.Deltas(), tc.deltas) {
				t.Errorf("deltas %q, want %q", tokens.Deltas(), tc.deltas)
			}
		})
	}
}
