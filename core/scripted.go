package core

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// ProviderScripted is the provider name of the scripted model.
const ProviderScripted = "scripted"

// ScriptedTurn is one scripted model reply.
type ScriptedTurn struct {
	Content         string            `json:"content,omitempty"`
	ToolCalls       []ToolCallRequest `json:"tool_calls,omitempty"`
	Usage           map[string]any    `json:"usage,omitempty"`
	RequestMetadata map[string]any    `json:"request_metadata,omitempty"`
	// Error makes the turn fail with this message, as a provider error.
	Error string `json:"error,omitempty"`
	// Thinking is reasoning text the turn streams (as thinking deltas,
	// before its content) when tokens are streamed; it is never part of
	// the reply, as providers keep reasoning out of the transcript.
	Thinking string `json:"thinking,omitempty"`
	// IfOffered, when set, names a tool: the turn is played only when the
	// model is offered that tool, and skipped otherwise. One script can
	// so serve requests with and without a client tool.
	IfOffered string `json:"if_offered,omitempty"`
	// IfUserSaid, when set, plays the turn only when the request's first
	// user message contains this text, so one agent's script can answer
	// each task differently (as the child runs of one agent do).
	IfUserSaid string `json:"if_user_said,omitempty"`
}

// ScriptedModel replays the turns in the request's ModelSpec: model turn N
// gets the Nth scripted turn that applies to the request (every turn but
// those whose IfOffered names a tool the model is not offered). It keeps
// no state, so a retried step gets the same reply, and a script that runs
// out fails the run with a clear error.
type ScriptedModel struct{}

var _ ModelProvider = ScriptedModel{}

// Scripted model options: with chunk_chars > 0 and a token sink in the
// call's context (StreamsTokens), a turn streams its thinking and content
// in pieces of that many characters, waiting chunk_delay (a Go duration
// such as "50ms") before each, as a provider streaming its output would.
//
// A compaction summary request (Purpose PurposeSummary) consumes no
// scripted turn: it is answered with summary (default "Summary of N
// earlier messages.", N being the messages it condenses), reporting
// summary_usage as its usage (none by default); summary_error makes it
// fail with that message instead.
//
// With echo_request true, a turn's request_metadata (when the turn
// scripts none) also holds request_messages: what the model was sent,
// one {"seq", "role", "content"} per message (content cut to 200
// characters; seq 0 for a message not yet in the transcript), so a test
// can see what a turn saw, and request_system: its system prompt (cut
// to 4,000 characters: it holds recalled memories).
const (
	ScriptedChunkChars   = "chunk_chars"
	ScriptedChunkDelay   = "chunk_delay"
	ScriptedSummary      = "summary"
	ScriptedSummaryUsage = "summary_usage"
	ScriptedSummaryError = "summary_error"
	ScriptedEchoRequest  = "echo_request"
	// ScriptedMemoryExtraction, when set, is the reply's content to a
	// memory extraction request (PurposeMemoryExtraction), which consumes
	// no scripted turn either; by default the reply is
	// {"facts": [{"text"}], "summary"} holding, as facts, the sentences of
	// the conversation's user messages that state a preference or a fact
	// of the user's ("I prefer", "I like", "I love", "I hate", "I am",
	// "I'm", "I live", "I work", "my", "call me", "remember"), and as
	// summary the start of its first user message.
	ScriptedMemoryExtraction = "memory_extraction"
)

// Complete returns the scripted reply for req.Turn, or the scripted
// summary of a summary request.
func (ScriptedModel) Complete(ctx context.Context, req ModelRequest) (ModelReply, error) {
	if req.Purpose == PurposeSummary {
		return scriptedSummary(req)
	}
	if req.Purpose == PurposeMemoryExtraction {
		return scriptedExtraction(req)
	}
	t, ok := scriptedTurn(req)
	if !ok {
		return ModelReply{}, scriptExhausted(req)
	}
	if t.Error != "" {
		return ModelReply{}, fmt.Errorf("scripted model error: %s", t.Error)
	}
	if err := streamScripted(ctx, req.Model.Options, t); err != nil {
		return ModelReply{}, err
	}
	calls := make([]ToolCallRequest, len(t.ToolCalls))
	for i, c := range t.ToolCalls {
		c.Parameters = cloneObject(c.Parameters)
		if c.Parameters == nil {
			c.Parameters = map[string]any{}
		}
		calls[i] = c
	}
	meta := cloneObject(t.RequestMetadata)
	if meta == nil {
		meta = map[string]any{"provider": ProviderScripted, "turn": json.Number(fmt.Sprint(req.Turn))}
		if req.Model.Model != "" {
			meta["model"] = req.Model.Model
		}
		if echo, _ := req.Model.Options[ScriptedEchoRequest].(bool); echo {
			meta["request_messages"] = echoMessages(req.Messages)
			meta["request_system"] = truncateRunes(req.System, 4000)
		}
	}
	return ModelReply{
		Content:         t.Content,
		ToolCalls:       calls,
		Usage:           cloneObject(t.Usage),
		RequestMetadata: meta,
		StopReason:      map[bool]string{true: "tool_use", false: "end_turn"}[len(calls) > 0],
	}, nil
}

