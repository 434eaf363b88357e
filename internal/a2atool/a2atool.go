package a2atool

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/secrets"
	"github.com/baton-agents/baton/internal/toolspec"
)

// DefaultTimeout is how long one step follows a remote task when the
// executor sets no timeout.
const DefaultTimeout = 20 * time.Second

// Options configures the executors of one process. Every field is
// optional.
type Options struct {
	// Secrets resolves the bearer tokens; nil means tokens from the
	// environment only.
	Secrets *secrets.Resolver
	// HTTPClient sends the requests (nil: a client on
	// http.DefaultTransport).
	HTTPClient *http.Client
	// Poll is the first wait between two reads of a task within a step
	// (default 250ms), doubling up to 2s.
	Poll time.Duration
}

// Factory returns the factory of a2a executors, for
// executors.NewRouter: each executor is built once, at cold start; its
// agent card is read at its first call.
func Factory(o Options) func(tool string, ex toolspec.Executor) (core.ToolExecutor, error) {
	if o.Secrets == nil {
		o.Secrets = secrets.New(secrets.Options{})
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	if o.Poll <= 0 {
		o.Poll = 250 * time.Millisecond
	}
	return func(tool string, ex toolspec.Executor) (core.ToolExecutor, error) { return New(tool, ex, o) }
}

// Executor is one remote agent tool.
type Executor struct {
	tool    string
	card    *url.URL
	ref     secrets.Ref
	timeout time.Duration
	o       Options

	mu      sync.Mutex
	clients map[string]*a2aclient.Client // by tenant ("" when the token is not per tenant)
}

var _ core.ToolExecutor = (*Executor)(nil)

// New builds the executor of tool from its configuration (type a2a).
func New(tool string, ex toolspec.Executor, o Options) (*Executor, error) {
	if ex.Type != toolspec.TypeA2A {
		return nil, fmt.Errorf("a2a executor: type is %q", ex.Type)
	}
	u, err := url.Parse(ex.CardURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("a2a executor: card_url %q is not a URL", ex.CardURL)
	}
	d := DefaultTimeout
	if ex.Timeout != "" {
		if d, err = time.ParseDuration(ex.Timeout); err != nil || d <= 0 {
			return nil, fmt.Errorf("a2a executor: timeout: want a positive Go duration, got %q", ex.Timeout)
		}
	}
	return &Executor{tool: tool, card: u, ref: ex.SecretRef(), timeout: d, o: o, clients: map[string]*a2aclient.Client{}}, nil
}

// Execute sends the call's message (the first one, or the client's
// answer call.Remote.Reply) unless the call's task is known, then follows
// the task for at most the executor's timeout.
func (x *Executor) Execute(ctx context.Context, call core.ToolCall) (any, error) {
	c, err := x.client(ctx, call.Tenant)
	if err != nil {
		return nil, err
	}
	r := call.Remote
	var task *a2a.Task
	switch {
	case r == nil || r.TaskID == "":
		msg := &a2a.Message{ID: call.Key(), Role: a2a.MessageRoleUser, Parts: firstParts(call)}
		res, err := x.send(ctx, c, msg)
		if err != nil {
			return nil, err
		}
		if m, ok := res.(*a2a.Message); ok {
			// Answered at once, without a task.
			return completed("", nil, m), nil
		}
		task = res.(*a2a.Task)
	case r.Reply != nil:
		msg := &a2a.Message{ID: r.Reply.MessageID, Role: a2a.MessageRoleUser, TaskID: a2a.TaskID(r.TaskID), ContextID: r.ContextID, Parts: replyParts(r.Reply.Result)}
		res, err := x.send(ctx, c, msg)
		if err != nil {
			return nil, err
		}
		if m, ok := res.(*a2a.Message); ok {
			return completed(r.TaskID, nil, m), nil
		}
		task = res.(*a2a.Task)
	default:
		if task, err = x.get(ctx, c, r.TaskID); err != nil {
			return nil, err
		}
	}
	return x.follow(ctx, c, call, task)
}

// send sends msg, returning immediately with the task it started or
// continued, and has the runner record that task before anything else.
func (x *Executor) send(ctx context.Context, c *a2aclient.Client, msg *a2a.Message) (a2a.SendMessageResult, error) {
	rctx, cancel := context.WithTimeout(ctx, x.timeout)
	defer cancel()
	res, err := c.SendMessage(rctx, &a2a.SendMessageRequest{Message: msg, Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		return nil, x.transportError("send message "+msg.ID, err)
	}
	switch res := res.(type) {
	case *a2a.Task:
		if res.ID == "" {
			return nil, core.Retryable(fmt.Errorf("a2a tool %s: the remote agent at %s answered message %s with a task without an id", x.tool, x.card, msg.ID))
		}
		if err := core.NoteRemoteSent(ctx, core.RemoteSent{TaskID: string(res.ID), ContextID: res.ContextID}); err != nil {
			return nil, core.Retryable(err)
		}
		return res, nil
	case *a2a.Message:
		return res, nil
	}
	return nil, core.Retryable(fmt.Errorf("a2a tool %s: the remote agent at %s answered message %s with neither a task nor a message", x.tool, x.card, msg.ID))
}

// get reads a task.
func (x *Executor) get(ctx context.Context, c *a2aclient.Client, id string) (*a2a.Task, error) {
	rctx, cancel := context.WithTimeout(ctx, x.timeout)
	defer cancel()
	t, err := c.GetTask(rctx, &a2a.GetTaskRequest{ID: a2a.TaskID(id)})
	if err != nil {
		return nil, x.transportError("get task "+id, err)
	}
	return t, nil
}

// follow reads the task until it ends, asks for input or the executor's
// timeout is up.
func (x *Executor) follow(ctx context.Context, c *a2aclient.Client, call core.ToolCall, t *a2a.Task) (any, error) {
	end := time.Now().Add(x.timeout)
	wait := x.o.Poll
	for {
		switch t.Status.State {
		case a2a.TaskStateCompleted:
			return completed(string(t.ID), t, t.Status.Message), nil
		case a2a.TaskStateFailed, a2a.TaskStateRejected, a2a.TaskStateCanceled, a2a.TaskStateAuthRequired:
			return failed(t), nil
		case a2a.TaskStateInputRequired:
			// A status already answered is the remote not having taken
			// the answer yet: it works on.
			if asked := statusKey(t); call.Remote == nil || asked != call.Remote.Asked {
				return &core.RemotePending{TaskID: string(t.ID), ContextID: t.ContextID, State: string(t.Status.State), Question: question(t.Status.Message), Asked: asked}, nil
			}
		}
		if time.Now().Add(wait).After(end) {
			return &core.RemotePending{TaskID: string(t.ID), ContextID: t.ContextID, State: string(t.Status.State)}, nil
		}
		select {
		case <-ctx.Done():
			return nil, core.Retryable(fmt.Errorf("a2a tool %s: following task %s: %w", x.tool, t.ID, ctx.Err()))
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
		next, err := x.get(ctx, c, string(t.ID))
		if err != nil {
			return nil, err
		}
		t = next
	}
}

// CancelTask asks the remote agent to cancel task taskID of tenant's
// call (core.RemoteTaskCanceller). A task that already ended (A2A's
// TaskNotCancelable) or that the agent does not know (TaskNotFound) is
// done with.
func (x *Executor) CancelTask(ctx context.Context, tenant, taskID string) error {
	c, err := x.client(ctx, tenant)
	if err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, x.timeout)
	defer cancel()
	_, err = c.CancelTask(rctx, &a2a.CancelTaskRequest{ID: a2a.TaskID(taskID)})
	if err == nil || errors.Is(err, a2a.ErrTaskNotCancelable) || errors.Is(err, a2a.ErrTaskNotFound) {
		return nil
	}
	return x.transportError("cancel task "+taskID, err)
}

var _ core.RemoteTaskCanceller = (*Executor)(nil)

// statusKey identifies a task's status: its message's id and its time.
func statusKey(t *a2a.Task) string {
	var id, at string
	if t.Status.Message != nil {
		id = t.Status.Message.ID
	}
	if t.Status.Timestamp != nil {
		at = t.Status.Timestamp.UTC().Format(time.RFC3339Nano)
	}
	return id + "@" + at
}

// transportError is a retryable error of a request to the agent, marked
// core.ErrNotSent when the connection was refused (nothing reached it).
func (x *Executor) transportError(what string, err error) error {
	err = fmt.Errorf("a2a tool %s: %s to the remote agent of %s: %w (is the agent up and reachable?)", x.tool, what, x.card, err)
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		err = fmt.Errorf("%w: %w", core.ErrNotSent, err)
	}
	return core.Retryable(err)
}

// client is the A2A client of tenant's calls: the agent card is read
// (with the bearer token, if any) at the first call and kept.
func (x *Executor) client(ctx context.Context, tenant string) (*a2aclient.Client, error) {
	if !x.ref.PerTenant() {
		tenant = ""
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if c, ok := x.clients[tenant]; ok {
		return c, nil
	}
	hc := x.o.HTTPClient
	var opts []agentcard.ResolveOption
	if x.ref != (secrets.Ref{}) {
		tok, err := x.o.Secrets.Resolve(ctx, x.ref, tenant)
		if err != nil {
			return nil, core.Retryable(fmt.Errorf("%w: a2a tool %s: bearer token (%s): %w", core.ErrNotSent, x.tool, x.ref.Source(), err))
		}
		bearer := "Bearer " + strings.TrimSpace(string(tok))
		hc = &http.Client{Timeout: hc.Timeout, Transport: authorized{next: hc.Transport, value: bearer}}
		opts = append(opts, agentcard.WithRequestHeader("Authorization", bearer))
	}
	base := &url.URL{Scheme: x.card.Scheme, Host: x.card.Host}
	opts = append(opts, agentcard.WithPath(x.card.EscapedPath()))
	card, err := agentcard.NewResolver(hc).Resolve(ctx, base.String(), opts...)
	if err != nil {
		return nil, core.Retryable(fmt.Errorf("%w: a2a tool %s: read the agent card %s: %w (check card_url and that the agent is up)", core.ErrNotSent, x.tool, x.card, err))
	}
	c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(hc), a2aclient.WithRESTTransport(hc))
	if err != nil {
		return nil, core.Retryable(fmt.Errorf("%w: a2a tool %s: the agent card %s offers no transport this client speaks (JSON-RPC or HTTP+JSON, A2A 1.0): %w", core.ErrNotSent, x.tool, x.card, err))
	}
	x.clients[tenant] = c
	return c, nil
}

// authorized adds the bearer token to every request.
type authorized struct {
	next  http.RoundTripper
	value string
}

func (a authorized) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", a.value)
	next := a.next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(r)
}

