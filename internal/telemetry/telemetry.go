// Package telemetry holds what Baton's traced code needs of OpenTelemetry
// (the settings, the W3C trace context of requests); otelsetup builds the
// exporter, in the functions that export spans. The exporter is
// chosen by the standard OTEL_* environment variables: OTEL_TRACES_EXPORTER
// otlp (OTLP over HTTP/protobuf, configured by OTEL_EXPORTER_OTLP_*),
// console or none, and none when it is unset, unless the console is asked
// for (baton dev --otel-console). otlp builds the OTLP trace exporter of
// the protocol OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL names (http/protobuf
// by default, or grpc), which reads the other OTEL_EXPORTER_OTLP_*
// variables (endpoint, headers) itself; no metric or log exporter is
// linked.
// The package also names the GenAI semantic conventions in use (the
// stable attribute set by default, the latest experimental one when
// OTEL_SEMCONV_STABILITY_OPT_IN lists gen_ai_latest_experimental) and
// whether tool content may be recorded
// (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true; off by
// default, redaction applies).
package telemetry

import (
	"context"
	"io"
	"strings"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Options configure otelsetup.Setup.
type Options struct {
	// Getenv reads the OTEL_* variables (and AWS_LAMBDA_FUNCTION_NAME).
	Getenv func(string) string
	// Console prints spans as JSON lines on ConsoleOut, whatever
	// OTEL_TRACES_EXPORTER says.
	Console    bool
	ConsoleOut io.Writer
	// Service is the service.name resource attribute unless
	// OTEL_SERVICE_NAME sets it.
	Service string
}

// Settings are what the runner needs to trace runs.
type Settings struct {
	Provider trace.TracerProvider
	// Latest selects the latest experimental GenAI conventions.
	Latest bool
	// CaptureContent records tool arguments (redacted) on spans.
	CaptureContent bool
}

// Defaults are the settings of a process that exports no spans: a no-op
// provider, and the conventions and content switches the environment
// names. The exporter, when a function links one, is
// internal/telemetry/otelsetup.
func Defaults(get func(string) string) Settings {
	return Settings{Provider: noop.NewTracerProvider(),
		Latest:         hasItem(get("OTEL_SEMCONV_STABILITY_OPT_IN"), "gen_ai_latest_experimental"),
		CaptureContent: strings.EqualFold(strings.TrimSpace(get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")), "true")}
}

func hasItem(list, item string) bool {
	for _, v := range strings.Split(list, ",") {
		if strings.TrimSpace(v) == item {
			return true
		}
	}
	return false
}

// Extract returns ctx carrying the W3C trace context of an HTTP request's
// headers (any case), so the run a request starts joins the caller's
// trace.
func Extract(ctx context.Context, headers map[string]string) context.Context {
	c := propagation.MapCarrier{}
	for k, v := range headers {
		switch lk := strings.ToLower(k); lk {
		case "traceparent", "tracestate":
			c[lk] = v
		}
	}
	if len(c) == 0 {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, c)
}

// Inject returns the W3C traceparent of ctx's span ("" when none).
func Inject(ctx context.Context) string {
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	return c["traceparent"]
}
