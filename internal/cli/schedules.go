package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Scheduled runs (docs/schedules.md): baton schedules ls lists the
// tenant's schedules, create writes one, pause and resume flip it, rm
// deletes it, and history lists the fire times it reached with what came
// of each.

// schedulesPage is the most schedules or triggers one request asks for.
const schedulesPage = 100

func cmdSchedules(ctx context.Context, args []string, env *Env) error {
	if len(args) < 1 {
		return usageErr("want schedules ls|create|pause|resume|rm|history")
	}
	switch args[0] {
	case "ls", "list":
		return cmdSchedulesList(ctx, args[1:], env)
	case "create":
		return cmdSchedulesCreate(ctx, args[1:], env)
	case "pause":
		return cmdSchedulesPause(ctx, args[1:], env, true)
	case "resume":
		return cmdSchedulesPause(ctx, args[1:], env, false)
	case "rm", "delete":
		return cmdSchedulesRemove(ctx, args[1:], env)
	case "history":
		return cmdSchedulesHistory(ctx, args[1:], env)
	}
	return usageErr("unknown schedules command %q: want ls, create, pause, resume, rm or history", args[0])
}

// schedule is a schedule as the API answers it.
type schedule struct {
	ScheduleID    string         `json:"schedule_id"`
	Agent         string         `json:"agent"`
	Alias         string         `json:"alias,omitempty"`
	AgentVersion  string         `json:"agent_version,omitempty"`
	Request       map[string]any `json:"request"`
	Cron          string         `json:"cron,omitempty"`
	At            string         `json:"at,omitempty"`
	Timezone      string         `json:"timezone"`
	Start         string         `json:"start,omitempty"`
	End           string         `json:"end,omitempty"`
	Overlap       string         `json:"overlap"`
	Missed        string         `json:"missed"`
	Paused        bool           `json:"paused"`
	NextFireTimes []string       `json:"next_fire_times"`
	LastRunID     string         `json:"last_run_id,omitempty"`
	CreatedAt     string         `json:"created_at"`
	UpdatedAt     string         `json:"updated_at"`
}

// trigger is one fire time of a schedule as the API answers it.
type trigger struct {
	FireTime   string `json:"fire_time"`
	Outcome    string `json:"outcome"`
	RunID      string `json:"run_id,omitempty"`
	Reason     string `json:"reason,omitempty"`
	RecordedAt string `json:"recorded_at"`
}

// schedulePath is the path of a schedule's route; the id is escaped.
func schedulePath(id string, rest ...string) string {
	p := "/v1/schedules/" + url.PathEscape(id)
	for _, r := range rest {
		p += "/" + r
	}
	return p
}

// when is a schedule's expression, or its one time, and its zone.
func (s schedule) when() string {
	expr := s.Cron
	if s.At != "" {
		expr = "at " + s.At
	}
	if s.Timezone == "" || s.Timezone == "UTC" {
		return expr + " (UTC)"
	}
	return expr + " (" + s.Timezone + ")"
}

// fireTime writes a fire time (UTC from the API) in the local time zone,
// to the minute, with its UTC time when the two differ (and the UTC day
// when that differs too).
func fireTime(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	local, utc := t.Local(), t.UTC()
	if _, off := local.Zone(); off == 0 {
		return local.Format("Mon 2006-01-02 15:04 MST")
	}
	layout := "15:04 UTC"
	if local.Day() != utc.Day() {
		layout = "Mon 15:04 UTC"
	}
	return local.Format("Mon 2006-01-02 15:04 MST") + " (" + utc.Format(layout) + ")"
}

// pages follows next_cursor until the last page or limit (0: all)
// items: page reads the page of a query (limit and cursor).
func pages[T any](limit int, page func(q url.Values) (list []T, next string, err error)) (all []T, next string, err error) {
	all = []T{}
	for {
		q := url.Values{}
		size := schedulesPage
		if limit > 0 {
			size = min(size, limit-len(all))
		}
		q.Set("limit", strconv.Itoa(size))
		if next != "" {
			q.Set("cursor", next)
		}
		var list []T
		if list, next, err = page(q); err != nil {
			return nil, "", err
		}
		all = append(all, list...)
		if next == "" || (limit > 0 && len(all) >= limit) {
			return all, next, nil
		}
	}
}

// limitFlag checks a --limit (0: all).
func limitFlag(limit int) error {
	if limit < 0 {
		return usageErr("--limit wants 1 or more (0 lists all); got %d", limit)
	}
	return nil
}

