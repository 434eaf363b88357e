package telemetry

import (
	"context"
	"testing"
)

func TestExtractInjectRoundTrip(t *testing.T) {
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	ctx := Extract(context.Background(), map[string]string{"TraceParent": tp, "X-Other": "1"})
	if got := Inject(ctx); got != tp {
		t.Fatalf("inject = %q", got)
	}
	if got := Inject(Extract(context.Background(), map[string]string{"traceparent": "garbage"})); got != "" {
		t.Fatalf("a malformed traceparent was kept: %q", got)
	}
}
