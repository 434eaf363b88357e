package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// envelope is the part of the result envelope (core.Envelope) the demo
// test reads; the mains import no module package but internal/app.
type envelope struct {
	Status          string            `json:"status"`
	Completed       bool              `json:"completed"`
	TurnCount       int               `json:"turn_count"`
	ToolAuditEvents []json.RawMessage `json:"tool_audit_events"`
	Events          []struct {
		Type string `json:"type"`
	} `json:"events"`
}

func TestDemoRunsToCompletion(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"demo", "-quiet"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var env envelope
	if err := json.Unmarshal(out.Bytes(), &env); err != nil {
		t.Fatalf("output is not an envelope: %v\n%s", err, out.String())
	}
	if env.Status != "completed" || !env.Completed || env.TurnCount != 4 || len(env.ToolAuditEvents) != 3 {
		t.Fatalf("status %s completed %v turns %d audits %d", env.Status, env.Completed, env.TurnCount, len(env.ToolAuditEvents))
	}
	for _, want := range []string{"runtime_tool_pending", "approval_required", "approval_decided"} {
		found := false
		for _, ev := range env.Events {
			found = found || ev.Type == want
		}
		if !found {
			t.Errorf("event %s missing", want)
		}
	}
}

func TestUnknownCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"nope"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "unknown command") {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
}