func cmdSchedulesList(ctx context.Context, args []string, env *Env) error {
	f := newFlags("schedules ls", "[--limit N] [--json]", env)
	limit := f.Int("limit", 0, "list at most N schedules (default: all of them)")
	_, c, err := f.parseClient(args, 0, 0, env)
	if err != nil {
		return err
	}
	if err := limitFlag(*limit); err != nil {
		return err
	}
	all, next, err := pages(*limit, func(q url.Values) ([]schedule, string, error) {
		var page struct {
			Schedules  []schedule `json:"schedules"`
			NextCursor *string    `json:"next_cursor"`
		}
		err := c.request(ctx, http.MethodGet, "/v1/schedules", q, nil, &page)
		return page.Schedules, deref(page.NextCursor), err
	})
	if err != nil {
		return err
	}
	if f.json {
		return writeJSON(env, map[string]any{"schedules": all, "next_cursor": nullable(next)})
	}
	p := newPrinter(env, false)
	if len(all) == 0 {
		p.line("no schedules")
		return nil
	}
	rows := [][]string{{"ID", "AGENT", "WHEN", "NEXT", "STATE", "LAST RUN"}}
	for _, s := range all {
		next, state := "none", "active"
		if len(s.NextFireTimes) > 0 {
			next = fireTime(s.NextFireTimes[0])
		}
		if s.Paused {
			next, state = "-", "paused"
		}
		rows = append(rows, []string{s.ScheduleID, agentName(s), s.when(), next, state, orDash(s.LastRunID)})
	}
	table(p, rows)
	if next != "" {
		p.line("%s", p.paint(cDim, fmt.Sprintf("%d listed; more remain (raise --limit)", len(all))))
	}
	return nil
}

// agentName is a schedule's agent with its alias or version.
func agentName(s schedule) string {
	switch {
	case s.Alias != "":
		return s.Agent + "@" + s.Alias
	case s.AgentVersion != "":
		return s.Agent + "@" + s.AgentVersion
	}
	return s.Agent
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// nullable is a cursor as the API writes it: null on the last page.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// table prints rows as columns aligned to their widest cell (in runes),
// the first row, the header, in bold; the last column is not padded.
func table(p *printer, rows [][]string) {
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, cell := range r {
			widths[i] = max(widths[i], len([]rune(cell)))
		}
	}
	for n, r := range rows {
		var b strings.Builder
		for i, cell := range r {
			if i == len(r)-1 {
				b.WriteString(cell)
				break
			}
			b.WriteString(cell + strings.Repeat(" ", widths[i]-len([]rune(cell))+2))
		}
		line := strings.TrimRight(b.String(), " ")
		if n == 0 {
			line = p.paint(cBold, line)
		}
		p.line("%s", line)
	}
}

func cmdSchedulesCreate(ctx context.Context, args []string, env *Env) error {
	f := newFlags("schedules create", "--agent A (--cron EXPR | --at TIME) [--timezone TZ] (--input TEXT | --request FILE) [flags]", env)
	agent := f.String("agent", "", "the agent its runs run (or \"agent\" in --request)")
	alias := f.String("alias", "", "start its runs on this agent alias")
	version := f.String("version", "", "start its runs on this agent version")
	cron := f.String("cron", "", `when it fires: five cron fields ("0 9 * * MON-FRI"), cron(m h dom mon dow year) or rate(N unit)`)
	at := f.String("at", "", "fire once, at this RFC 3339 time (2026-12-01T09:00:00Z)")
	tz := f.String("timezone", "", "the IANA time zone --cron is read in (default UTC)")
	input := f.String("input", "", "the user message each run starts with")
	request := f.String("request", "", "a start-run body (JSON file, - for stdin) each run starts with: messages, metadata, callback, model, …")
	start := f.String("start", "", "fire no earlier than this RFC 3339 time")
	end := f.String("end", "", "fire no later than this RFC 3339 time")
	overlap := f.String("overlap", "", "skip (default: no run while the previous one is unfinished) or allow")
	missed := f.String("missed", "", "skip (default: fire times missed while paused or down start nothing) or run_once")
	paused := f.Bool("paused", false, "create it paused")
	if _, err := f.parse(args, 0, 0); err != nil {
		return err
	}
	switch {
	case (*cron == "") == (*at == ""):
		return usageErr("say when it fires: --cron EXPR or --at TIME (one of the two)")
	case (*input == "") == (*request == ""):
		return usageErr("say what each run is asked: --input TEXT or --request FILE (one of the two)")
	case *alias != "" && *version != "":
		return usageErr("--alias or --version, not both")
	}
	req := map[string]any{"messages": []any{map[string]any{"role": "user", "content": *input}}}
	if *request != "" {
		var err error
		if req, err = readRequest(*request, env); err != nil {
			return err
		}
	}
	body := map[string]any{}
	// A start-run body may name the agent, alias or version: they are the
	// schedule's own fields, and the flags win.
	for _, k := range []struct {
		field string
		flag  *string
	}{{"agent", agent}, {"alias", alias}, {"agent_version", version}} {
		v, inFile := req[k.field]
		delete(req, k.field)
		switch {
		case *k.flag != "":
			body[k.field] = *k.flag
		case inFile:
			body[k.field] = v
		}
	}
	if body["agent"] == nil {
		return usageErr("name the agent: --agent SLUG (or \"agent\" in --request)")
	}
	body["request"] = req
	for k, v := range map[string]string{"cron": *cron, "at": *at, "timezone": *tz, "start": *start, "end": *end, "overlap": *overlap, "missed": *missed} {
		if v != "" {
			body[k] = v
		}
	}
	if *paused {
		body["paused"] = true
	}
	c, err := f.client(env)
	if err != nil {
		return err
	}
	// One Idempotency-Key, sent again with a retry: one schedule however
	// many of the attempts arrived.
	raw, err := c.postKeyed(ctx, "/v1/schedules", body, newKey())
	if err != nil {
		return err
	}
	var s schedule
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("POST /v1/schedules: the response is not the schedule expected: %w", err)
	}
	if f.json {
		return writeJSON(env, s)
	}
	fmt.Fprintf(env.Stdout, "created schedule %s: %s, %s%s\n", s.ScheduleID, agentName(s), s.when(), pausedNote(s))
	printNext(env, s)
	return nil
}

