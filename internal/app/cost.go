package app

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/baton-agents/baton/internal/cost"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/telemetry"
)

// pricing is the price table of cfg's region with the operator's prices
// file (BATON_PRICES) applied, and, on the AWS stores, the metering of
// steps' AWS requests (the worker's memory from Lambda's
// AWS_LAMBDA_FUNCTION_MEMORY_SIZE, default 1024 MB). The embedded stores
// make no AWS requests: their runs cost their model calls only.
func pricing(cfg Config) (*cost.Table, *durable.Metering, error) {
	get := func(k string) string { v, _ := cfg.Env(k); return v }
	region := cfg.Region
	if region == "" {
		region = "us-east-1"
	}
	t, err := cost.NewTable(region, get("BATON_PRICES"))
	if err != nil {
		return nil, nil, fmt.Errorf("BATON_PRICES: %w", err)
	}
	if cfg.Stores.Memory {
		return t, nil, nil
	}
	m := &durable.Metering{}
	if v := get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE"); v != "" {
		if m.LambdaMemoryMB, err = strconv.Atoi(v); err != nil || m.LambdaMemoryMB <= 0 {
			return nil, nil, fmt.Errorf("AWS_LAMBDA_FUNCTION_MEMORY_SIZE: want a positive number of MB, got %q", v)
		}
	}
	return t, m, nil
}

// tracing sets up OpenTelemetry traces (internal/telemetry): the
// exporter OTEL_TRACES_EXPORTER names (none by default), or the console
// with OTelConsole.
func tracing(ctx context.Context, cfg Config, deps Deps) (telemetry.Settings, func(context.Context) error, error) {
	get := func(k string) string { v, _ := cfg.Env(k); return v }
	out := deps.LogOutput
	if out == nil {
		out = os.Stderr
	}
	service := get("AWS_LAMBDA_FUNCTION_NAME")
	if service == "" {
		service = "baton"
	}
	if deps.TracerProvider != nil {
		s := telemetry.Defaults(get)
		s.Provider = deps.TracerProvider
		return s, func(context.Context) error { return nil }, nil
	}
	if deps.Features.Tracing == nil {
		if cfg.OTelConsole {
			return telemetry.Settings{}, nil, fmt.Errorf("--otel-console: this build links no span exporter")
		}
		return telemetry.Defaults(get), func(context.Context) error { return nil }, nil
	}
	return deps.Features.Tracing(ctx, telemetry.Options{Getenv: get, Console: cfg.OTelConsole, ConsoleOut: out, Service: service})
}

// metrics is where the runner writes CloudWatch EMF lines: stdout in a
// Lambda (the log stream CloudWatch extracts them from), nowhere
// elsewhere, unless BATON_METRICS says emf (stdout) or none.
func metrics(cfg Config) (*durable.EMF, error) {
	v, _ := cfg.Env("BATON_METRICS")
	_, lambda := cfg.Env("AWS_LAMBDA_FUNCTION_NAME")
	switch v {
	case "emf":
		return durable.NewEMF(os.Stdout), nil
	case "none":
		return nil, nil
	case "":
		if lambda {
			return durable.NewEMF(os.Stdout), nil
		}
		return nil, nil
	}
	return nil, fmt.Errorf("BATON_METRICS: want emf or none, got %q", v)
}
