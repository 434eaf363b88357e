package a2aserver

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/durable"
)

// AnswerArtifact is the id (and name) of a completed task's artifact:
// the run's final answer.
const AnswerArtifact = "answer"

// TaskState is the A2A state of a run in status s that ended with err
// (nil unless failed).
func TaskState(s core.RunStatus, err *core.RunError) a2a.TaskState {
	switch s {
	case core.StatusQueued, core.StatusRunning:
		// A run is queued between its steps too: it works. (A stream of
		// a new task opens with SUBMITTED.)
		return a2a.TaskStateWorking
	case core.StatusApprovalRequired, core.StatusRuntimeToolPending:
		return a2a.TaskStateInputRequired
	case core.StatusCompleted:
		return a2a.TaskStateCompleted
	case core.StatusCancelled, core.StatusInterrupted:
		return a2a.TaskStateCanceled
	}
	if err != nil && err.Code == "guardrail" && strings.HasPrefix(err.Message, "Input guardrail") {
		return a2a.TaskStateRejected
	}
	return a2a.TaskStateFailed
}

// taskOf is the A2A task of a run view: its status (with the pending
// items of a paused run, or the error of a failed one), its answer
// artifact once completed, and the last history messages of its session
// (all when history is nil, none when it is 0).
func taskOf(v durable.View, history *int) *a2a.Task {
	t := &a2a.Task{
		ID: a2a.TaskID(v.RunID), ContextID: v.SessionID,
		Status:   statusOf(v),
		Metadata: map[string]any{"baton": map[string]any{"run_id": v.RunID, "agent": v.Agent, "status": string(v.Status)}},
	}
	if v.Status == core.StatusCompleted {
		t.Artifacts = []*a2a.Artifact{answer(v.Result.FinalContent)}
	}
	t.History = historyOf(v, history)
	return t
}

// statusOf is the task status of a run view.
func statusOf(v durable.View) a2a.TaskStatus {
	at := v.UpdatedAt.UTC()
	s := a2a.TaskStatus{State: TaskState(v.Status, v.Result.Error), Timestamp: &at}
	info := a2a.TaskInfo{TaskID: a2a.TaskID(v.RunID), ContextID: v.SessionID}
	switch s.State {
	case a2a.TaskStateInputRequired:
		s.Message = a2a.NewMessageForTask(a2a.MessageRoleAgent, info,
			a2a.NewTextPart(pendingText(v.Pending)),
			a2a.NewDataPart(map[string]any{"baton": map[string]any{"status": string(v.Status), "pending": jsonValue(v.Pending)}}))
	case a2a.TaskStateFailed, a2a.TaskStateRejected:
		msg := fmt.Sprintf("The run ended %s.", v.Status)
		if e := v.Result.Error; e != nil {
			msg = e.Message
		}
		s.Message = a2a.NewMessageForTask(a2a.MessageRoleAgent, info, a2a.NewTextPart(msg))
	}
	if s.Message != nil {
		s.Message.ID = fmt.Sprintf("%s-status-%d", v.RunID, v.UpdatedAt.UnixMilli())
	}
	return s
}

// pendingText says what a paused run waits for, for a reader of the
// status message (the data part holds the items themselves).
func pendingText(p durable.PendingView) string {
	var parts []string
	for _, a := range p.Actions {
		parts = append(parts, fmt.Sprintf("approve or reject %s (action %s)", a.ToolName, a.ActionID))
	}
	for _, r := range p.ToolRequests {
		parts = append(parts, fmt.Sprintf("return the result of client tool %s (request %s)", r.ToolName, r.RequestID))
	}
	if len(parts) == 0 {
		return "The task waits for input."
	}
	return "The task waits for input: " + strings.Join(parts, "; ") + `. Answer with a message on this task whose data part is {"decision": "accept"|"reject"}, {"decisions": [...]} or {"tool_results": [...]}.`
}

// answer is the artifact of a final answer: its text, and its JSON
// value as a data part when the answer is a JSON object or array
// (structured output).
func answer(content string) *a2a.Artifact {
	parts := a2a.ContentParts{a2a.NewTextPart(content)}
	if s := strings.TrimSpace(content); strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[") {
		var v any
		if json.Unmarshal([]byte(s), &v) == nil {
			parts = append(parts, a2a.NewDataPart(v))
		}
	}
	return &a2a.Artifact{ID: AnswerArtifact, Name: AnswerArtifact, Parts: parts}
}

// historyOf is the session's user and assistant text messages, the last
// *n of them when n is set.
func historyOf(v durable.View, n *int) []*a2a.Message {
	if n != nil && *n == 0 {
		return nil
	}
	var out []*a2a.Message
	info := a2a.TaskInfo{TaskID: a2a.TaskID(v.RunID), ContextID: v.SessionID}
	for i, m := range v.Result.Messages {
		role := a2a.MessageRoleUser
		switch {
		case m.Role == core.RoleAssistant && m.Content != "":
			role = a2a.MessageRoleAgent
		case m.Role == core.RoleUser && m.Metadata[core.MetaSource] == core.MessagesMemory:
			continue // recalled memories: the model's context, not the conversation
		case m.Role == core.RoleUser:
		default:
			continue
		}
		msg := a2a.NewMessageForTask(role, info, a2a.NewTextPart(m.Content))
		msg.ID = fmt.Sprintf("%s-msg-%d", v.SessionID, i)
		if id, ok := m.Metadata["a2a_message_id"].(string); ok {
			msg.ID = id
		}
		out = append(out, msg)
	}
	if n != nil && len(out) > *n {
		out = out[len(out)-*n:]
	}
	return out
}

// jsonValue is v as plain JSON values (maps, slices), as a data part
// holds them.
func jsonValue(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// statusEvent is a status update of v's task; final marks the stream's
// last.
func statusEvent(v durable.View) *a2a.TaskStatusUpdateEvent {
	return &a2a.TaskStatusUpdateEvent{TaskID: a2a.TaskID(v.RunID), ContextID: v.SessionID, Status: statusOf(v)}
}

// workingEvent is a status update saying the task works, at at, with
// what it does as metadata (the Baton event).
func workingEvent(runID, sessionID string, at time.Time, ev core.Event) *a2a.TaskStatusUpdateEvent {
	at = at.UTC()
	return &a2a.TaskStatusUpdateEvent{
		TaskID: a2a.TaskID(runID), ContextID: sessionID,
		Status:   a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: &at},
		Metadata: map[string]any{"baton": map[string]any{"event": ev.Type, "seq": ev.Seq, "turn": ev.Turn}},
	}
}
