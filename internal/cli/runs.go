package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

func cmdRunsList(ctx context.Context, args []string, env *Env) error {
	f := newFlags("runs ls", "[--status S] [--forked-from RUN] [--limit N] [--cursor C]", env)
	status := f.String("status", "", "only runs in this status")
	forkedFrom := f.String("forked-from", "", "only the forks of this run")
	limit := f.Int("limit", 20, "runs per page (at most 100)")
	cursor := f.String("cursor", "", "the next page's cursor, as the previous page printed it")
	if _, err := f.parse(args, 0, 0); err != nil {
		return err
	}
	c, err := f.client(env)
	if err != nil {
		return err
	}
	q := url.Values{"limit": {strconv.Itoa(*limit)}}
	if *status != "" {
		q.Set("status", *status)
	}
	if *forkedFrom != "" {
		q.Set("forked_from", *forkedFrom)
	}
	if *cursor != "" {
		q.Set("cursor", *cursor)
	}
	var raw json.RawMessage
	if err := c.request(ctx, http.MethodGet, "/v1/runs", q, nil, &raw); err != nil {
		return err
	}
	if f.json {
		fmt.Fprintln(env.Stdout, string(raw))
		return nil
	}
	var page struct {
		Runs []struct {
			RunID     string    `json:"run_id"`
			SessionID string    `json:"session_id"`
			Agent     string    `json:"agent"`
			Status    string    `json:"status"`
			CreatedAt time.Time `json:"created_at"`
		} `json:"runs"`
		NextCursor *string `json:"next_cursor"`
	}
	if err := json.Unmarshal(raw, &page); err != nil {
		return fmt.Errorf("the run list is not the JSON expected: %w", err)
	}
	p := newPrinter(env, false)
	if len(page.Runs) == 0 {
		p.line("no runs")
		return nil
	}
	p.line("%s", p.paint(cBold, fmt.Sprintf("%-34s %-22s %-16s %-20s %s", "RUN", "STATUS", "AGENT", "CREATED", "SESSION")))
	for _, r := range page.Runs {
		p.line("%-34s %s %-16s %-20s %s", r.RunID, p.paint(statusColour(r.Status), fmt.Sprintf("%-22s", r.Status)), r.Agent,
			r.CreatedAt.UTC().Format("2006-01-02 15:04:05"), r.SessionID)
	}
	if page.NextCursor != nil {
		p.line("%s", p.paint(cDim, "more: baton runs ls --limit "+strconv.Itoa(*limit)+flagArg("status", *status)+flagArg("forked-from", *forkedFrom)+" --cursor "+*page.NextCursor))
	}
	return nil
}

// flagArg is " --name value", or "" for an empty value.
func flagArg(name, value string) string {
	if value == "" {
		return ""
	}
	return " --" + name + " " + value
}

func cmdRunsShow(ctx context.Context, args []string, env *Env) error {
	f := newFlags("runs show", "RUN", env)
	pos, c, err := f.parseClient(args, 1, 1, env)
	if err != nil {
		return err
	}
	v, err := c.view(ctx, http.MethodGet, runPath(pos[0]), nil)
	if err != nil {
		return err
	}
	if f.json {
		fmt.Fprintln(env.Stdout, string(v.raw))
		return nil
	}
	msgs, err := c.messages(ctx, v.RunID)
	if err != nil {
		return err
	}
	evs, err := c.events(ctx, v.RunID)
	if err != nil {
		return err
	}
	p := newPrinter(env, false)
	p.line("%s %s  %s %s", p.paint(cBold, "run "+v.RunID), p.paint(cDim, "agent "+v.Agent+", session "+v.SessionID), p.paint(cDim, "status"), v.statusText(p))
	if v.ForkedFrom != nil {
		p.line("%s %s", p.paint(cDim, "forked from"), v.ForkedFrom)
	}
	if v.ScheduleID != "" {
		p.line("%s %s %s %s", p.paint(cDim, "scheduled by"), v.ScheduleID, p.paint(cDim, "for"), fireTime(v.ScheduledFor))
	}
	showTranscript(p, msgs, redactedCalls(evs))
	for _, ch := range v.Children {
		p.line("%s %s %s for call %s · %s%s", p.paint(cDim, "child:"), ch.RunID, p.paint(statusColour(ch.Status), ch.Status), ch.ToolCallID,
			p.paint(cDim, "agent "+ch.Agent), childTotals(ch))
	}
	for _, r := range v.Pending.ToolRequests {
		p.line("%s client tool %s%s, request %s, parameters %s (expires %s)", p.paint(cYellow, "pending:"), r.ToolName, of(r.RunID), r.RequestID, compact(r.Parameters), r.ExpiresAt)
	}
	for _, a := range v.Pending.Actions {
		p.line("%s approval of %s%s, action %s: %s; preview %s (expires %s)", p.paint(cYellow, "pending:"), a.ToolName, of(a.RunID), a.ActionID, a.Summary, compact(a.Preview), a.ExpiresAt)
	}
	if r := v.Result; r != nil {
		p.line("%s %s · usage: %s%s", p.paint(cDim, "totals:"), count(r.TurnCount, "turn"), usageLine(r.Usage), costLine(r.Cost))
		if len(r.Interrupted) > 0 {
			p.line("%s %s", p.paint(cDim, "interrupted:"), compact(r.Interrupted))
		}
	}
	return nil
}

