package core

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Remote agent tools (A2A). A server tool whose executor is a remote
// agent (ExecutorRemoteAgent) sends one message to that agent and follows
// the task it starts. A step follows the task for at most its executor's
// timeout; when the task is still working then, the call waits
// (CallAwaitingRemote, no step scheduled, a due time) and the scheduler
// schedules its step again when due (FollowRemote), so no worker holds
// on to a remote task. A task that asks for input becomes a client-tool
// request on the call (CallAwaitingClient with Remote.Question); the
// client's answer is sent to the task as a follow-up message and the call
// follows the task again. Core decides the statuses and due times;
// sending, recording and following are the runner's and the executor's.
const (
	// ExecutorRemoteAgent is the executor kind of a remote agent tool.
	ExecutorRemoteAgent = "a2a"
	// CallAwaitingRemote: the call's remote task is still working; its
	// step is scheduled again at Remote.DueAt.
	CallAwaitingRemote CallStatus = "awaiting_remote"
	// DecideAwaitRemote: the remote task (Decision.Remote) is still
	// working; follow it again after Decision.Wait.
	DecideAwaitRemote DecisionKind = "await_remote"
	// DecideRemoteInput: the remote task asks for input
	// (Decision.Remote.Question): a client-tool request on the call.
	DecideRemoteInput DecisionKind = "remote_input"
)

// RemoteTask is a call's task at a remote agent: what its steps follow.
type RemoteTask struct {
	TaskID    string `json:"task_id"`
	ContextID string `json:"context_id,omitempty"`
	// State is the task's last seen state, as the remote names it.
	State string `json:"state,omitempty"`
	// Follows counts the follow-ups scheduled since the last message was
	// sent (the runner's backoff); DueAt is when the next is due.
	Follows int        `json:"follows,omitempty"`
	DueAt   *time.Time `json:"due_at,omitempty"`
	// Question is what the task asked when it required input (the
	// arguments of the call's pending client-tool request); Rounds counts
	// those requests.
	Question map[string]any `json:"question,omitempty"`
	Rounds   int            `json:"rounds,omitempty"`
	// Asked identifies the remote status that asked the last question
	// (the executor's key: its message id and time), so a step that reads
	// the task before the remote took the answer does not ask it again.
	Asked string `json:"asked,omitempty"`
	// Reply is the client's answer to Question, still to be sent.
	Reply *RemoteReply `json:"reply,omitempty"`
}

// RemoteReply is a client's answer to a remote task's question: the
// follow-up message to send, whose MessageID is derived from the
// request's id, so a step run twice never sends it twice.
type RemoteReply struct {
	MessageID string `json:"message_id"`
	Result    any    `json:"result"`
}

// clone copies the task (its question and reply are shared: never
// changed in place).
func (r *RemoteTask) clone() *RemoteTask {
	if r == nil {
		return nil
	}
	cp := *r
	return &cp
}

// RemotePending is the output of a remote agent tool's executor whose
// task has not ended: still working, or asking for input (Question set).
// The runner turns it into DecideAwaitRemote or DecideRemoteInput.
type RemotePending struct {
	TaskID    string
	ContextID string
	State     string
	Question  map[string]any
	// Asked identifies the status that asked Question (RemoteTask.Asked).
	Asked string
}

// FollowRemote is the scheduler's notice that calls waiting for remote
// tasks are due: each due call's step is scheduled again. No due call is
// ErrNothingToApply; a finished run ErrTerminal.
type FollowRemote struct{}

func (FollowRemote) isInput() {}

// NextRemoteDue returns the earliest due time among calls waiting for
// remote tasks.
func (st *RunState) NextRemoteDue() (time.Time, bool) {
	var min time.Time
	found := false
	for _, c := range st.Calls {
		if c.Status == CallAwaitingRemote && c.Remote != nil && c.Remote.DueAt != nil {
			if !found || c.Remote.DueAt.Before(min) {
				min, found = *c.Remote.DueAt, true
			}
		}
	}
	return min, found
}

// ErrNotSent marks a remote agent tool's error that came before its
// message could reach the remote agent (its agent card could not be
// read, its connection was refused): the runner may try the call again
// as if it never ran.
var ErrNotSent = errors.New("the message was not sent")