// readRequest reads --request: a JSON object, from a file or stdin (-).
func readRequest(file string, env *Env) (map[string]any, error) {
	if file != "-" {
		return readBody("--request", file)
	}
	var body map[string]any
	dec := json.NewDecoder(env.in)
	dec.UseNumber()
	if err := dec.Decode(&body); err != nil {
		return nil, usageErr("--request -: stdin is not a JSON object: %v", err)
	}
	if body == nil {
		return nil, usageErr("--request -: stdin is not a JSON object")
	}
	return body, nil
}

func pausedNote(s schedule) string {
	if s.Paused {
		return " (paused)"
	}
	return ""
}

// printNext prints a schedule's next fire times, in local time (a
// paused schedule has none).
func printNext(env *Env, s schedule) {
	switch {
	case s.Paused:
		fmt.Fprintln(env.Stdout, "paused: it fires nothing until resumed (baton schedules resume)")
		return
	case len(s.NextFireTimes) == 0:
		fmt.Fprintln(env.Stdout, "it has no fire times left")
		return
	}
	fmt.Fprintln(env.Stdout, "next fire times:")
	for _, t := range s.NextFireTimes {
		fmt.Fprintf(env.Stdout, "  %s\n", fireTime(t))
	}
}

func cmdSchedulesPause(ctx context.Context, args []string, env *Env, pause bool) error {
	name := map[bool]string{true: "pause", false: "resume"}[pause]
	f := newFlags("schedules "+name, "ID [--json]", env)
	pos, c, err := f.parseClient(args, 1, 1, env)
	if err != nil {
		return err
	}
	var s schedule
	if err := c.request(ctx, http.MethodPatch, schedulePath(pos[0]), nil, map[string]any{"paused": pause}, &s); err != nil {
		return err
	}
	if f.json {
		return writeJSON(env, s)
	}
	fmt.Fprintf(env.Stdout, "%sd schedule %s\n", name, s.ScheduleID)
	if !pause {
		printNext(env, s)
	}
	return nil
}

func cmdSchedulesRemove(ctx context.Context, args []string, env *Env) error {
	f := newFlags("schedules rm", "ID [--json]", env)
	pos, c, err := f.parseClient(args, 1, 1, env)
	if err != nil {
		return err
	}
	if err := c.request(ctx, http.MethodDelete, schedulePath(pos[0]), nil, nil, nil); err != nil {
		return err
	}
	if f.json {
		return writeJSON(env, map[string]any{"deleted": pos[0]})
	}
	fmt.Fprintf(env.Stdout, "deleted schedule %s (its history stays until it expires)\n", pos[0])
	return nil
}

func cmdSchedulesHistory(ctx context.Context, args []string, env *Env) error {
	f := newFlags("schedules history", "ID [--limit N] [--json]", env)
	limit := f.Int("limit", 50, "list the latest N fire times (0: all of them)")
	pos, c, err := f.parseClient(args, 1, 1, env)
	if err != nil {
		return err
	}
	if err := limitFlag(*limit); err != nil {
		return err
	}
	path := schedulePath(pos[0], "triggers")
	all, next, err := pages(*limit, func(q url.Values) ([]trigger, string, error) {
		var page struct {
			Triggers   []trigger `json:"triggers"`
			NextCursor *string   `json:"next_cursor"`
		}
		err := c.request(ctx, http.MethodGet, path, q, nil, &page)
		return page.Triggers, deref(page.NextCursor), err
	})
	if err != nil {
		return err
	}
	if f.json {
		return writeJSON(env, map[string]any{"triggers": all, "next_cursor": nullable(next)})
	}
	p := newPrinter(env, false)
	if len(all) == 0 {
		p.line("no fire times yet")
		return nil
	}
	rows := [][]string{{"FIRE TIME", "OUTCOME", "RUN", "REASON"}}
	for _, t := range all {
		rows = append(rows, []string{fireTime(t.FireTime), t.Outcome, orDash(t.RunID), truncate(oneLine(t.Reason), 100)})
	}
	table(p, rows)
	if next != "" {
		p.line("%s", p.paint(cDim, fmt.Sprintf("the latest %d listed; older ones remain (raise --limit, 0 for all)", len(all))))
	}
	return nil
}
