// Package spans is the one feature the API function links: the
// OpenTelemetry span exporter (internal/telemetry/otelsetup), without the
// model providers and the MCP client of internal/features.
package spans

import (
	"github.com/baton-agents/baton/internal/app"
	"github.com/baton-agents/baton/internal/telemetry/otelsetup"
)

// Export is the API's features: spans exported as the OTEL_* variables
// say.
var Export = app.Features{Tracing: otelsetup.Setup}
