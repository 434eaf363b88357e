package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Forks (docs/cli.md): baton runs fork starts a run from a message of
// another run and follows it; baton runs compare prints where two runs
// part and what each did.

// forkRef is a fork's origin: the run, the message and the tools mode.
type forkRef struct {
	RunID string `json:"run_id"`
	Seq   int64  `json:"seq"`
	Tools string `json:"tools"`
}

func (r *forkRef) String() string {
	if r == nil {
		return ""
	}
	s := fmt.Sprintf("%s at message %d", r.RunID, r.Seq)
	if r.Tools != "" {
		s += " (tools: " + r.Tools + ")"
	}
	return s
}

// toolModes are the fork's tools modes, the default first.
var toolModes = []string{"reuse", "replay", "live"}

func cmdRunsFork(ctx context.Context, args []string, env *Env) error {
	f := newFlags("runs fork", `RUN --at SEQ [--edit TEXT] [--version V | --alias A] [--tools reuse|replay|live] [--file fork.json] [--idempotency-key K] [--no-input] [--client-tool NAME=COMMAND]…`, env)
	at := f.Int64("at", 0, "the message to fork at: the seq of a user or assistant message of the run (baton runs show RUN prints it before each)")
	edit := f.String("edit", "", "replace that message: an edited question, or an edited answer (the fork then completes with it at once)")
	version := f.String("version", "", "run the fork on this agent version (default: the run's)")
	alias := f.String("alias", "", "run the fork on the version this alias picks")
	tools := f.String("tools", "", "tool calls after the fork point: reuse (default; a call the run made gets its recorded result, others run), replay (nothing runs; unrecorded calls fail not_recorded) or live (all run again)")
	file := f.String("file", "", "a fork body (POST /v1/runs/RUN/fork) to start from: model, max_turns, budgets and the other overrides the agent allows; the flags win")
	key := f.String("idempotency-key", "", "the request's Idempotency-Key: the same key (and flags) makes a command run again the same fork (default: a new key, kept across the command's own retries)")
	ff := addFollowFlags(f)
	pos, err := f.parse(args, 1, 1)
	if err != nil {
		return err
	}
	set := map[string]bool{}
	f.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	switch {
	case !set["at"]:
		return usageErr("name the message to fork at: --at SEQ (baton runs show %s lists the transcript)", pos[0])
	case *at < 1:
		return usageErr("--at wants a message's seq, 1 or more; got %d", *at)
	case set["edit"] && strings.TrimSpace(*edit) == "":
		return usageErr("--edit wants the text that replaces the message (leave it out to keep the message)")
	case *version != "" && *alias != "":
		return usageErr("give --version or --alias, not both")
	case set["version"] && *version == "", set["alias"] && *alias == "":
		return usageErr("--version and --alias want a name")
	case set["tools"] && !slices.Contains(toolModes, *tools):
		return usageErr("--tools wants reuse, replay or live; got %q", *tools)
	case set["idempotency-key"] && strings.TrimSpace(*key) == "":
		return usageErr("--idempotency-key wants a key")
	}
	opts, err := ff.options(f.json)
	if err != nil {
		return err
	}
	body, err := readBody("--file", *file)
	if err != nil {
		return err
	}
	body["seq"] = *at
	if set["edit"] {
		body["content"] = *edit
	}
	if *version != "" {
		body["agent_version"] = *version
		delete(body, "alias")
	}
	if *alias != "" {
		body["alias"] = *alias
		delete(body, "agent_version")
	}
	if *tools != "" {
		body["tools"] = *tools
	}
	c, err := f.client(env)
	if err != nil {
		return err
	}
	if *key == "" {
		*key = newKey()
	}
	v, err := c.postView(ctx, runPath(pos[0], "fork"), body, *key)
	if err != nil {
		return err
	}
	if !f.json {
		p := newPrinter(env, false)
		from := v.ForkedFrom
		if from == nil {
			from = &forkRef{RunID: pos[0], Seq: *at, Tools: *tools}
		}
		p.line("%s %s", p.paint(cDim, "forked"), from)
	}
	return follow(ctx, c, env, v, opts)
}

// newKey is a fresh Idempotency-Key.
func newKey() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "cli-" + hex.EncodeToString(b)
}

// postAttempts is how many times postView sends a request that got no
// answer or a transient error.
const postAttempts = 3

