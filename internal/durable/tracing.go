package durable

import (
	"context"
	"encoding/json"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/telemetry"
)

// Tracing: a run is one trace. Its root is the invoke_agent span of the
// API request that starts it (a child of the caller's traceparent, when
// the request has one); the run state keeps that span's traceparent and
// every step message carries it, so each step's span is the root's
// child; inside a step, the model call is a chat span and a tool
// execution an execute_tool span, with the GenAI semantic conventions'
// attributes. No prompt, reply or tool content is recorded, unless the
// operator turns content capture on: then a tool's arguments are
// recorded with their secrets redacted (core.RedactedParameters).

const tracerName = "github.com/baton-agents/baton"

// noopTracer traces nothing, for a runner without a tracer provider.
var noopTracer = noop.NewTracerProvider().Tracer(tracerName)

func (e *Runner) tracer() trace.Tracer {
	if e.Telemetry.Provider == nil {
		return noopTracer
	}
	return e.Telemetry.Provider.Tracer(tracerName)
}

// providerAttr is the GenAI provider attribute of the conventions in use:
// gen_ai.system (stable set), gen_ai.provider.name (latest experimental).
func (e *Runner) providerAttr(p string) attribute.KeyValue {
	if e.Telemetry.Latest {
		return attribute.String("gen_ai.provider.name", p)
	}
	return attribute.String("gen_ai.system", p)
}

// traceVersion records on a step's span the agent version its run runs
// on, and the source of a fork.
func traceVersion(ctx context.Context, cfg core.RunConfig) {
	span := trace.SpanFromContext(ctx)
	span.SetAttributes(attribute.String("gen_ai.agent.version", cfg.AgentVersion))
	if f := cfg.ForkedFrom; f != nil {
		span.SetAttributes(attribute.String("baton.forked_from.run_id", f.RunID), attribute.Int64("baton.forked_from.seq", f.Seq),
			attribute.String("baton.fork.tools", f.Tools))
	}
}

// startRun starts the run's root span.
func (e *Runner) startRun(ctx context.Context, cfg core.RunConfig) (context.Context, trace.Span) {
	attrs := []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", "invoke_agent"),
		attribute.String("gen_ai.agent.name", cfg.Agent),
		attribute.String("gen_ai.agent.version", cfg.AgentVersion),
		e.providerAttr(cfg.Model.Provider),
	}
	return e.tracer().Start(ctx, "invoke_agent "+cfg.Agent, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(withModel(attrs, "gen_ai.request.model", cfg.Model.Model)...))
}

// withModel adds a model attribute to attrs when the model is known: an
// unknown model is left out rather than recorded empty.
func withModel(attrs []attribute.KeyValue, key, model string) []attribute.KeyValue {
	if model == "" {
		return attrs
	}
	return append(attrs, attribute.String(key, model))
}

// spanName is an operation's span name: the operation and, when known,
// the model ("chat gpt-4o"; "chat" alone otherwise).
func spanName(op, model string) string {
	if model == "" {
		return op
	}
	return op + " " + model
}

// traceStep runs one step in a span that continues the run's trace,
// saying how it came: "queued" (a queue message) or "chained" (run in
// the invocation that committed the step before it); the Steps metric
// counts both by that dimension.
func (e *Runner) traceStep(ctx context.Context, step core.Step, d Attempt, run func(context.Context) error) error {
	delivery := "queued"
	if d.Chained() {
		delivery = "chained"
	}
	if step.Trace != "" {
		ctx = telemetry.Extract(ctx, map[string]string{"traceparent": step.Trace})
	}
	ctx = withStaleMark(ctx)
	ctx, span := e.tracer().Start(ctx, "step "+string(step.Kind), trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(
		attribute.String("baton.run_id", step.RunID), attribute.String("baton.step.kind", string(step.Kind)),
		attribute.Int64("baton.step.seq", step.Seq), attribute.String("baton.step.delivery", delivery)))
	defer span.End()
	start := e.Clock.Now()
	err := run(ctx)
	outcome := "ok"
	if err != nil {
		outcome = "retry"
		span.SetStatus(codes.Error, "step retried")
		span.SetAttributes(attribute.String("error.type", "retryable"))
	}
	if !stepProcessed(ctx) {
		outcome = "stale"
	}
	e.Metrics.put(e.Clock.Now(), map[string]string{"StepKind": string(step.Kind), "Outcome": outcome},
		map[string]string{"Steps": unitCount, "StepDuration": unitMs},
		map[string]float64{"Steps": 1, "StepDuration": ms(e.Clock.Now().Sub(start))})
	e.countMetric("StepDeliveries", map[string]string{"Delivery": delivery})
	return err
}

type staleKey struct{}

// withStaleMark returns ctx whose step can be marked stale (dropped).
func withStaleMark(ctx context.Context) context.Context {
	return context.WithValue(ctx, staleKey{}, new(bool))
}

// markStale records that the step of ctx was dropped as stale or a
// duplicate.
func markStale(ctx context.Context) {
	if p, _ := ctx.Value(staleKey{}).(*bool); p != nil {
		*p = true
	}
}

