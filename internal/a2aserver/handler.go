package a2aserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/runspec"
)

// Scopes the methods need beyond the route's (runs:read or runs:write,
// checked before the request reaches this package).
const (
	ScopeRunsWrite      = "runs:write"
	ScopeResultsSubmit  = "results:submit"
	ScopeApprovalDecide = "approvals:decide"
)

// Handler serves the A2A edge over a runner.
type Handler struct {
	Runner    *durable.Runner
	Validator runspec.Validator
	Log       *slog.Logger
	// MaxWait bounds how long a blocking SendMessage waits for the task
	// to finish or ask for input before it answers with the task as it
	// is (still working).
	MaxWait time.Duration
	// MaxViewBytes bounds the run view a task is built from.
	MaxViewBytes int
}

// Caller is who calls, on which agent: set by the HTTP edge once it
// authenticated the request.
type Caller struct {
	Tenant    string
	Principal *core.Principal
	// Scopes are the caller's scopes.
	Scopes []string
	// Agent is the route's agent, an A2A-enabled one.
	Agent string
	// StreamMax bounds a stream; the client resubscribes after it.
	StreamMax time.Duration
}

type callerKey struct{}

func callerOf(ctx context.Context) Caller {
	c, _ := ctx.Value(callerKey{}).(Caller)
	return c
}

// requestHandler is the a2asrv.RequestHandler of one request: its
// caller rides in the context.
type requestHandler struct{ h Handler }

var _ a2asrv.RequestHandler = requestHandler{}

// Versions are the A2A protocol versions served. A request's A2A-Version
// header, when sent, must name one of them (a major.minor, "1.0"; "1"
// is read as 1.0).
var Versions = []string{"1.0"}

// checkVersion refuses a request whose A2A-Version header names a
// version this server does not speak.
func checkVersion(ctx context.Context) error {
	cc, ok := a2asrv.CallContextFrom(ctx)
	if !ok {
		return nil
	}
	vs, ok := cc.ServiceParams().Get(a2a.SvcParamVersion)
	if !ok || len(vs) == 0 || strings.TrimSpace(vs[0]) == "" {
		return nil
	}
	v := strings.TrimSpace(vs[0])
	if v == "1" || slices.Contains(Versions, v) {
		return nil
	}
	return a2a.NewError(a2a.ErrVersionNotSupported, fmt.Sprintf("A2A-Version %s is not supported; this server speaks %s", v, strings.Join(Versions, ", ")))
}

// rpcError maps a runner, core or runspec error to the A2A error the
// client gets: a request that cannot succeed as written is invalid
// params, a run that does not exist (or is another tenant's or another
// agent's) is task not found, a request that conflicts with the task's
// state is unsupported operation, anything else an internal error
// (logged; its text never reaches the client).
func (h Handler) rpcError(ctx context.Context, err error) error {
	var ae *a2a.Error
	if errors.As(err, &ae) || errors.Is(err, a2a.ErrTaskNotFound) || errors.Is(err, a2a.ErrInvalidParams) {
		return err
	}
	e := runspec.Classify(err)
	switch {
	case e.Status == http.StatusNotFound:
		return a2a.NewError(a2a.ErrTaskNotFound, "task not found")
	case e.Status == http.StatusConflict:
		return a2a.NewError(a2a.ErrUnsupportedOperation, e.Message).WithDetails(map[string]any{"code": e.Code})
	case e.Status == http.StatusTooManyRequests:
		return a2a.NewError(a2a.ErrServerError, e.Message).WithDetails(map[string]any{"code": e.Code})
	case e.Status < 500:
		return a2a.NewError(a2a.ErrInvalidParams, e.Message).WithDetails(map[string]any{"code": e.Code})
	}
	if h.Log != nil {
		h.Log.ErrorContext(ctx, "a2a request failed", "err", err)
	}
	return a2a.NewError(a2a.ErrInternalError, "internal error")
}

// task loads the caller's run id as a task of the route's agent.
func (h Handler) load(ctx context.Context, id a2a.TaskID) (durable.Snapshot, error) {
	c := callerOf(ctx)
	if id == "" {
		return durable.Snapshot{}, a2a.NewError(a2a.ErrInvalidParams, "id (the task id) is required")
	}
	snap, err := h.Runner.Get(ctx, c.Tenant, string(id))
	if errors.Is(err, core.ErrNotFound) || err == nil && snap.State.Config.Agent != c.Agent {
		return durable.Snapshot{}, a2a.NewError(a2a.ErrTaskNotFound, fmt.Sprintf("task %s not found", shortID(id)))
	}
	if err != nil {
		return durable.Snapshot{}, h.rpcError(ctx, err)
	}
	return snap, nil
}

