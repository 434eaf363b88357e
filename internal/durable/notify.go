package durable

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/baton-agents/baton/core"
)

// Run notifications. A transition that pauses the run (to
// approval_required or runtime_tool_pending, or with a new pending item
// while paused), finishes it, or expires pending items gets a
// notification per case (core.NotificationPaused, NotificationFinished,
// NotificationExpired), derived here from the committed transition and
// stored as an outbox record in the same write as the transition. After
// the write lands, the committing process publishes the records and marks
// them sent; the sweeper sends again those still unsent NotifyAfter after
// their transition (a crash, a failed publish). Delivery is at least
// once; every send of a notification carries the same event_id.

// Notification event names: the detail's "event", and the last part of
// its event id.
const (
	eventPaused   = "paused"
	eventFinished = "finished"
	eventExpired  = "expired"
)

// finalContentMax bounds a notification's final content, in bytes.
const finalContentMax = 1024

// NotificationDetail is the detail of a run notification.
type NotificationDetail struct {
	// EventID is the same on every send of the notification:
	// "<run_id>:<version>:<event>".
	EventID   string         `json:"event_id"`
	Event     string         `json:"event"`
	RunID     string         `json:"run_id"`
	SessionID string         `json:"session_id"`
	Agent     string         `json:"agent"`
	Tenant    string         `json:"tenant"`
	Status    core.RunStatus `json:"status"`
	// Pending lists what a paused run waits on (parameters and previews
	// redacted), with expiry times.
	Pending *PendingView `json:"pending,omitempty"`
	// Expired lists the pending items the transition expired.
	Expired []NotifiedExpiry `json:"expired,omitempty"`
	// FinalContent is the run's final content, cut to 1 KiB
	// (FinalContentTruncated then says so), for a finished run.
	FinalContent          string         `json:"final_content,omitempty"`
	FinalContentTruncated bool           `json:"final_content_truncated,omitempty"`
	Budget                string         `json:"budget,omitempty"`
	Error                 *core.RunError `json:"error,omitempty"`
	Usage                 map[string]any `json:"usage"`
	OccurredAt            time.Time      `json:"occurred_at"`
	// ParentRunID and RootRunID are set for a child run (sub-agents): the
	// run whose call it answers, and its tree's first run.
	ParentRunID string `json:"parent_run_id,omitempty"`
	RootRunID   string `json:"root_run_id,omitempty"`
	// ScheduleID is set for a run a schedule started.
	ScheduleID string `json:"schedule_id,omitempty"`
}

// NotifiedExpiry is one expired pending item.
type NotifiedExpiry struct {
	ID         string    `json:"id"`
	Kind       string    `json:"kind"`
	ToolCallID string    `json:"tool_call_id"`
	ExpiresAt  time.Time `json:"expires_at"`
}