func stepProcessed(ctx context.Context) bool {
	p, _ := ctx.Value(staleKey{}).(*bool)
	return p == nil || !*p
}

// traceModel runs a step's model call in a chat span.
func (e *Runner) traceModel(ctx context.Context, st core.RunState, call func(context.Context) core.Input) core.Input {
	m := st.Config.Model
	attrs := []attribute.KeyValue{attribute.String("gen_ai.operation.name", "chat"), e.providerAttr(m.Provider), attribute.String("gen_ai.agent.name", st.Config.Agent)}
	ctx, span := e.tracer().Start(ctx, spanName("chat", m.Model), trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(withModel(attrs, "gen_ai.request.model", m.Model)...))
	defer span.End()
	start := e.Clock.Now()
	in := call(ctx)
	r, ok := in.(core.ModelReplied)
	if !ok {
		return in
	}
	values := map[string]float64{"ModelLatency": ms(e.Clock.Now().Sub(start))}
	defer func() {
		e.Metrics.put(e.Clock.Now(), map[string]string{"Provider": m.Provider},
			map[string]string{"ModelLatency": unitMs, "InputTokens": unitCount, "OutputTokens": unitCount}, values)
	}()
	if r.Err != nil {
		span.SetStatus(codes.Error, "model call failed")
		span.SetAttributes(attribute.String("error.type", "model_error"))
		return in
	}
	resp := m.Model
	if v, ok := r.Reply.RequestMetadata["model"].(string); ok && v != "" {
		resp = v
	}
	span.SetAttributes(withModel(nil, "gen_ai.response.model", resp)...)
	if r.Reply.StopReason != "" {
		span.SetAttributes(attribute.StringSlice("gen_ai.response.finish_reasons", []string{r.Reply.StopReason}))
	}
	if n, ok := tokens(r.Reply.Usage["prompt_tokens"]); ok {
		span.SetAttributes(attribute.Int64("gen_ai.usage.input_tokens", n))
		values["InputTokens"] = float64(n)
	}
	if n, ok := tokens(r.Reply.Usage["completion_tokens"]); ok {
		span.SetAttributes(attribute.Int64("gen_ai.usage.output_tokens", n))
		values["OutputTokens"] = float64(n)
	}
	return in
}

func tokens(v any) (int64, bool) {
	switch n := v.(type) {
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	case float64:
		return int64(n), true
	case int:
		return int64(n), true
	case int64:
		return n, true
	}
	return 0, false
}

// traceTool runs a step's tool execution in an execute_tool span.
func (e *Runner) traceTool(ctx context.Context, call core.ToolCall, run func(context.Context) (core.Input, error)) (core.Input, error) {
	ctx, span := e.tracer().Start(ctx, "execute_tool "+call.ToolName, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "execute_tool"),
		attribute.String("gen_ai.tool.name", call.ToolName),
		attribute.String("gen_ai.tool.call.id", call.ToolCallID),
		attribute.String("gen_ai.tool.type", "function")))
	defer span.End()
	if e.Telemetry.CaptureContent {
		if b, err := json.Marshal(core.RedactedParameters(call.Parameters)); err == nil {
			span.SetAttributes(attribute.String("gen_ai.tool.call.arguments", string(b)))
		}
	}
	in, err := run(ctx)
	errType := ""
	switch r := in.(type) {
	case core.ToolExecuted:
		if r.Err != nil {
			errType = core.ErrTypeExecutorException
		} else if m, ok := r.Output.(map[string]any); ok && m["success"] == false {
			errType, _ = m["error_type"].(string)
			if errType == "" {
				errType = "tool_error"
			}
		}
	case core.ToolDecided:
		if !r.Decision.Result.Success {
			errType = r.Decision.Result.ErrorType
		}
	}
	if err != nil {
		errType = fmt.Sprintf("%T", err)
	}
	if errType != "" {
		span.SetStatus(codes.Error, errType)
		span.SetAttributes(attribute.String("error.type", errType))
		e.countMetric("ToolErrors", map[string]string{"ErrorType": errType})
	}
	if errType == core.ErrTypeInDoubt {
		e.countMetric("InDoubt", nil)
	}
	return in, err
}

// runTrace names the run on its root span and returns the span's
// traceparent for the run state ("" when the span is not recorded).
func runTrace(ctx context.Context, span trace.Span, runID, sessionID string) string {
	span.SetAttributes(attribute.String("baton.run_id", runID), attribute.String("gen_ai.conversation.id", sessionID))
	if !span.SpanContext().IsValid() {
		return ""
	}
	return telemetry.Inject(ctx)
}

// traceDecided marks the step span of a call mediation answered without
// executing it: the tool, and for a fork's call answered from its
// source's record, the recorded result it repeats.
func traceDecided(ctx context.Context, in core.Input) {
	d, ok := in.(core.ToolDecided)
	if !ok || d.Decision.Replayed == nil {
		return
	}
	trace.SpanFromContext(ctx).SetAttributes(attribute.Bool("baton.tool.replayed", true),
		attribute.String("baton.tool.replayed_from.run_id", d.Decision.Replayed.RunID), attribute.Int64("baton.tool.replayed_from.seq", d.Decision.Replayed.Seq))
}