// view is the run view of snap.
func (h Handler) view(ctx context.Context, snap durable.Snapshot) (durable.View, error) {
	v, err := h.Runner.View(ctx, snap, h.MaxViewBytes)
	if err != nil {
		return durable.View{}, h.rpcError(ctx, err)
	}
	return v, nil
}

func (h Handler) task(ctx context.Context, snap durable.Snapshot, history *int) (*a2a.Task, error) {
	v, err := h.view(ctx, snap)
	if err != nil {
		return nil, err
	}
	return taskOf(v, history), nil
}

func checkHistory(n *int) error {
	if n != nil && *n < 0 {
		return a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf("historyLength must be 0 or more, got %d", *n))
	}
	return nil
}

func (r requestHandler) GetTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	if err := checkVersion(ctx); err != nil {
		return nil, err
	}
	if err := checkHistory(req.HistoryLength); err != nil {
		return nil, err
	}
	snap, err := r.h.load(ctx, req.ID)
	if err != nil {
		return nil, err
	}
	return r.h.task(ctx, snap, req.HistoryLength)
}

func (r requestHandler) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	if err := checkVersion(ctx); err != nil {
		return nil, err
	}
	snap, err := r.h.load(ctx, req.ID)
	if err != nil {
		return nil, err
	}
	if core.IsTerminal(snap.State.Status) {
		return nil, a2a.NewError(a2a.ErrTaskNotCancelable, fmt.Sprintf("task %s is %s", req.ID, TaskState(snap.State.Status, snap.State.Error)))
	}
	reason, _ := req.Metadata["reason"].(string)
	c := callerOf(ctx)
	snap, err = r.h.Runner.Apply(ctx, c.Tenant, string(req.ID), core.Cancel{Reason: cmp.Or(reason, "cancelled over A2A")})
	if errors.Is(err, durable.ErrFinished) {
		return nil, a2a.NewError(a2a.ErrTaskNotCancelable, fmt.Sprintf("task %s has ended", req.ID))
	}
	if err != nil {
		return nil, r.h.rpcError(ctx, err)
	}
	return r.h.task(ctx, snap, nil)
}

func (r requestHandler) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	if err := checkVersion(ctx); err != nil {
		return nil, err
	}
	snap, _, err := r.h.send(ctx, req)
	if err != nil {
		return nil, err
	}
	var history *int
	if req.Config != nil {
		history = req.Config.HistoryLength
		if !req.Config.ReturnImmediately {
			snap, err = r.h.wait(ctx, snap)
		}
	} else {
		snap, err = r.h.wait(ctx, snap)
	}
	if err != nil {
		return nil, err
	}
	return r.h.task(ctx, snap, history)
}

// wait waits until the run finishes or pauses, or MaxWait passes.
func (h Handler) wait(ctx context.Context, snap durable.Snapshot) (durable.Snapshot, error) {
	if ends(snap.State.Status) || h.MaxWait <= 0 {
		return snap, nil
	}
	c := callerOf(ctx)
	out, err := h.Runner.Wait(ctx, c.Tenant, snap.State.RunID, h.MaxWait)
	if err != nil {
		return durable.Snapshot{}, h.rpcError(ctx, err)
	}
	return out, nil
}

func (r requestHandler) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if err := checkVersion(ctx); err != nil {
			yield(nil, err)
			return
		}
		snap, after, err := r.h.send(ctx, req)
		if err != nil {
			yield(nil, err)
			return
		}
		r.h.follow(ctx, snap, after, yield)
	}
}

func (r requestHandler) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if err := checkVersion(ctx); err != nil {
			yield(nil, err)
			return
		}
		snap, err := r.h.load(ctx, req.ID)
		if err != nil {
			yield(nil, err)
			return
		}
		if core.IsTerminal(snap.State.Status) {
			yield(nil, a2a.NewError(a2a.ErrUnsupportedOperation, fmt.Sprintf("task %s has ended (%s): get it with GetTask", req.ID, TaskState(snap.State.Status, snap.State.Error))))
			return
		}
		r.h.follow(ctx, snap, snap.State.NextEventSeq-1, yield)
	}
}

func (r requestHandler) ListTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	if err := checkVersion(ctx); err != nil {
		return nil, err
	}
	return r.h.list(ctx, req)
}

func (r requestHandler) GetExtendedAgentCard(ctx context.Context, _ *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	if err := checkVersion(ctx); err != nil {
		return nil, err
	}
	return nil, a2a.NewError(a2a.ErrExtendedCardNotConfigured, "this agent has no extended card: its public card is all there is")
}

func ends(s core.RunStatus) bool {
	return core.IsTerminal(s) || s == core.StatusApprovalRequired || s == core.StatusRuntimeToolPending
}