// retryPause is the pause before the n-th retry of a POST.
var retryPause = func(n int) time.Duration { return time.Duration(n) * 500 * time.Millisecond }

// postView posts body with an Idempotency-Key and reads the run view the
// answer carries (postKeyed).
func (c *client) postView(ctx context.Context, path string, body any, key string) (runView, error) {
	raw, err := c.postKeyed(ctx, path, body, key)
	if err != nil {
		return runView{}, err
	}
	return decodeView(raw)
}

// postKeyed posts body with an Idempotency-Key and returns the answer's
// JSON. A request that got no answer, or a transient error (429, 5xx), is
// sent again with the same key: the API acts once however many of them
// arrived.
func (c *client) postKeyed(ctx context.Context, path string, body any, key string) (json.RawMessage, error) {
	hdr := http.Header{"Idempotency-Key": {key}}
	for attempt := 1; ; attempt++ {
		resp, err := c.send(ctx, http.MethodPost, path, nil, body, hdr)
		if err == nil {
			defer resp.Body.Close()
			var raw json.RawMessage
			if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil {
				return nil, fmt.Errorf("POST %s: the response is not the JSON expected: %w", path, err)
			}
			return raw, nil
		}
		if attempt == postAttempts || !transient(err) {
			return nil, err
		}
		if err := pause(ctx, retryPause(attempt)); err != nil {
			return nil, err
		}
	}
}

// transient reports whether a request's error may pass when it is sent
// again: no answer, too many requests (but a limit of schedules, which
// stays until one is deleted), or a server error (but 501: the
// deployment does not have the feature).
func transient(err error) bool {
	var re *reachError
	var ae *APIError
	switch {
	case errors.As(err, &re):
		return true
	case errors.As(err, &ae):
		return (ae.Status == http.StatusTooManyRequests && ae.Code != "schedule_limit_reached") ||
			(ae.Status >= 500 && ae.Status != http.StatusNotImplemented)
	}
	return false
}

// comparison is GET /v1/runs/{a}/compare/{b}.
type comparison struct {
	DivergedAt *struct {
		Seq int64        `json:"seq"`
		A   *messageView `json:"a"`
		B   *messageView `json:"b"`
	} `json:"diverged_at"`
	A compareSide `json:"a"`
	B compareSide `json:"b"`
}

type messageView = message

type compareSide struct {
	RunID        string   `json:"run_id"`
	Status       string   `json:"status"`
	AgentVersion string   `json:"agent_version"`
	ForkedFrom   *forkRef `json:"forked_from"`
	FinalAnswer  string   `json:"final_answer"`
	Turns        int      `json:"turns"`
	TotalTokens  int64    `json:"total_tokens"`
	CostUSD      *float64 `json:"cost_usd"`
	DurationMS   int64    `json:"duration_ms"`
	ToolCalls    []struct {
		Seq        int64  `json:"seq"`
		ToolCallID string `json:"tool_call_id"`
		ToolName   string `json:"tool_name"`
		Outcome    string `json:"outcome"`
		Success    bool   `json:"success"`
	} `json:"tool_calls"`
}

func cmdRunsCompare(ctx context.Context, args []string, env *Env) error {
	f := newFlags("runs compare", "A B", env)
	pos, c, err := f.parseClient(args, 2, 2, env)
	if err != nil {
		return err
	}
	var raw json.RawMessage
	if err := c.request(ctx, http.MethodGet, runPath(pos[0], "compare", pos[1]), nil, nil, &raw); err != nil {
		return err
	}
	if f.json {
		fmt.Fprintln(env.Stdout, string(raw))
		return nil
	}
	var cmp comparison
	if err := json.Unmarshal(raw, &cmp); err != nil {
		return fmt.Errorf("the comparison is not the JSON expected: %w", err)
	}
	showComparison(newPrinter(env, false), cmp)
	return nil
}

// cellWidth is the widest a side's cell of the comparison table gets;
// longer text is cut (--json has all of it).
const cellWidth = 40