// scriptedTurn is the scripted turn that answers req: the req.Turn-th of
// the turns that apply to it.
func scriptedTurn(req ModelRequest) (ScriptedTurn, bool) {
	if req.Turn >= 1 && req.Turn < req.Model.plain {
		return req.Model.Turns[req.Turn-1], true
	}
	n := 0
	for _, t := range req.Model.Turns {
		if !t.appliesTo(req) {
			continue
		}
		if n++; n == req.Turn {
			return t, true
		}
	}
	return ScriptedTurn{}, false
}

// appliesTo reports whether the turn is played for req: always, or, with
// IfOffered, when req offers a tool of that name, and, with IfUserSaid,
// when its first user message contains that text.
func (t ScriptedTurn) appliesTo(req ModelRequest) bool {
	if t.IfUserSaid != "" {
		said := false
		for _, m := range req.Messages {
			if m.Role == RoleUser {
				said = strings.Contains(m.Content, t.IfUserSaid)
				break
			}
		}
		if !said {
			return false
		}
	}
	if t.IfOffered == "" {
		return true
	}
	for _, d := range req.Tools {
		if d.Name == t.IfOffered {
			return true
		}
	}
	return false
}

// scriptExhausted says that a script has no turn for req, counting the
// turns that apply to it.
func scriptExhausted(req ModelRequest) error {
	total, skipped := len(req.Model.Turns), 0
	for _, t := range req.Model.Turns {
		if !t.appliesTo(req) {
			skipped++
		}
	}
	if skipped == 0 {
		return fmt.Errorf("scripted model exhausted: turn %d was requested but the script has %d turn(s)", req.Turn, total)
	}
	return fmt.Errorf("scripted model exhausted: turn %d was requested but the script has %d turn(s) for this request (%d more need a tool it is not offered)", req.Turn, total-skipped, skipped)
}

// scriptedSummary answers a summary request from the model options.
func scriptedSummary(req ModelRequest) (ModelReply, error) {
	opts := req.Model.Options
	if msg, _ := opts[ScriptedSummaryError].(string); msg != "" {
		return ModelReply{}, fmt.Errorf("scripted model error: %s", msg)
	}
	summary, _ := opts[ScriptedSummary].(string)
	if summary == "" {
		summary = fmt.Sprintf("Summary of %d earlier messages.", req.Summarizes)
	}
	usage, _ := opts[ScriptedSummaryUsage].(map[string]any)
	meta := map[string]any{"provider": ProviderScripted, "purpose": PurposeSummary}
	if req.Model.Model != "" {
		meta["model"] = req.Model.Model
	}
	return ModelReply{Content: summary, Usage: cloneObject(usage), RequestMetadata: meta, StopReason: "end_turn"}, nil
}

// scriptedExtraction answers a memory extraction request: the
// memory_extraction option, or the facts the conversation's user
// messages state (ScriptedMemoryExtraction).
func scriptedExtraction(req ModelRequest) (ModelReply, error) {
	meta := map[string]any{"provider": ProviderScripted, "purpose": PurposeMemoryExtraction}
	if req.Model.Model != "" {
		meta["model"] = req.Model.Model
	}
	if content, _ := req.Model.Options[ScriptedMemoryExtraction].(string); content != "" {
		return ModelReply{Content: content, RequestMetadata: meta, StopReason: "end_turn"}, nil
	}
	var conversation []Message
	for _, m := range req.Messages {
		_, rest, ok := strings.Cut(m.Content, "<conversation>\n")
		if body, _, closed := strings.Cut(rest, "\n</conversation>"); ok && closed && m.Role == RoleUser {
			var msgs []Message
			if json.Unmarshal([]byte(body), &msgs) == nil {
				conversation = append(conversation, msgs...)
			}
		}
	}
	facts, summary := []any{}, ""
	for _, m := range conversation {
		if m.Role != RoleUser {
			continue
		}
		if summary == "" {
			summary = "The session began with the user saying: " + truncateRunes(strings.TrimSpace(m.Content), 200)
		}
		for _, s := range sentences(m.Content) {
			if statesFact(s) {
				facts = append(facts, map[string]any{"text": s})
			}
		}
	}
	out := map[string]any{"facts": facts}
	if summary != "" {
		out["summary"] = summary
	}
	b, err := json.Marshal(out)
	if err != nil {
		return ModelReply{}, err
	}
	return ModelReply{Content: string(b), RequestMetadata: meta, StopReason: "end_turn"}, nil
}

