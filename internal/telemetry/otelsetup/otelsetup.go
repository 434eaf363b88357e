// Package otelsetup builds the OpenTelemetry exporter the OTEL_*
// variables choose (see internal/telemetry): linked only into the
// functions that export spans (the API and the worker, and baton dev).
package otelsetup

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"

	"github.com/baton-agents/baton/internal/telemetry"
)

// Setup builds the tracer provider the environment asks for and returns
// it with a shutdown that flushes it.
func Setup(ctx context.Context, o telemetry.Options) (telemetry.Settings, func(context.Context) error, error) {
	get := o.Getenv
	s := telemetry.Defaults(get)
	none := func(context.Context) error { return nil }
	var exp sdktrace.SpanExporter
	var err error
	name := strings.TrimSpace(get("OTEL_TRACES_EXPORTER"))
	switch {
	case o.Console || name == "console":
		exp, err = stdouttrace.New(stdouttrace.WithWriter(o.ConsoleOut))
	case name == "" || name == "none" || strings.EqualFold(get("OTEL_SDK_DISABLED"), "true"):
		return s, none, nil
	case name == "otlp":
		exp, err = otlp(ctx, get)
	default:
		err = fmt.Errorf("OTEL_TRACES_EXPORTER %q: want otlp, console or none", name)
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

// otlp is the OTLP span exporter: OTLP/HTTP with protobuf bodies
// (http/protobuf, the specification's default), which reads the
// endpoint, headers and the rest of OTEL_EXPORTER_OTLP_* itself. Only
// that trace exporter is linked: no metric or log exporter (Baton exports
// spans), and no gRPC one, whose gRPC stack would be a third of a
// megabyte of every function's zip for what every OTLP collector (the
// ADOT Lambda layer's, X-Ray's OTLP endpoint, vendors') takes over HTTP
// too. A protocol naming grpc (OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, then
// OTEL_EXPORTER_OTLP_PROTOCOL) is refused with what to set instead.
func otlp(ctx context.Context, get func(string) string) (sdktrace.SpanExporter, error) {
	proto := strings.TrimSpace(get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"))
	if proto == "" {
		proto = strings.TrimSpace(get("OTEL_EXPORTER_OTLP_PROTOCOL"))
	}
	switch proto {
	case "", "http/protobuf":
		return otlptracehttp.New(ctx)
	case "grpc":
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL %q: Baton exports spans over OTLP/HTTP only; set http/protobuf (or leave it unset) and point OTEL_EXPORTER_OTLP_ENDPOINT at the collector's OTLP/HTTP port (4318 by default)", proto)
	}
	return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL %q: want http/protobuf", proto)
}