// firstParts is the call's first message: the message parameter as a
// text part when the tool declares the default parameters, otherwise
// the parameters as one data part.
func firstParts(call core.ToolCall) a2a.ContentParts {
	if isDefault(call.Declaration.Parameters) {
		if s, ok := call.Parameters["message"].(string); ok {
			return a2a.ContentParts{a2a.NewTextPart(s)}
		}
	}
	return a2a.ContentParts{a2a.NewDataPart(call.Parameters)}
}

// isDefault reports whether params are core.DefaultRemoteAgentParameters.
func isDefault(params map[string]any) bool {
	a, _ := core.CanonicalJSON(params)
	b, _ := core.CanonicalJSON(core.DefaultRemoteAgentParameters())
	return string(a) == string(b)
}

// replyParts is a client's answer: a string as a text part, anything
// else as a data part.
func replyParts(v any) a2a.ContentParts {
	if s, ok := v.(string); ok {
		return a2a.ContentParts{a2a.NewTextPart(s)}
	}
	return a2a.ContentParts{a2a.NewDataPart(v)}
}

// question is a task's request for input: its status message's text,
// and its data parts when it has any.
func question(m *a2a.Message) map[string]any {
	q := map[string]any{"question": ""}
	if m == nil {
		return q
	}
	text, data := split(m.Parts)
	q["question"] = strings.Join(text, "\n")
	if len(data) > 0 {
		q["data"] = data
	}
	return q
}