// sentences splits text after each '.', '!', '?' and line break,
// trimming each piece and dropping empty ones.
func sentences(text string) []string {
	var out []string
	start := 0
	for i, r := range text {
		if r == '.' || r == '!' || r == '?' || r == '\n' || i+len(string(r)) == len(text) {
			if s := strings.TrimSpace(text[start : i+len(string(r))]); s != "" {
				out = append(out, s)
			}
			start = i + len(string(r))
		}
	}
	return out
}

// statesFact reports whether a sentence states a preference or a fact
// of its speaker's (the scripted extraction's triggers).
func statesFact(s string) bool {
	words := " " + strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z') && !(r >= '0' && r <= '9') && r != '\'' && r < 0x80
	}), " ") + " "
	for _, t := range []string{" i prefer ", " i like ", " i love ", " i hate ", " i am ", " i'm ", " i live ", " i work ", " my ", " call me ", " remember "} {
		if strings.Contains(words, t) {
			return true
		}
	}
	return false
}

// echoMessages is the echo_request view of a request's messages.
func echoMessages(msgs []Message) []any {
	out := make([]any, len(msgs))
	for i, m := range msgs {
		out[i] = map[string]any{"seq": json.Number(fmt.Sprint(m.Seq)), "role": m.Role, "content": truncateRunes(m.Content, 200)}
	}
	return out
}

// validateModelOptions checks the options of a scripted model spec,
// which the scripted provider would otherwise reject only when called.
// Other providers check their own options when called.
func validateModelOptions(spec ModelSpec) error {
	if spec.Provider != ProviderScripted {
		return nil
	}
	opts := spec.Options
	if _, _, err := scriptedChunking(opts); err != nil {
		return err
	}
	for _, k := range []string{ScriptedSummary, ScriptedSummaryError, ScriptedMemoryExtraction} {
		if v, ok := opts[k]; ok {
			if _, isString := v.(string); !isString {
				return fmt.Errorf("scripted model: %s must be a string, got %T", k, v)
			}
		}
	}
	if v, ok := opts[ScriptedSummaryUsage]; ok {
		if _, isObject := v.(map[string]any); !isObject {
			return fmt.Errorf("scripted model: %s must be an object such as {\"prompt_tokens\": 40, \"completion_tokens\": 8}, got %T", ScriptedSummaryUsage, v)
		}
	}
	if v, ok := opts[ScriptedEchoRequest]; ok {
		if _, isBool := v.(bool); !isBool {
			return fmt.Errorf("scripted model: %s must be true or false, got %T", ScriptedEchoRequest, v)
		}
	}
	return nil
}

// UnmarshalJSON reads a tool call with exact numbers.
func (c *ToolCallRequest) UnmarshalJSON(b []byte) error {
	var w struct {
		ID         string         `json:"id"`
		Name       string         `json:"name"`
		Parameters map[string]any `json:"parameters"`
	}
	if err := decodeJSON(b, &w); err != nil {
		return err
	}
	*c = ToolCallRequest(w)
	return nil
}

// streamScripted emits a turn's thinking and content as deltas when the
// model options ask for chunks and ctx carries a token sink.
func streamScripted(ctx context.Context, opts map[string]any, t ScriptedTurn) error {
	if !StreamsTokens(ctx) {
		return nil
	}
	n, delay, err := scriptedChunking(opts)
	if err != nil || n <= 0 {
		return err
	}
	for _, part := range []TokenDelta{{Kind: DeltaThinking, Text: t.Thinking}, {Kind: DeltaToken, Text: t.Content}} {
		runes := []rune(part.Text)
		for i := 0; i < len(runes); i += n {
			if delay > 0 {
				timer := time.NewTimer(delay)
				select {
				case <-ctx.Done():
					timer.Stop()
					return Retryable(ctx.Err())
				case <-timer.C:
				}
			}
			EmitToken(ctx, TokenDelta{Kind: part.Kind, Text: string(runes[i:min(i+n, len(runes))])})
		}
	}
	return nil
}

// scriptedChunking reads chunk_chars and chunk_delay from the model
// options.
func scriptedChunking(opts map[string]any) (int, time.Duration, error) {
	var n int
	switch v := opts[ScriptedChunkChars].(type) {
	case nil:
		return 0, 0, nil
	case float64:
		n = int(v)
	case int:
		n = v
	case json.Number:
		i, err := v.Int64()
		if err != nil {
			return 0, 0, fmt.Errorf("scripted model: %s must be a whole number, got %s", ScriptedChunkChars, v)
		}
		n = int(i)
	default:
		return 0, 0, fmt.Errorf("scripted model: %s must be a number, got %T", ScriptedChunkChars, v)
	}
	var delay time.Duration
	if s, ok := opts[ScriptedChunkDelay].(string); ok && s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return 0, 0, fmt.Errorf("scripted model: %s must be a duration such as \"50ms\", got %q", ScriptedChunkDelay, s)
		}
		delay = d
	}
	return n, delay, nil
}
