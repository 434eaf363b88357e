package anthropic

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/providers"
)

// streamEvent is one event of a streamed message; which fields are set
// depends on its type.
type streamEvent struct {
	Type string `json:"type"`
	// message_start
	Message *messagesResponse `json:"message"`
	// content_block_start, content_block_delta, content_block_stop
	Index        int             `json:"index"`
	ContentBlock json.RawMessage `json:"content_block"`
	// content_block_delta (type, text, partial_json, thinking) and
	// message_delta (stop_reason)
	Delta struct {
		Type        string  `json:"type"`
		Text        string  `json:"text"`
		PartialJSON string  `json:"partial_json"`
		Thinking    string  `json:"thinking"`
		StopReason  *string `json:"stop_reason"`
	} `json:"delta"`
	// message_delta: the counts so far, each replacing the one
	// message_start gave.
	Usage *struct {
		InputTokens              *int64 `json:"input_tokens"`
		OutputTokens             *int64 `json:"output_tokens"`
		CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     *int64 `json:"cache_read_input_tokens"`
	} `json:"usage"`
}

// streamDecoder assembles a message from its events: message_start
// gives the message (id, model, input usage), each content block starts,
// grows by deltas and stops, message_delta gives the stop reason and the
// final usage, and message_stop ends the stream.
type streamDecoder struct {
	resp  providers.Response
	model string
	names *providers.ToolNames

	msg    *messagesResponse
	blocks map[int]*streamBlock
}

// streamBlock is a content block being assembled. Only text and tool_use
// blocks are kept; a thinking block streams its deltas as thinking, and
// every other block is skipped as the buffered decoder skips it.
type streamBlock struct {
	block    replyBlock
	keep     bool
	thinking bool
	text     strings.Builder
	input    []byte
}

func newStreamDecoder(resp providers.Response, model string, names *providers.ToolNames) providers.StreamDecoder {
	return &streamDecoder{resp: resp, model: model, names: names, blocks: map[int]*streamBlock{}}
}

// Event decodes one event; message_stop ends the stream, an error event
// fails it.
func (d *streamDecoder) Event(ctx context.Context, ev providers.Event) (bool, error) {
	var e streamEvent
	if err := json.Unmarshal(ev.Data, &e); err != nil {
		return false, d.replyError("an event of the response stream does not decode: %v", err)
	}
	if e.Type == "" {
		e.Type = ev.Name
	}
	switch e.Type {
	case "message_start":
		if e.Message == nil {
			return false, d.replyError("message_start holds no message")
		}
		if err := checkType(*e.Message, d.resp.RequestID); err != nil {
			return false, err
		}
		d.msg = e.Message
	case "content_block_start":
		if _, dup := d.blocks[e.Index]; dup {
			return false, d.replyError("content block %d started twice", e.Index)
		}
		b := &streamBlock{}
		d.blocks[e.Index] = b
		var err error
		if b.block, b.keep, err = readBlock(e.ContentBlock); err != nil {
			return false, d.replyError("content block %d is %v", e.Index, err)
		}
		var kind struct {
			Type     string `json:"type"`
			Thinking string `json:"thinking"`
		}
		_ = json.Unmarshal(e.ContentBlock, &kind)
		b.thinking = kind.Type == "thinking"
		if b.thinking {
			core.EmitToken(ctx, core.TokenDelta{Kind: core.DeltaThinking, Text: kind.Thinking})
		}
		if b.keep && b.block.Type == "text" {
			core.EmitToken(ctx, core.TokenDelta{Kind: core.DeltaToken, Text: b.block.Text})
		}
	case "content_block_delta":
		b := d.blocks[e.Index]
		if b == nil {
			return false, d.replyError("a delta of content block %d, which did not start", e.Index)
		}
		switch {
		case e.Delta.Type == "text_delta" && b.keep && b.block.Type == "text":
			b.text.WriteString(e.Delta.Text)
			core.EmitToken(ctx, core.TokenDelta{Kind: core.DeltaToken, Text: e.Delta.Text})
		case e.Delta.Type == "input_json_delta" && b.keep && b.block.Type == "tool_use":
			b.input = append(b.input, e.Delta.PartialJSON...)
		case e.Delta.Type == "thinking_delta" && b.thinking:
			core.EmitToken(ctx, core.TokenDelta{Kind: core.DeltaThinking, Text: e.Delta.Thinking})
		}
		// signature_delta, citations_delta, the deltas of skipped blocks
		// and delta types added later change nothing Baton keeps.
	case "message_delta":
		if d.msg == nil {
			return false, d.replyError("message_delta before message_start")
		}
		if e.Delta.StopReason != nil {
			d.msg.StopReason = *e.Delta.StopReason
		}
		if u := e.Usage; u != nil {
			if d.msg.Usage == nil {
				d.msg.Usage = &usage{}
			}
			for _, f := range []struct {
				from *int64
				to   *int64
			}{
				{u.InputTokens, &d.msg.Usage.InputTokens},
				{u.OutputTokens, &d.msg.Usage.OutputTokens},
				{u.CacheCreationInputTokens, &d.msg.Usage.CacheCreationInputTokens},
				{u.CacheReadInputTokens, &d.msg.Usage.CacheReadInputTokens},
			} {
				if f.from != nil {
					*f.to = *f.from
				}
			}
		}
	case "message_stop":
		if d.msg == nil {
			return false, d.replyError("the response stream has no message_start")
		}
		return true, nil
	case "error":
		return false, providers.StreamError(Name, d.resp.RequestID, ev.Data)
	}
	// ping, content_block_stop and event types added later change
	// nothing.
	return false, nil
}

// Reply is the reply of the assembled message, its kept blocks in index
// order, decoded as a buffered one.
func (d *streamDecoder) Reply(attempts int) (core.ModelReply, error) {
	var blocks []replyBlock
	for _, i := range slices.Sorted(maps.Keys(d.blocks)) {
		b := d.blocks[i]
		if !b.keep {
			continue
		}
		rb := b.block
		switch rb.Type {
		case "text":
			rb.Text += b.text.String()
		case "tool_use":
			if len(strings.TrimSpace(string(b.input))) > 0 {
				rb.Input = b.input
			}
		}
		blocks = append(blocks, rb)
	}
	resp := d.resp
	resp.Attempts = attempts
	return toReply(*d.msg, blocks, resp, d.model, d.names)
}

func (d *streamDecoder) replyError(format string, args ...any) error {
	return providers.ReplyError(Name, d.resp.RequestID, format, args...)
}
