package a2aserver_test

import (
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/a2aserver"
)

// TestTaskState: every run status's A2A task state; a run failed by an
// input guardrail is REJECTED, any other failure FAILED.
func TestTaskState(t *testing.T) {
	inputGuardrail := &core.RunError{Code: "guardrail", Message: "Input guardrail pii blocked the message"}
	cases := []struct {
		status core.RunStatus
		err    *core.RunError
		want   a2a.TaskState
	}{
		{core.StatusQueued, nil, a2a.TaskStateWorking},
		{core.StatusRunning, nil, a2a.TaskStateWorking},
		{core.StatusApprovalRequired, nil, a2a.TaskStateInputRequired},
		{core.StatusRuntimeToolPending, nil, a2a.TaskStateInputRequired},
		{core.StatusCompleted, nil, a2a.TaskStateCompleted},
		{core.StatusCancelled, nil, a2a.TaskStateCanceled},
		{core.StatusInterrupted, nil, a2a.TaskStateCanceled},
		{core.StatusFailed, nil, a2a.TaskStateFailed},
		{core.StatusFailed, &core.RunError{Code: "provider_error", Message: "503"}, a2a.TaskStateFailed},
		{core.StatusFailed, inputGuardrail, a2a.TaskStateRejected},
		{core.StatusFailed, &core.RunError{Code: "guardrail", Message: "Output guardrail pii blocked the answer"}, a2a.TaskStateFailed},
		{core.StatusFailed, &core.RunError{Code: "tool_error", Message: "Input guardrail pii blocked the message"}, a2a.TaskStateFailed},
		{core.StatusMaxTurnsReached, nil, a2a.TaskStateFailed},
		{core.StatusBudgetExceeded, nil, a2a.TaskStateFailed},
		{core.StatusStalled, nil, a2a.TaskStateFailed},
		{core.StatusTranscriptLockContention, nil, a2a.TaskStateFailed},
		// The status decides before the error does.
		{core.StatusCancelled, inputGuardrail, a2a.TaskStateCanceled},
		{core.StatusInterrupted, inputGuardrail, a2a.TaskStateCanceled},
	}
	for _, tc := range cases {
		name := string(tc.status)
		if tc.err != nil {
			name += " " + tc.err.Code + ": " + tc.err.Message
		}
		t.Run(name, func(t *testing.T) {
			if got := a2aserver.TaskState(tc.status, tc.err); got != tc.want {
				t.Fatalf("%s, want %s", got, tc.want)
			}
		})
	}
}
