package core

import "context"

// Token delta kinds: model output text, and reasoning (thinking) text
// from providers that stream it.
const (
	DeltaToken    = "token"
	DeltaThinking = "thinking"
)

// TokenDelta is one piece of a model turn's output as the provider
// streams it. Deltas are ephemeral: they never enter the run state, the
// transcript or the envelope, which hold the whole reply once the turn is
// committed, exactly as if it had not been streamed.
type TokenDelta struct {
	// Kind is DeltaToken or DeltaThinking.
	Kind string `json:"kind"`
	Text string `json:"text"`
}

// tokenSinkKey is the context key of a token delta sink.
type tokenSinkKey struct{}

// WithTokenSink returns a context that carries sink: a provider that can
// stream calls it (through EmitToken) with each text or reasoning delta of
// the model call made with that context, in order, on one goroutine. Like
// the model retry observer, it travels in the context of the call. sink
// must not block for long: it runs on the goroutine reading the
// provider's stream.
func WithTokenSink(ctx context.Context, sink func(TokenDelta)) context.Context {
	if sink == nil {
		return ctx
	}
	return context.WithValue(ctx, tokenSinkKey{}, sink)
}

// StreamsTokens reports whether ctx carries a token sink: providers stream
// the model call (and call EmitToken) only then, and otherwise make the
// ordinary buffered call.
func StreamsTokens(ctx context.Context) bool {
	sink, _ := ctx.Value(tokenSinkKey{}).(func(TokenDelta))
	return sink != nil
}

// EmitToken hands d to the sink ctx carries, if any, swallowing its
// panics: sinks never change a model call. Empty deltas are dropped.
func EmitToken(ctx context.Context, d TokenDelta) {
	if d.Text == "" {
		return
	}
	sink, _ := ctx.Value(tokenSinkKey{}).(func(TokenDelta))
	if sink == nil {
		return
	}
	defer func() { _ = recover() }()
	sink(d)
}
