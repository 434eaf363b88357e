// Package telemetry sets up Baton's OpenTelemetry traces. The exporter is
// chosen by the standard OTEL_* environment variables: OTEL_TRACES_EXPORTER
// otlp (OTLP over HTTP/protobuf, configured by OTEL_EXPORTER_OTLP_*),
// console or none, and none when it is unset, unless the console is asked
// for (baton dev --otel-console). A set OTEL_TRACES_EXPORTER is handed to
// go.opentelemetry.io/contrib/exporters/autoexport, which reads it and
// the OTEL_EXPORTER_OTLP_* variables (protocol grpc or http/protobuf,
// endpoint, headers) from the process environment; only the default
// differs from autoexport's (none instead of otlp).
// The package also names the GenAI semantic conventions in use (the
// stable attribute set by default, the latest experimental one when
// OTEL_SEMCONV_STABILITY_OPT_IN lists gen_ai_latest_experimental) and
// whether tool content may be recorded
// (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true; off by
// default, redaction applies).
package telemetry

import (
	"context"
	"fmt"
	"io"
	"strings"

	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Options configure Setup.
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

// Setup builds the tracer provider the environment asks for and returns
// it with a shutdown that flushes it.
func Setup(ctx context.Context, o Options) (Settings, func(context.Context) error, error) {
	get := o.Getenv
	s := Settings{Provider: noop.NewTracerProvider(),
		Latest:         hasItem(get("OTEL_SEMCONV_STABILITY_OPT_IN"), "gen_ai_latest_experimental"),
		CaptureContent: strings.EqualFold(strings.TrimSpace(get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")), "true")}
	none := func(context.Context) error { return nil }
	var exp sdktrace.SpanExporter
	var err error
	name := strings.TrimSpace(get("OTEL_TRACES_EXPORTER"))
	switch {
	case o.Console || name == "console":
		exp, err = stdouttrace.New(stdouttrace.WithWriter(o.ConsoleOut))
	case name == "" || name == "none" || strings.EqualFold(get("OTEL_SDK_DISABLED"), "true"):
		return s, none, nil
	default:
		exp, err = autoexport.NewSpanExporter(ctx)
	}
	if err != nil {
		return s, none, fmt.Errorf("OpenTelemetry trace exporter: %w", err)
	}
	service := get("OTEL_SERVICE_NAME")
	if service == "" {
		service = o.Service
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName(service)))
	if err != nil {
		return s, none, fmt.Errorf("OpenTelemetry resource: %w", err)
	}
	// A Lambda is frozen between invocations: each span is exported when
	// it ends (to the local collector of the ADOT layer, or an OTLP
	// endpoint); elsewhere spans are batched.
	proc := sdktrace.NewBatchSpanProcessor(exp)
	if get("AWS_LAMBDA_FUNCTION_NAME") != "" {
		proc = sdktrace.NewSimpleSpanProcessor(exp)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(proc), sdktrace.WithResource(res))
	s.Provider = tp
	return s, tp.Shutdown, nil
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