// remoteSentKey is the context key of a remote-send observer.
type remoteSentKey struct{}

// WithRemoteSent returns a context that carries record: a remote agent
// tool's executor calls it (through NoteRemoteSent) right after its
// message was sent, before it follows the task, so the runner records
// the task in the call's intent and a later attempt never sends the
// message again.
func WithRemoteSent(ctx context.Context, record func(RemoteSent) error) context.Context {
	return context.WithValue(ctx, remoteSentKey{}, record)
}

// NoteRemoteSent calls the observer ctx carries (nil when none): an
// error means the send could not be recorded, and the executor stops.
func NoteRemoteSent(ctx context.Context, s RemoteSent) error {
	record, _ := ctx.Value(remoteSentKey{}).(func(RemoteSent) error)
	if record == nil {
		return nil
	}
	return record(s)
}

// awaitRemote parks a call whose remote task still works until wait from
// now.
func (t *transition) awaitRemote(c *CallState, d Decision) error {
	if d.Remote == nil || d.Remote.TaskID == "" {
		return invalid("await_remote needs the remote task")
	}
	r := c.Remote.clone()
	if r == nil {
		r = &RemoteTask{}
	} else if r.TaskID != d.Remote.TaskID && r.TaskID != "" {
		return invalid("call %q follows task %q, not %q", c.ID, r.TaskID, d.Remote.TaskID)
	}
	due := t.now.Add(max(d.Wait, 0))
	r.TaskID, r.ContextID, r.State = d.Remote.TaskID, d.Remote.ContextID, d.Remote.State
	if r.Reply != nil {
		r.Follows = 0 // a message was just sent: the backoff starts again
	}
	r.Follows++
	r.DueAt, r.Reply, r.Question = &due, nil, nil
	c.Remote = r
	c.Status = CallAwaitingRemote
	return nil
}

// remoteInput turns a remote task's request for input into a client-tool
// request on the call, whose arguments are the question.
func (t *transition) remoteInput(c *CallState, d Decision) error {
	if d.Remote == nil || d.Remote.TaskID == "" {
		return invalid("remote_input needs the remote task")
	}
	r := c.Remote.clone()
	if r == nil {
		r = &RemoteTask{}
	}
	r.TaskID, r.ContextID, r.State = d.Remote.TaskID, d.Remote.ContextID, d.Remote.State
	r.Rounds++
	r.Follows, r.DueAt, r.Reply = 0, nil, nil
	q := cloneObject(d.Remote.Question)
	if q == nil {
		q = map[string]any{}
	}
	q["task_id"] = r.TaskID
	r.Question, r.Asked = q, d.Remote.Asked
	c.Remote = r
	exp := t.now.Add(time.Duration(t.st.Config.PendingTTL))
	c.Status = CallAwaitingClient
	c.RequestID = derivedID("treq", t.st.RunID, fmt.Sprintf("%s/%d", c.ID, r.Rounds))
	c.ExpiresAt = &exp
	t.emit(EventRuntimeToolPending, &RuntimeToolPendingData{RequestID: c.RequestID, ToolCallID: c.ID, ToolName: c.Name,
		Parameters: RedactedParameters(q), ExpiresAt: exp.Format(time.RFC3339Nano)})
	return nil
}

// remoteAnswered takes a client's answer to a remote task's question:
// it is to be sent to the task, and the call's step is scheduled to send
// it and follow the task again.
func (t *transition) remoteAnswered(c *CallState, in ClientResult) {
	r := c.Remote.clone()
	r.Reply = &RemoteReply{MessageID: derivedID("msg", t.st.RunID, c.RequestID), Result: in.Result}
	r.Question = nil
	c.Remote = r
	c.Status = CallPending
	c.ExpiresAt = nil
	c.StepSeq = t.schedule(StepToolCall, c.ID)
}

