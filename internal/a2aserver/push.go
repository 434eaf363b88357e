package a2aserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/runspec"
)

// Push notifications. A task's push notification configuration is its
// run's callback (one per run, as Baton's signed webhooks have it): the
// URL must be on a host of the agent's callback_hosts, the agent must
// allow callback overrides, and every POST is signed with the agent's
// callback secret (X-Baton-Signature) and carries the configuration's
// token as X-A2A-Notification-Token. The body is the task as the
// notification saw it: {"task": {...}} (PushBody). Delivery is the
// callbacks' durable outbox: retried with backoff, given up after the
// callbacks' attempts with a callback_failed event on the run.

// TokenHeader carries a push notification configuration's token.
const TokenHeader = "X-A2A-Notification-Token"

// defaultPushID names a configuration created without an id.
const defaultPushID = "default"

// PushBody is the A2A push notification of a notification's detail
// (durable.NotificationDetail): a StreamResponse holding the task, with
// its state, the pending items of a paused run or the error of a failed
// one, and the answer artifact (final_content, at most 1 KiB) of a
// completed one; the token goes in TokenHeader.
func PushBody(detail []byte, token string) ([]byte, map[string]string, error) {
	var d durable.NotificationDetail
	if err := json.Unmarshal(detail, &d); err != nil {
		return nil, nil, err
	}
	v := durable.View{RunID: d.RunID, SessionID: d.SessionID, Agent: d.Agent, Status: d.Status, UpdatedAt: d.OccurredAt}
	v.Result.Error, v.Result.FinalContent = d.Error, d.FinalContent
	if d.Pending != nil {
		v.Pending = *d.Pending
	}
	zero := 0
	t := taskOf(v, &zero)
	t.Metadata["baton"].(map[string]any)["event"] = d.Event
	b, err := json.Marshal(a2a.StreamResponse{Event: t})
	if err != nil {
		return nil, nil, err
	}
	hdr := map[string]string{}
	if token != "" {
		hdr[TokenHeader] = token
	}
	return b, hdr, nil
}

// pushConfig is the A2A configuration of a run's callback, if it is one.
func pushConfig(st core.RunState) *a2a.PushConfig {
	cb := st.Config.Callback
	if cb == nil || cb.Format != core.CallbackFormatA2A {
		return nil
	}
	return &a2a.PushConfig{TaskID: a2a.TaskID(st.RunID), ID: cb.ID, URL: cb.URL, Token: cb.Token}
}

// pushRequest checks a push configuration of a message or a create
// request against the caller's agent.
func (h Handler) pushRequest(ctx context.Context, c *a2a.PushConfig) (*agents.CallbackRequest, error) {
	ag, ok := h.Runner.Agents.Get(callerOf(ctx).Agent)
	if !ok || !ag.PushNotifications() {
		return nil, a2a.NewError(a2a.ErrPushNotificationNotSupported, "this agent takes no push notification configurations: its agents file entry must allow callback overrides (allow_overrides: callback, callback_hosts, and a callback secret)")
	}
	if c.Auth != nil && c.Auth.Scheme != "" {
		return nil, a2a.NewError(a2a.ErrInvalidParams, "authentication: Baton signs every push notification (X-Baton-Signature) and sends the token; it sends no other credentials")
	}
	id := strings.TrimSpace(c.ID)
	if id == "" {
		id = defaultPushID
	}
	if _, err := ag.PushCallback(c.URL, c.Token, id); err != nil {
		return nil, a2a.NewError(a2a.ErrInvalidParams, "push notification config: "+runspec.Classify(err).Message)
	}
	return agents.PushRequest(c.URL, c.Token, id), nil
}

func (r requestHandler) CreateTaskPushConfig(ctx context.Context, req *a2a.PushConfig) (*a2a.PushConfig, error) {
	if err := checkVersion(ctx); err != nil {
		return nil, err
	}
	snap, err := r.h.load(ctx, req.TaskID)
	if err != nil {
		return nil, err
	}
	cr, err := r.h.pushRequest(ctx, req)
	if err != nil {
		return nil, err
	}
	if core.IsTerminal(snap.State.Status) {
		return nil, a2a.NewError(a2a.ErrUnsupportedOperation, fmt.Sprintf("task %s has ended: it sends no more notifications", req.TaskID))
	}
	ag, _ := r.h.Runner.Agents.Get(callerOf(ctx).Agent)
	cb, _ := ag.PushCallback(cr.URL, cr.Token, cr.ID)
	snap, err = r.h.Runner.Apply(ctx, callerOf(ctx).Tenant, snap.State.RunID, core.SetCallback{Callback: cb})
	if err != nil {
		return nil, r.h.rpcError(ctx, err)
	}
	return pushConfig(snap.State), nil
}

func (r requestHandler) GetTaskPushConfig(ctx context.Context, req *a2a.GetTaskPushConfigRequest) (*a2a.PushConfig, error) {
	if err := checkVersion(ctx); err != nil {
		return nil, err
	}
	snap, err := r.h.load(ctx, req.TaskID)
	if err != nil {
		return nil, err
	}
	if c := pushConfig(snap.State); c != nil && (req.ID == "" || req.ID == c.ID) {
		return c, nil
	}
	return nil, a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf("task %s has no push notification config %q", req.TaskID, shortID(req.ID)))
}

func (r requestHandler) ListTaskPushConfigs(ctx context.Context, req *a2a.ListTaskPushConfigRequest) (*a2a.ListTaskPushConfigResponse, error) {
	if err := checkVersion(ctx); err != nil {
		return nil, err
	}
	snap, err := r.h.load(ctx, req.TaskID)
	if err != nil {
		return nil, err
	}
	out := &a2a.ListTaskPushConfigResponse{Configs: []*a2a.PushConfig{}}
	if c := pushConfig(snap.State); c != nil {
		out.Configs = append(out.Configs, c)
	}
	return out, nil
}

func (r requestHandler) DeleteTaskPushConfig(ctx context.Context, req *a2a.DeleteTaskPushConfigRequest) error {
	if err := checkVersion(ctx); err != nil {
		return err
	}
	snap, err := r.h.load(ctx, req.TaskID)
	if err != nil {
		return err
	}
	c := pushConfig(snap.State)
	if c == nil || req.ID != "" && req.ID != c.ID {
		return a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf("task %s has no push notification config %q", req.TaskID, shortID(req.ID)))
	}
	if _, err := r.h.Runner.Apply(ctx, callerOf(ctx).Tenant, snap.State.RunID, core.SetCallback{}); err != nil {
		return r.h.rpcError(ctx, err)
	}
	return nil
}
