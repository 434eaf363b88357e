package otelsetup

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace/noop"

	"github.com/baton-agents/baton/internal/telemetry"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestNoExporterByDefault(t *testing.T) {
	for _, vars := range []map[string]string{nil, {"OTEL_TRACES_EXPORTER": "none"}, {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "true"}} {
		s, stop, err := Setup(context.Background(), telemetry.Options{Getenv: env(vars)})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := s.Provider.(noop.TracerProvider); !ok || s.Latest || s.CaptureContent {
			t.Fatalf("%v: settings %+v", vars, s)
		}
		if err := stop(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

func TestConsolePrintsSpans(t *testing.T) {
	var out bytes.Buffer
	s, stop, err := Setup(context.Background(), telemetry.Options{Getenv: env(map[string]string{"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental"}), Console: true, ConsoleOut: &out, Service: "baton-test"})
	if err != nil {
		t.Fatal(err)
	}
	_, span := s.Provider.Tracer("t").Start(context.Background(), "invoke_agent demo")
	span.End()
	if err := stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"Name":"invoke_agent demo"`) || !strings.Contains(out.String(), "baton-test") || !s.Latest {
		t.Fatalf("console output %q, settings %+v", out.String(), s)
	}
}

func TestUnknownExporterIsAnError(t *testing.T) {
	t.Setenv("OTEL_TRACES_EXPORTER", "carrier-pigeon")
	if _, _, err := Setup(context.Background(), telemetry.Options{Getenv: os.Getenv}); err == nil {
		t.Fatal("an unknown exporter was accepted")
	}
}

func TestOTLPExporterFromTheEnvironment(t *testing.T) {
	t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	s, stop, err := Setup(context.Background(), telemetry.Options{Getenv: env(map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "AWS_LAMBDA_FUNCTION_NAME": "baton-worker"})})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Provider.(noop.TracerProvider); ok {
		t.Fatal("otlp gave no tracer provider")
	}
	if err := stop(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestOTLPOverGRPCRefused: gRPC is not linked; asking for it is a clear
// start-up error that says what to set instead.
func TestOTLPOverGRPCRefused(t *testing.T) {
	t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	_, _, err := Setup(context.Background(), telemetry.Options{Getenv: os.Getenv})
	if err == nil || !strings.Contains(err.Error(), "http/protobuf") {
		t.Fatalf("grpc: %v", err)
	}
}