// followRemote schedules the step of every call whose remote task is due.
func (t *transition) followRemote(ctx context.Context) error {
	if IsTerminal(t.st.Status) {
		return ErrTerminal
	}
	n := 0
	for i := range t.st.Calls {
		c := &t.st.Calls[i]
		if c.Status != CallAwaitingRemote || c.Remote == nil || c.Remote.DueAt == nil || t.now.Before(*c.Remote.DueAt) {
			continue
		}
		r := c.Remote.clone()
		r.DueAt = nil
		c.Remote = r
		c.Status = CallPending
		c.StepSeq = t.schedule(StepToolCall, c.ID)
		n++
	}
	if n == 0 {
		return ErrNothingToApply
	}
	t.settle(ctx)
	return nil
}

// DefaultRemoteAgentParameters is the parameter schema of a remote agent
// tool that declares none: one message, sent as a text part (declared
// parameters are sent as one data part).
func DefaultRemoteAgentParameters() map[string]any {
	return map[string]any{
		"type":     "object",
		"required": []any{"message"},
		"properties": map[string]any{
			"message": map[string]any{"type": "string", "description": "The message to the agent, stated fully: it sees nothing else of this conversation."},
		},
		"additionalProperties": false,
	}
}

// RemoteCancel is the outbox record that asks remote agents to cancel the
// tasks of calls a run gave up on (AbandonedRemoteTasks): the run was
// cancelled, interrupted or stopped, or a call's question expired, while
// the remote agent still worked on the call's task.
type RemoteCancel struct {
	Tenant string `json:"tenant"`
	// Agent is the run's agent, whose tools the calls are.
	Agent string          `json:"agent"`
	Tasks []AbandonedTask `json:"tasks"`
	// Attempts counts the failed deliveries; LastError is the last one's.
	Attempts  int    `json:"attempts,omitempty"`
	LastError string `json:"last_error,omitempty"`
}

// AbandonedTask is the remote task of a call a run gave up on.
type AbandonedTask struct {
	ToolCallID string `json:"tool_call_id"`
	ToolName   string `json:"tool_name"`
	TaskID     string `json:"task_id"`
}

// RemoteTaskCanceller is implemented by a remote agent tool's executor:
// it asks the remote agent to cancel a task. A task that already ended,
// or that the remote agent does not know, is not an error.
type RemoteTaskCanceller interface {
	CancelTask(ctx context.Context, tenant, taskID string) error
}

// AbandonedRemoteTasks lists the remote tasks the transition from prev
// to out gave up on: a call that followed a task the remote agent had not
// ended (working, or asking for input) and that out resolved without the
// task's end: the run was cancelled, interrupted or stopped, the task's
// question expired or the client answered it with a failure. The remote
// agent would otherwise work on for nothing. A result the call's own step
// brought (the executor read the task's end) is not giving up.
func AbandonedRemoteTasks(prev RunState, out Output) []AbandonedTask {
	var abandoned []AbandonedTask
	for i := range prev.Calls {
		// A call's Remote only ever holds a task that had not ended (the
		// executor's result resolves the call when it has).
		p := &prev.Calls[i]
		if p.Remote == nil || p.Remote.TaskID == "" {
			continue
		}
		res := resultIn(out, p.ID)
		switch {
		case res == nil:
			continue
		case p.Status == CallAwaitingRemote || p.Status == CallAwaitingClient:
			// No step of the call was in flight: whatever resolved it is
			// not the task's end.
		case p.Status == CallPending && IsTerminal(out.State.Status) && (res.ErrorType == ErrTypeCancelled || res.ErrorType == ErrTypeSkipped):
			// Its step may have been reading the task's end; the run
			// closed the call as it ended.
		default:
			continue
		}
		abandoned = append(abandoned, AbandonedTask{ToolCallID: p.ID, ToolName: p.Name, TaskID: p.Remote.TaskID})
	}
	return abandoned
}

// resultIn is the result out gave the call id: in its state, or among
// the results it recorded (nil: none).
func resultIn(out Output, id string) *ToolResult {
	if _, c := out.State.call(id); c != nil && (c.Status == CallDone || c.Status == CallResolved) {
		return c.Result
	}
	for i := range out.ToolResults {
		if out.ToolResults[i].ToolCallID == id {
			return &out.ToolResults[i].Result
		}
	}
	return nil
}