// notifications derives the outbox records of the transition from prev
// to out (pending: the write's pending items): with bus, one per
// notification for the publisher; with cb, one more per notification cb
// wants, its delivery to the run's callback (callbacks.go).
func notifications(tenant string, prev core.RunState, out core.Output, pending []core.PendingItem, bus bool, cb *core.Callback) ([]core.Notification, error) {
	st := out.State
	var ns []core.Notification
	add := func(event, detailType string, fill func(*NotificationDetail)) error {
		d := NotificationDetail{
			EventID: fmt.Sprintf("%s:%d:%s", st.RunID, st.Version, event), Event: event,
			RunID: st.RunID, SessionID: st.SessionID, Agent: st.Config.Agent, Tenant: tenant, Status: st.Status,
			Usage: st.Usage.Map(), OccurredAt: st.UpdatedAt, ScheduleID: st.Config.Schedule.ScheduleID(),
		}
		if p := st.Config.Parent; p != nil {
			d.ParentRunID, d.RootRunID = p.RunID, p.RootRunID
		}
		fill(&d)
		b, err := json.Marshal(d)
		if err != nil {
			return fmt.Errorf("encode notification %s: %w", d.EventID, err)
		}
		n := core.Notification{ID: d.EventID, RunID: st.RunID, DetailType: detailType, Detail: b, Time: st.UpdatedAt}
		if bus {
			ns = append(ns, n)
		}
		if cb.Wants(event) {
			ns = append(ns, callbackRecord(n, event, st.Config.Agent, cb))
		}
		return nil
	}
	var expired []NotifiedExpiry
	opened := false
	for _, p := range pending {
		switch p.Status {
		case core.PendingExpired:
			expired = append(expired, NotifiedExpiry{ID: p.ID, Kind: p.Kind, ToolCallID: p.ToolCallID, ExpiresAt: p.ExpiresAt})
		case core.PendingOpen:
			opened = opened || !wasOpen(prev, p.ID)
		}
	}
	if len(expired) > 0 {
		if err := add(eventExpired, core.NotificationExpired, func(d *NotificationDetail) { d.Expired = expired }); err != nil {
			return nil, err
		}
	}
	if core.IsTerminal(st.Status) && !core.IsTerminal(prev.Status) {
		if st.Config.Parent != nil {
			ns = append(ns, parentRecord(st))
		}
		if st.Config.Eval != nil {
			ns = append(ns, evalRecord(st))
		}
		ns = append(ns, childStops(st)...)
	}
	switch {
	case core.IsTerminal(st.Status) && !core.IsTerminal(prev.Status):
		err := add(eventFinished, core.NotificationFinished, func(d *NotificationDetail) {
			d.FinalContent, d.FinalContentTruncated = truncate(finalContent(out), finalContentMax)
			d.Budget, d.Error = st.Budget, st.Error
		})
		if err != nil {
			return nil, err
		}
	case paused(st.Status) && (prev.Status != st.Status || opened):
		err := add(eventPaused, core.NotificationPaused, func(d *NotificationDetail) {
			reqs, acts := st.Pending()
			for i := range reqs {
				reqs[i].Parameters = core.RedactedParameters(reqs[i].Parameters)
			}
			d.Pending = &PendingView{ToolRequests: nonNil(reqs), Actions: nonNil(acts)}
		})
		if err != nil {
			return nil, err
		}
	}
	return ns, nil
}

func paused(s core.RunStatus) bool {
	return s == core.StatusApprovalRequired || s == core.StatusRuntimeToolPending
}

// wasOpen reports whether prev already waited on the pending item id.
func wasOpen(prev core.RunState, id string) bool {
	for _, c := range prev.Calls {
		if (c.Status == core.CallAwaitingApproval && c.ActionID == id) || (c.Status == core.CallAwaitingClient && c.RequestID == id) {
			return true
		}
	}
	return false
}

// finalContent is the final content of a finishing transition: its done
// event's response, else its last assistant text.
func finalContent(out core.Output) string {
	for _, e := range out.Events {
		if e.Type == core.EventDone {
			if s, ok := e.Fields()["response"].(string); ok {
				return s
			}
		}
	}
	return core.FinalContent(out.Messages)
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

// notify publishes a commit's notifications and marks them sent; a
// failure leaves them to the sweeper.
func (e *Runner) notify(ctx context.Context, ns []core.Notification) {
	ns = e.deliverToParents(ctx, ns)
	ns = e.cancelRemoteTasks(ctx, ns)
	ns = e.deliverCallbacks(ctx, ns)
	if len(ns) == 0 || e.Notifier == nil {
		return
	}
	if err := e.Notifier.Publish(ctx, ns); err != nil {
		e.Log.WarnContext(ctx, "publish notifications; the sweeper sends them again", "run_id", ns[0].RunID, "notifications", len(ns), "err", err)
		return
	}
	for _, n := range ns {
		if err := e.Store.MarkNotificationSent(ctx, n.RunID, n.ID); err != nil {
			e.Log.WarnContext(ctx, "mark notification sent", "run_id", n.RunID, "event_id", n.ID, "err", err)
		}
	}
}

// sweepNotifications sends again the notifications still unsent
// NotifyAfter after their transition, at most limit.
func (e *Runner) sweepNotifications(ctx context.Context, now time.Time, limit int) (int, error) {
	ns, err := e.Store.UnsentNotifications(ctx, now.Add(-e.Limits.NotifyAfter), limit)
	if err != nil {
		return 0, fmt.Errorf("list unsent notifications: %w", err)
	}
	if len(ns) > 0 {
		e.Log.InfoContext(ctx, "sweep: sending unsent notifications", "notifications", len(ns))
		e.notify(ctx, ns)
	}
	return len(ns), nil
}
