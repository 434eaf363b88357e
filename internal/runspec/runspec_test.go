package runspec

import (
	"fmt"
	"testing"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/durable"
)

// TestClassify: each error the runner, the agents or core return maps to
// its status and code; anything else is a 500 that says nothing more.
func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err    error
		status int
		code   string
	}{
		{&agents.CallbackError{Code: "callback_host_not_allowed", Message: "host evil.example is not allowed"}, 400, "callback_host_not_allowed"},
		{fmt.Errorf("start: %w", &agents.CallbackError{Code: "invalid_callback", Message: "bad url"}), 400, "invalid_callback"},
		{&agents.OverrideError{Field: "callback"}, 400, "override_not_allowed"},
		{fmt.Errorf("x: %w", durable.ErrUnknownAgent), 400, "unknown_agent"},
		{durable.ErrSessionBusy, 409, "transcript_lock_contention"},
		{fmt.Errorf("%w: max_turns", core.ErrInvalidInput), 400, "invalid_request"},
		{core.ErrNotFound, 404, "not_found"},
		{Errorf(413, "too_large", "body"), 413, "too_large"},
		{fmt.Errorf("disk on fire"), 500, "internal"},
	} {
		got := Classify(tc.err)
		if got.Status != tc.status || got.Code != tc.code {
			t.Errorf("%v: %d %s, want %d %s", tc.err, got.Status, got.Code, tc.status, tc.code)
		}
		if tc.status == 500 && got.Message != "internal error" {
			t.Errorf("a 500 says %q", got.Message)
		}
	}
}
