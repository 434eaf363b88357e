package bedrock

import (
	"context"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/providers"
)

// streamInput is the ConverseStream form of in: the same request, since
// buildInput sets only fields the two share (TestStreamInputCopiesAll
// keeps it so).
func streamInput(in *bedrockruntime.ConverseInput) *bedrockruntime.ConverseStreamInput {
	return &bedrockruntime.ConverseStreamInput{
		ModelId: in.ModelId, System: in.System, Messages: in.Messages,
		InferenceConfig: in.InferenceConfig, ToolConfig: in.ToolConfig,
	}
}

// stream runs one model turn with ConverseStream under the retry policy,
// emitting the deltas of each attempt as they arrive. An attempt fails
// on an exception in the stream (classified as Converse's errors are),
// on a stream that ends before messageStop and metadata (transient), and
// on a connection that fails mid-stream (transient); a retried attempt
// streams again from the start.
func (p *Provider) stream(ctx context.Context, in *bedrockruntime.ConverseStreamInput, model string, names *providers.ToolNames) (core.ModelReply, error) {
	var got converseReply
	attempts, err := p.retry.Do(ctx, p.log, Name, func(ctx context.Context) error {
		out, err := p.client.ConverseStream(ctx, in, streamOptions)
		if err != nil {
			return classify(err)
		}
		reqID, _ := awsmiddleware.GetRequestIDMetadata(out.ResultMetadata)
		r, err := readStream(ctx, out.GetStream(), reqID)
		if err != nil {
			return err
		}
		got = r
		return nil
	})
	if err != nil {
		return core.ModelReply{}, err
	}
	return got.reply(model, names, attempts)
}

// streamOptions are the options of each ConverseStream call: no SDK
// retries, and request bodies that only Read. The SDK closes a request's
// body as soon as the response headers arrive, and its closed body
// answers WriteTo with io.EOF; when net/http is still finishing the body
// (its last read of a body goes through WriteTo), it takes that EOF for a
// write error and closes the connection, which breaks the event stream
// being read ("use of closed network connection"). A body without WriteTo
// is read with Read, which a closed body answers with a plain EOF.
func streamOptions(o *bedrockruntime.Options) {
	noSDKRetries(o)
	if o.HTTPClient != nil {
		o.HTTPClient = readOnlyBodies{o.HTTPClient}
	}
}

// readOnlyBodies sends requests whose body hides any method but Read and
// Close.
type readOnlyBodies struct{ c bedrockruntime.HTTPClient }

func (r readOnlyBodies) Do(req *http.Request) (*http.Response, error) {
	if req.Body != nil && req.Body != http.NoBody {
		req.Body = struct{ io.ReadCloser }{req.Body}
	}
	return r.c.Do(req)
}

// readStream reads the events of es until it ends and assembles the
// reply, emitting text and reasoning deltas as they arrive.
func readStream(ctx context.Context, es *bedrockruntime.ConverseStreamEventStream, reqID string) (converseReply, error) {
	defer es.Close()
	a := &assembler{reqID: reqID, blocks: map[int32]*streamBlock{}}
	for ev := range es.Events() {
		if err := a.event(ctx, ev); err != nil {
			return converseReply{}, err
		}
	}
	if err := es.Err(); err != nil {
		return converseReply{}, streamFailure(err, reqID)
	}
	if !a.stopped || !a.metadata {
		// The SDK ends the events quietly when the body ends, even in
		// the middle of a message.
		return converseReply{}, providers.TruncatedStream(Name, reqID)
	}
	return a.result(), nil
}

