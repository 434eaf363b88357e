// Package spans is the API function's features: the OpenTelemetry span
// exporter (internal/telemetry/otelsetup) and the EventBridge Scheduler
// client of its schedules (internal/schedules/eventbridge), without the
// model providers and the MCP client of internal/features.
package spans

import (
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/app"
	"github.com/baton-agents/baton/internal/schedules/eventbridge"
	"github.com/baton-agents/baton/internal/telemetry/otelsetup"
)

// Export is the API's features: spans exported as the OTEL_* variables
// say, and each schedule kept as an EventBridge Scheduler schedule.
var Export = app.Features{Tracing: otelsetup.Setup, Scheduler: Scheduler}

// Scheduler keeps schedules on EventBridge Scheduler, in group, sending
// to the intake queue queueARN as roleARN.
func Scheduler(cfg aws.Config, group, roleARN, queueARN string) core.Scheduler {
	return eventbridge.New(cfg, group, roleARN, queueARN)
}
