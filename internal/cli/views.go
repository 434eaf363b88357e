package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// runView is the part of a run view the CLI reads; raw is the whole view.
type runView struct {
	RunID     string `json:"run_id"`
	SessionID string `json:"session_id"`
	Agent     string `json:"agent"`
	Status    string `json:"status"`
	// ForkedFrom is the run and message a fork was made from.
	ForkedFrom *forkRef `json:"forked_from"`
	// ScheduleID and ScheduledFor: the schedule that started the run, and
	// its fire time.
	ScheduleID   string `json:"schedule_id"`
	ScheduledFor string `json:"scheduled_for"`
	Pending      struct {
		ToolRequests []toolRequest `json:"tool_requests"`
		Actions      []action      `json:"actions"`
	} `json:"pending"`
	Children []childRun `json:"children"`
	Result   *struct {
		FinalContent string         `json:"final_content"`
		Usage        map[string]any `json:"usage"`
		TurnCount    int            `json:"turn_count"`
		Budget       string         `json:"budget"`
		Interrupted  map[string]any `json:"interrupted"`
		Cost         *runCost       `json:"cost"`
		Error        *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	} `json:"result"`
	raw json.RawMessage
}

// runCost is a result's cost (result.cost), when the runtime prices runs.
type runCost struct {
	TotalUSD float64  `json:"total_usd"`
	ModelUSD float64  `json:"model_usd"`
	AWSUSD   float64  `json:"aws_usd"`
	Unpriced []string `json:"unpriced_models"`
}

// childRun is one child run of a run (sub-agents).
type childRun struct {
	RunID      string         `json:"run_id"`
	Agent      string         `json:"agent"`
	ToolCallID string         `json:"tool_call_id"`
	Status     string         `json:"status"`
	Usage      map[string]any `json:"usage"`
	Cost       *runCost       `json:"cost"`
}

// of names the child run an item of a run's pending belongs to ("" for
// the run's own).
func of(runID string) string {
	if runID == "" {
		return ""
	}
	return " of child run " + runID
}

type toolRequest struct {
	RunID      string `json:"run_id"`
	RequestID  string `json:"request_id"`
	ToolCallID string `json:"tool_call_id"`
	ToolName   string `json:"tool_name"`
	Parameters any    `json:"parameters"`
	ExpiresAt  string `json:"expires_at"`
}

type action struct {
	RunID     string `json:"run_id"`
	ActionID  string `json:"action_id"`
	ToolName  string `json:"tool_name"`
	Summary   string `json:"summary"`
	Preview   any    `json:"preview"`
	ExpiresAt string `json:"expires_at"`
}

// statusText is the run's status, painted, with the budget that ended it
// or the error's code and message beside it.
func (v runView) statusText(p *printer) string {
	s := p.paint(statusColour(v.Status), v.Status)
	if r := v.Result; r != nil {
		if r.Budget != "" {
			s += " (" + r.Budget + ")"
		}
		if e := r.Error; e != nil && (e.Code != "" || e.Message != "") {
			s += " " + p.paint(statusColour(v.Status), "("+strings.TrimPrefix(e.Code+": "+e.Message, ": ")+")")
		}
	}
	return s
}

func decodeView(raw []byte) (runView, error) {
	var v runView
	if err := json.Unmarshal(raw, &v); err != nil {
		return runView{}, fmt.Errorf("the run view is not the JSON expected: %w", err)
	}
	v.raw = append(json.RawMessage(nil), raw...)
	return v, nil
}

// view reads a run's view (method GET), or posts in to one of its routes
// and reads the view the 202 carries.
func (c *client) view(ctx context.Context, method, path string, in any) (runView, error) {
	var raw json.RawMessage
	if err := c.request(ctx, method, path, nil, in, &raw); err != nil {
		return runView{}, err
	}
	return decodeView(raw)
}

// event is a lifecycle event as the events route and the stream carry it.
type event struct {
	Seq  int64          `json:"seq"`
	Type string         `json:"type"`
	Turn int            `json:"turn"`
	At   string         `json:"at"`
	Data map[string]any `json:"data"`
}

// message is a transcript message of the messages route.
type message struct {
	Seq      int64          `json:"seq"`
	Role     string         `json:"role"`
	Content  string         `json:"content"`
	Metadata map[string]any `json:"metadata"`
}

// messages reads a run's whole session transcript, page by page.
func (c *client) messages(ctx context.Context, runID string) ([]message, error) {
	return readPages[message](ctx, c, runPath(runID, "messages"), "messages")
}

// events reads all of a run's lifecycle events, page by page.
func (c *client) events(ctx context.Context, runID string) ([]event, error) {
	return readPages[event](ctx, c, runPath(runID, "events"), "events")
}

// readPages reads a paged list route (after, limit; the page's items
// under key, the next cursor under next) to its end.
func readPages[T any](ctx context.Context, c *client, path, key string) ([]T, error) {
	var all []T
	after := int64(0)
	for {
		var page map[string]json.RawMessage
		q := url.Values{"after": {strconv.FormatInt(after, 10)}, "limit": {"1000"}}
		if err := c.request(ctx, http.MethodGet, path, q, nil, &page); err != nil {
			return nil, err
		}
		var items []T
		if err := json.Unmarshal(page[key], &items); err != nil {
			return nil, fmt.Errorf("the %s page is not the JSON expected: %w", key, err)
		}
		all = append(all, items...)
		if len(items) < 1000 {
			return all, nil
		}
		if err := json.Unmarshal(page["next"], &after); err != nil {
			return nil, fmt.Errorf("the %s page has no next cursor: %w", key, err)
		}
	}
}

func (m message) meta(key string) string {
	s, _ := m.Metadata[key].(string)
	return s
}