// redacted holds a run's tool calls as its events show them: parameters
// and result text with sensitive values redacted by the API.
type redacted struct {
	params  map[string]any    // tool_call_id → parameters
	results map[string]string // tool_call_id → result text
}

func redactedCalls(evs []event) redacted {
	r := redacted{params: map[string]any{}, results: map[string]string{}}
	for _, e := range evs {
		id, _ := e.Data["tool_call_id"].(string)
		switch e.Type {
		case "tool_call":
			r.params[id] = e.Data["parameters"]
		case "tool_result":
			r.results[id], _ = e.Data["result"].(string)
		}
	}
	return r
}

// showTranscript prints a transcript with each tool call next to its
// result, and each user and assistant message after its sequence number
// (where baton runs fork --at forks). Parameters and results are shown as the run's events have
// them (redacted); a call of an earlier run of the session, which this
// run's events do not hold, is shown without them.
func showTranscript(p *printer, msgs []message, red redacted) {
	results := map[string]message{}
	for _, m := range msgs {
		if m.Role == "tool_result" {
			results[m.meta("tool_call_id")] = m
		}
	}
	shown := map[string]bool{}
	for _, m := range msgs {
		switch m.Role {
		case "user":
			p.line("%s %s %s", p.paint(cDim, strconv.FormatInt(m.Seq, 10)), p.paint(cBold, "user:"), m.Content)
		case "assistant":
			if strings.TrimSpace(m.Content) != "" {
				p.line("%s %s %s", p.paint(cDim, strconv.FormatInt(m.Seq, 10)), p.paint(cBold, "assistant:"), m.Content)
			}
		case "tool_call":
			id := m.meta("tool_call_id")
			params := p.paint(cDim, "(parameters of an earlier run)")
			if v, ok := red.params[id]; ok {
				params = compact(v)
			}
			call := fmt.Sprintf("%s %s %s", p.paint(cBold, "tool:"), p.paint(cCyan, m.meta("tool_name")), params)
			r, ok := results[id]
			if !ok {
				p.line("%s → %s", call, p.paint(cYellow, "waiting"))
				continue
			}
			shown[id] = true
			p.line("%s → %s", call, resultText(p, r, red))
		case "tool_result":
			if id := m.meta("tool_call_id"); !shown[id] {
				p.line("%s %s → %s", p.paint(cBold, "tool:"), p.paint(cCyan, m.meta("tool_name")), resultText(p, m, red))
			}
		}
	}
}

func resultText(p *printer, r message, red redacted) string {
	text, ok := red.results[r.meta("tool_call_id")]
	if !ok {
		text = p.paint(cDim, "(result of an earlier run)")
	}
	if ok, _ := r.Metadata["success"].(bool); ok {
		return p.paint(cGreen, "ok ") + replayedMark(p, r) + truncate(text, 400)
	}
	return p.paint(cRed, "failed "+r.meta("error_type")+" ") + replayedMark(p, r) + truncate(text, 400)
}

// replayedMark names the run whose recorded result a fork's tool result
// is ("" for a result of a call that ran).
func replayedMark(p *printer, r message) string {
	if replayed, _ := r.Metadata["replayed"].(bool); !replayed {
		return ""
	}
	from := "(replayed) "
	if src, ok := r.Metadata["replayed_from"].(map[string]any); ok {
		if id, _ := src["run_id"].(string); id != "" {
			seq, _ := src["seq"].(float64)
			from = fmt.Sprintf("(replayed from %s message %d) ", id, int64(seq))
		}
	}
	return p.paint(cCyan, from)
}

func cmdRunsEvents(ctx context.Context, args []string, env *Env) error {
	f := newFlags("runs events", "RUN [--follow]", env)
	follow := f.Bool("follow", false, "keep printing events until the run finishes")
	pos, c, err := f.parseClient(args, 1, 1, env)
	if err != nil {
		return err
	}
	p := newPrinter(env, false)
	after := int64(0)
	for {
		q := url.Values{"after": {strconv.FormatInt(after, 10)}, "limit": {"1000"}}
		if *follow {
			q.Set("wait", "20")
		}
		var page struct {
			Events []json.RawMessage `json:"events"`
			Next   int64             `json:"next"`
		}
		if err := c.request(ctx, http.MethodGet, runPath(pos[0], "events"), q, nil, &page); err != nil {
			return err
		}
		for _, raw := range page.Events {
			if f.json {
				fmt.Fprintln(env.Stdout, string(raw))
				continue
			}
			var e event
			if err := json.Unmarshal(raw, &e); err != nil {
				return fmt.Errorf("an event is not the JSON expected: %w", err)
			}
			p.line("%6d %s %s", e.Seq, p.paint(cCyan, fmt.Sprintf("%-22s", e.Type)), compact(e.Data))
		}
		after = page.Next
		if len(page.Events) == 1000 {
			continue
		}
		if !*follow {
			return nil
		}
		if len(page.Events) == 0 {
			v, err := c.view(ctx, http.MethodGet, runPath(pos[0]), nil)
			if err != nil {
				return err
			}
			if exitCode(v.Status) != ExitPaused && v.Status != "queued" && v.Status != "running" {
				return nil
			}
		}
	}
}