// showComparison prints where two runs part (the first message that
// differs, each side's shortened) and a table of the two side by side.
func showComparison(p *printer, cmp comparison) {
	a, b := cmp.A, cmp.B
	if d := cmp.DivergedAt; d == nil {
		p.line("%s and %s have the same transcript", a.RunID, b.RunID)
	} else {
		p.line("%s and %s diverge at message %d:", a.RunID, b.RunID, d.Seq)
		p.line("  %s %s", p.paint(cBold, "A"), messageLine(d.A))
		p.line("  %s %s", p.paint(cBold, "B"), messageLine(d.B))
	}
	p.line("")
	type row struct {
		label  string
		cells  [2]string
		colour [2]string
	}
	both := func(label string, f func(s compareSide) string) row {
		return row{label: label, cells: [2]string{f(a), f(b)}}
	}
	rows := []row{
		{label: "", cells: [2]string{"A " + a.RunID, "B " + b.RunID}, colour: [2]string{cBold, cBold}},
		{label: "status", cells: [2]string{a.Status, b.Status}, colour: [2]string{statusColour(a.Status), statusColour(b.Status)}},
		both("version", func(s compareSide) string { return s.AgentVersion }),
	}
	if a.ForkedFrom != nil || b.ForkedFrom != nil {
		rows = append(rows, both("forked from", func(s compareSide) string { return s.ForkedFrom.String() }))
	}
	rows = append(rows,
		both("final answer", func(s compareSide) string { return oneLine(s.FinalAnswer) }),
		both("turns", func(s compareSide) string { return strconv.Itoa(s.Turns) }),
		both("tokens", func(s compareSide) string { return thousands(s.TotalTokens) }),
		both("cost", func(s compareSide) string {
			if s.CostUSD == nil {
				return "not priced"
			}
			return fmt.Sprintf("$%.6f", *s.CostUSD)
		}),
		both("duration", func(s compareSide) string {
			return (time.Duration(s.DurationMS) * time.Millisecond).String()
		}),
		both("tool calls", func(s compareSide) string { return callsSummary(s) }),
	)
	for i := 0; i < max(len(a.ToolCalls), len(b.ToolCalls)); i++ {
		r := row{}
		for j, s := range []compareSide{a, b} {
			if i < len(s.ToolCalls) {
				tc := s.ToolCalls[i]
				result := "ok"
				if !tc.Success {
					result = "failed"
				}
				r.cells[j] = fmt.Sprintf("%d %s %s %s", tc.Seq, tc.ToolName, tc.Outcome, result)
				r.colour[j] = outcomeColour(tc.Outcome, tc.Success)
			}
		}
		rows = append(rows, r)
	}
	labelW := len("final answer")
	var w [2]int
	for i := range rows {
		for j := range rows[i].cells {
			rows[i].cells[j] = truncate(rows[i].cells[j], cellWidth-1)
			w[j] = max(w[j], len([]rune(rows[i].cells[j])))
		}
	}
	for _, r := range rows {
		line := fmt.Sprintf("%-*s", labelW, r.label)
		for j, cell := range r.cells {
			pad := strings.Repeat(" ", w[j]-len([]rune(cell)))
			if j == len(r.cells)-1 {
				pad = ""
			}
			line += "  " + p.paint(r.colour[j], cell) + pad
		}
		p.line("%s", strings.TrimRight(line, " "))
	}
}

// messageLine is a message of a comparison in one shortened line.
func messageLine(m *messageView) string {
	if m == nil {
		return "(no message)"
	}
	text := oneLine(m.Content)
	if m.Role == "tool_call" || m.Role == "tool_result" {
		text = strings.TrimSpace(m.meta("tool_name") + " " + text)
		if m.Role == "tool_call" && m.Metadata["parameters"] != nil {
			text += " " + compact(m.Metadata["parameters"])
		}
	}
	return fmt.Sprintf("%d %s: %s", m.Seq, m.Role, truncate(text, 120))
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// callsSummary counts a side's tool calls by outcome.
func callsSummary(s compareSide) string {
	if len(s.ToolCalls) == 0 {
		return "none"
	}
	n := map[string]int{}
	var order []string
	for _, tc := range s.ToolCalls {
		if n[tc.Outcome] == 0 {
			order = append(order, tc.Outcome)
		}
		n[tc.Outcome]++
	}
	parts := make([]string, len(order))
	for i, o := range order {
		parts[i] = fmt.Sprintf("%d %s", n[o], strings.ReplaceAll(o, "_", " "))
	}
	return strings.Join(parts, ", ")
}

func outcomeColour(outcome string, success bool) string {
	switch {
	case outcome == "not_recorded" || !success:
		return cRed
	case outcome == "replayed":
		return cCyan
	}
	return ""
}

// thousands writes n with commas between groups of three digits.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}