// split separates parts into their texts and their data values (a
// file part is named by its URL or file name).
func split(parts a2a.ContentParts) (text []string, data []any) {
	for _, p := range parts {
		if p == nil {
			continue
		}
		switch v := p.Content.(type) {
		case a2a.Text:
			text = append(text, string(v))
		case a2a.Data:
			data = append(data, jsonValue(v.Value))
		case a2a.URL:
			text = append(text, fmt.Sprintf("[file %s]", string(v)))
		case a2a.Raw:
			text = append(text, fmt.Sprintf("[file %s, %d bytes]", p.Filename, len(v)))
		}
	}
	return text, data
}

// jsonValue is v as a JSON value (numbers kept as the SDK read them).
func jsonValue(v any) any {
	out, err := core.ToJSONValue(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return out
}

// completed is the result of a task that completed: its artifacts'
// parts (texts joined; a lone data part as its value, data parts among
// others as JSON), else its status message's text.
func completed(taskID string, t *a2a.Task, status *a2a.Message) map[string]any {
	var parts a2a.ContentParts
	if t != nil {
		for _, a := range t.Artifacts {
			if a != nil {
				parts = append(parts, a.Parts...)
			}
		}
	}
	if len(parts) == 0 && status != nil {
		parts = status.Parts
	}
	text, data := split(parts)
	var result any
	switch {
	case len(text) == 0 && len(data) == 1:
		result = data[0]
	default:
		for _, d := range data {
			b, _ := core.CanonicalJSON(d)
			text = append(text, string(b))
		}
		result = strings.Join(text, "\n")
	}
	meta := map[string]any{"a2a_state": string(a2a.TaskStateCompleted)}
	if taskID != "" {
		meta["a2a_task_id"] = taskID
	}
	return map[string]any{"success": true, "result": result, "metadata": meta}
}

// ErrTypeRemoteTask is the error type of a remote task that did not
// complete.
const ErrTypeRemoteTask = "remote_task_failed"

// failed is the result of a task that failed, was rejected or cancelled,
// or needs an authentication Baton cannot give.
func failed(t *a2a.Task) map[string]any {
	msg := fmt.Sprintf("The remote agent's task %s ended in state %s", t.ID, t.Status.State)
	if t.Status.State == a2a.TaskStateAuthRequired {
		msg = fmt.Sprintf("The remote agent's task %s requires authentication (%s), which this tool cannot provide", t.ID, t.Status.State)
	}
	if t.Status.Message != nil {
		text, data := split(t.Status.Message.Parts)
		for _, d := range data {
			b, _ := core.CanonicalJSON(d)
			text = append(text, string(b))
		}
		if s := strings.TrimSpace(strings.Join(text, "\n")); s != "" {
			msg += ": " + s
		}
	}
	return map[string]any{"success": false, "error": msg, "error_type": ErrTypeRemoteTask,
		"metadata": map[string]any{"a2a_task_id": string(t.ID), "a2a_state": string(t.Status.State)}}
}