// postRun posts body to one of a run's routes and prints the new status
// (the view with --json).
func postRun(ctx context.Context, f *cmdFlags, env *Env, path string, body any) error {
	return postRunSaying(ctx, f, env, path, body, "")
}

// postRunSaying is postRun printing what happened before the status.
func postRunSaying(ctx context.Context, f *cmdFlags, env *Env, path string, body any, what string) error {
	c, err := f.client(env)
	if err != nil {
		return err
	}
	v, err := c.view(ctx, http.MethodPost, path, body)
	if err != nil {
		return err
	}
	if f.json {
		fmt.Fprintln(env.Stdout, string(v.raw))
		return nil
	}
	p := newPrinter(env, false)
	if what != "" {
		p.line("%s (run %s is %s)", what, v.RunID, p.paint(statusColour(v.Status), v.Status))
		return nil
	}
	p.line("run %s is %s", v.RunID, p.paint(statusColour(v.Status), v.Status))
	return nil
}

func cmdApprove(ctx context.Context, args []string, env *Env) error {
	f := newFlags("approve", "RUN ACTION [--reject] [--reason R]", env)
	reject := f.Bool("reject", false, "reject instead of accepting")
	reason := f.String("reason", "", "why (shown to the model on reject)")
	pos, err := f.parse(args, 2, 2)
	if err != nil {
		return err
	}
	body := map[string]any{"decision": "accept"}
	if *reject {
		body["decision"] = "reject"
	}
	if *reason != "" {
		body["reason"] = *reason
	}
	return postRun(ctx, f, env, runPath(pos[0], "approvals", pos[1]), body)
}

func cmdSubmit(ctx context.Context, args []string, env *Env) error {
	f := newFlags("submit", "RUN REQUEST --result JSON|@file | --error MESSAGE", env)
	result := f.String("result", "", "the tool's result: JSON, or @file holding it")
	failure := f.String("error", "", "submit a failed result with this message")
	pos, err := f.parse(args, 2, 2)
	if err != nil {
		return err
	}
	body := map[string]any{"request_id": pos[1]}
	switch {
	case (*result == "") == (*failure == ""):
		return usageErr("give exactly one of --result and --error")
	case *failure != "":
		body["success"], body["error"] = false, *failure
	default:
		raw := []byte(*result)
		if name, ok := strings.CutPrefix(*result, "@"); ok {
			if raw, err = os.ReadFile(name); err != nil {
				return fmt.Errorf("--result: %w", err)
			}
		}
		if !json.Valid(raw) {
			return usageErr("--result is not JSON")
		}
		body["success"], body["result"] = true, json.RawMessage(raw)
	}
	return postRun(ctx, f, env, runPath(pos[0], "tool-results"), body)
}

func cmdCancel(ctx context.Context, args []string, env *Env) error {
	f := newFlags("cancel", "RUN [--reason R]", env)
	reason := f.String("reason", "", "why")
	pos, err := f.parse(args, 1, 1)
	if err != nil {
		return err
	}
	body := map[string]any{}
	if *reason != "" {
		body["reason"] = *reason
	}
	return postRun(ctx, f, env, runPath(pos[0], "cancel"), body)
}

func cmdSteer(ctx context.Context, args []string, env *Env) error {
	f := newFlags("steer", `RUN "message"`, env)
	pos, err := f.parse(args, 2, 2)
	if err != nil {
		return err
	}
	return postRunSaying(ctx, f, env, runPath(pos[0], "messages"), map[string]any{"content": pos[1]}, "message added: the model reads it at its next turn")
}

func cmdInterrupt(ctx context.Context, args []string, env *Env) error {
	f := newFlags("interrupt", "RUN [--action A] [--reason R] [--meta key=value]…", env)
	act := f.String("action", "", "the interrupt's action (default interrupt)")
	reason := f.String("reason", "", "why")
	var meta multiFlag
	f.Var(&meta, "meta", "caller metadata key=value for the envelope's interrupted field; repeatable")
	pos, err := f.parse(args, 1, 1)
	if err != nil {
		return err
	}
	m := map[string]any{"source": "cli"}
	for _, kv := range meta {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return usageErr("--meta wants key=value, got %q", kv)
		}
		m[k] = v
	}
	body := map[string]any{"metadata": m}
	if *act != "" {
		body["action"] = *act
	}
	if *reason != "" {
		body["reason"] = *reason
	}
	return postRun(ctx, f, env, runPath(pos[0], "interrupt"), body)
}

// childTotals is a finished child's usage and cost, as on a run's totals
// line ("" while it runs).
func childTotals(ch childRun) string {
	if len(ch.Usage) == 0 {
		return ""
	}
	return " · usage: " + usageLine(ch.Usage) + costLine(ch.Cost)
}