// streamFailure classifies the error that ended a stream: an exception
// the service sent is classified as Converse's errors are, and a
// connection that failed mid-stream is transient.
func streamFailure(err error, reqID string) error {
	c := classify(err)
	var pe *providers.Error
	if errors.As(c, &pe) {
		pe.MidStream = pe.Code != ""
		if pe.RequestID == "" {
			pe.RequestID = reqID
		}
		return pe
	}
	if ne := net.Error(nil); errors.As(err, &ne) {
		return &providers.Error{Provider: Name, RequestID: reqID, Transient: true, Err: err,
			Message: providers.Trim("reading the response stream: "+err.Error(), providers.MaxErrorMessage)}
	}
	return providers.ReplyError(Name, reqID, "the response stream does not decode: %v", err)
}

// Kinds of content blocks in a stream.
const (
	blockText = iota + 1
	blockToolUse
	blockOther
)

// assembler collects the content blocks (by index), the stop reason and
// the usage of a ConverseStream response.
type assembler struct {
	reqID    string
	blocks   map[int32]*streamBlock
	stop     string
	stopped  bool
	usage    *types.TokenUsage
	metadata bool
}

type streamBlock struct {
	kind     int
	id, name string
	text     strings.Builder
	input    []byte
}

// block returns the block at index, starting one of kind when there is
// none: text and reasoning blocks have no contentBlockStart event.
func (a *assembler) block(index *int32, kind int) *streamBlock {
	i := aws.ToInt32(index)
	b := a.blocks[i]
	if b == nil {
		b = &streamBlock{kind: kind}
		a.blocks[i] = b
	}
	return b
}

func (a *assembler) event(ctx context.Context, ev types.ConverseStreamOutput) error {
	switch e := ev.(type) {
	case *types.ConverseStreamOutputMemberContentBlockStart:
		b := a.block(e.Value.ContentBlockIndex, blockOther)
		if t, ok := e.Value.Start.(*types.ContentBlockStartMemberToolUse); ok {
			b.kind, b.id, b.name = blockToolUse, aws.ToString(t.Value.ToolUseId), aws.ToString(t.Value.Name)
		}
	case *types.ConverseStreamOutputMemberContentBlockDelta:
		switch d := e.Value.Delta.(type) {
		case *types.ContentBlockDeltaMemberText:
			if b := a.block(e.Value.ContentBlockIndex, blockText); b.kind == blockText {
				b.text.WriteString(d.Value)
				core.EmitToken(ctx, core.TokenDelta{Kind: core.DeltaToken, Text: d.Value})
			}
		case *types.ContentBlockDeltaMemberToolUse:
			b := a.block(e.Value.ContentBlockIndex, blockOther)
			if b.kind != blockToolUse {
				return providers.ReplyError(Name, a.reqID, "toolUse input for content block %d, which did not start as a toolUse block", aws.ToInt32(e.Value.ContentBlockIndex))
			}
			b.input = append(b.input, aws.ToString(d.Value.Input)...)
		case *types.ContentBlockDeltaMemberReasoningContent:
			a.block(e.Value.ContentBlockIndex, blockOther)
			if t, ok := d.Value.(*types.ReasoningContentBlockDeltaMemberText); ok {
				core.EmitToken(ctx, core.TokenDelta{Kind: core.DeltaThinking, Text: t.Value})
			}
		}
		// Signatures, redacted reasoning, citations, images and tool
		// results are not content and not calls, as in Converse replies.
	case *types.ConverseStreamOutputMemberMessageStop:
		a.stop, a.stopped = string(e.Value.StopReason), true
	case *types.ConverseStreamOutputMemberMetadata:
		a.usage, a.metadata = e.Value.Usage, true
	}
	// messageStart, contentBlockStop and unknown events change nothing.
	return nil
}

// result is the reply of the assembled blocks, in index order.
func (a *assembler) result() converseReply {
	r := converseReply{reqID: a.reqID, stop: a.stop, usage: a.usage}
	for _, i := range slices.Sorted(maps.Keys(a.blocks)) {
		switch b := a.blocks[i]; b.kind {
		case blockText:
			r.text = append(r.text, b.text.String())
		case blockToolUse:
			r.calls = append(r.calls, toolUse{id: b.id, name: b.name, input: b.input})
		}
	}
	return r
}
