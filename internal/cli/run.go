package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/baton-agents/baton/internal/sse"
)

// multiFlag collects a repeatable flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// followOptions say how a followed run's pauses are answered.
type followOptions struct {
	noInput     bool
	clientTools map[string]string // tool name → shell command
	json        bool
}

func cmdRun(ctx context.Context, args []string, env *Env) error {
	f := newFlags("run", `--agent SLUG [--session ID] [--file request.json] [--client-tool NAME=COMMAND]… [--no-input] "message"`, env)
	agent := f.String("agent", "", "agent slug (overrides the file's agent)")
	session := f.String("session", "", "continue this session")
	file := f.String("file", "", "a POST /v1/runs body to start from")
	ff := addFollowFlags(f)
	pos, err := f.parse(args, 0, 1)
	if err != nil {
		return err
	}
	opts, err := ff.options(f.json)
	if err != nil {
		return err
	}
	body, err := readBody("--file", *file)
	if err != nil {
		return err
	}
	if *agent != "" {
		body["agent"] = *agent
	}
	if err := declareClientTools(body, opts.clientTools); err != nil {
		return err
	}
	if body["agent"] == nil {
		return usageErr("name the agent: --agent SLUG (or \"agent\" in --file)")
	}
	if *session != "" {
		body["session_id"] = *session
	}
	if len(pos) == 1 {
		msgs, _ := body["messages"].([]any)
		if body["messages"] != nil && msgs == nil {
			return usageErr("--file: messages must be an array")
		}
		body["messages"] = append(msgs, map[string]any{"role": "user", "content": pos[0]})
	}
	if body["messages"] == nil {
		return usageErr("give a message: baton run --agent SLUG \"message\"")
	}
	c, err := f.client(env)
	if err != nil {
		return err
	}
	v, err := c.view(ctx, http.MethodPost, "/v1/runs", body)
	if err != nil {
		return err
	}
	return follow(ctx, c, env, v, opts)
}

// followFlags are the flags of a command that follows a run: --no-input
// and --client-tool.
type followFlags struct {
	noInput *bool
	tools   multiFlag
}

func addFollowFlags(f *cmdFlags) *followFlags {
	ff := &followFlags{noInput: f.Bool("no-input", false, "never prompt: exit with code 3 at a pause")}
	f.Var(&ff.tools, "client-tool", "answer client tool NAME by running COMMAND (parameters on stdin, result JSON on stdout); repeatable")
	return ff
}

// options checks the flags' values and returns the follow options.
func (ff *followFlags) options(json bool) (followOptions, error) {
	opts := followOptions{noInput: *ff.noInput, clientTools: map[string]string{}, json: json}
	for _, t := range ff.tools {
		name, command, ok := strings.Cut(t, "=")
		if !ok || strings.TrimSpace(name) == "" || strings.TrimSpace(command) == "" {
			return opts, usageErr("--client-tool wants NAME=COMMAND, got %q", t)
		}
		name = strings.TrimSpace(name)
		if !strings.HasPrefix(name, "client/") || len(name) == len("client/") {
			return opts, usageErr("--client-tool answers a client tool, whose name starts with client/ (like client/get_calendar), got %q", name)
		}
		opts.clientTools[name] = command
	}
	return opts, nil
}

// readBody reads a request body from the file a flag names (such as
// --file): a JSON object (an empty one without a file).
func readBody(flagName, file string) (map[string]any, error) {
	body := map[string]any{}
	if file == "" {
		return body, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flagName, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&body); err != nil {
		return nil, usageErr("%s %s is not a JSON object: %v", flagName, file, err)
	}
	return body, nil
}

// declareClientTools adds to the request's tools a declaration of each
// client tool a --client-tool answers that the request does not declare
// itself, so the model is offered it.
func declareClientTools(body map[string]any, tools map[string]string) error {
	if len(tools) == 0 {
		return nil
	}
	declared, ok := body["tools"].([]any)
	if body["tools"] != nil && !ok {
		return usageErr("--file: tools must be an array")
	}
	have := map[string]bool{}
	for _, d := range declared {
		if m, ok := d.(map[string]any); ok {
			name, _ := m["name"].(string)
			have[name] = true
		}
	}
	names := make([]string, 0, len(tools))
	for name := range tools {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !have[name] {
			declared = append(declared, map[string]any{"name": name, "description": "Answered on this machine by: " + tools[name], "parameters": map[string]any{"type": "object"}})
		}
	}
	body["tools"] = declared
	return nil
}

// follow streams a run until it finishes, answering its pauses as opts
// say, prints the end, and returns the exit code of its status.
func follow(ctx context.Context, c *client, env *Env, v runView, opts followOptions) error {
	p := newPrinter(env, opts.json)
	stop := p.startProgress("waiting for the run")
	defer stop()
	p.line("%s %s %s", p.paint(cDim, "run"), p.paint(cBold, v.RunID), p.paint(cDim, "(agent "+v.Agent+", session "+v.SessionID+")"))
	st := newStreamState(p)
	empty := 0 // reconnects in a row that brought nothing new
	for {
		seen := st.lastSeq
		end, err := st.stream(ctx, c, v.RunID)
		if err != nil {
			return err
		}
		if end == nil {
			// The stream ended early (its time was up): resume, at once
			// when it brought events, else after a growing pause, and
			// give up when the server keeps closing empty streams.
			if st.lastSeq != seen {
				empty = 0
				continue
			}
			if empty++; empty > maxEmptyReconnects {
				return fmt.Errorf("the stream of run %s closed %d times in a row without an event or its end", v.RunID, empty)
			}
			if err := pause(ctx, reconnectPause(empty)); err != nil {
				return err
			}
			continue
		}
		v = *end
		switch v.Status {
		case "runtime_tool_pending", "approval_required":
			answered, err := answer(ctx, c, env, p, v, opts)
			if err != nil {
				return err
			}
			if !answered {
				return finish(env, p, v, st, opts)
			}
		default:
			return finish(env, p, v, st, opts)
		}
	}
}

// maxEmptyReconnects is how many streams in a row may close without an
// event before follow gives up.
const maxEmptyReconnects = 10

// reconnectPause is the pause before the n-th empty reconnect in a row.
var reconnectPause = func(n int) time.Duration { return min(time.Duration(n)*time.Second, 10*time.Second) }

// pause waits d, or returns ctx's error when it ends first.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// streamState carries what a followed run has shown across reconnects.
type streamState struct {
	p       *printer
	lastSeq int64
	// streamed is the text streamed for the current turn.
	streamed strings.Builder
	turn     int
	// starts and ends are when each tool call started and, for an agent
	// tool's call, when its child run finished: its result may be
	// recorded later, with its slower parallel siblings' (results are
	// recorded in call order).
	starts, ends map[string]time.Time
}

func newStreamState(p *printer) *streamState {
	return &streamState{p: p, starts: map[string]time.Time{}, ends: map[string]time.Time{}}
}

// stream reads the run's stream from the last event seen, printing as it
// goes; it returns the run view of the final end event, or nil when the
// stream closed without one.
func (st *streamState) stream(ctx context.Context, c *client, runID string) (*runView, error) {
	hdr := http.Header{"Accept": {"text/event-stream"}}
	if st.lastSeq > 0 {
		hdr.Set("Last-Event-ID", strconv.FormatInt(st.lastSeq, 10))
	}
	resp, err := c.send(ctx, http.MethodGet, runPath(runID, "stream"), nil, nil, hdr)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNoContent {
		// Nothing after the last event seen, and the run has finished or
		// paused: the run view says how.
		v, err := c.view(ctx, http.MethodGet, runPath(runID), nil)
		if err != nil || v.Status == "queued" || v.Status == "running" {
			return nil, err // it moved on meanwhile: reconnect
		}
		return &v, nil
	}
	r := sse.NewReader(resp.Body)
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read the run's stream: %w", err)
		}
		switch ev.Event {
		case "end":
			v, err := decodeView([]byte(ev.Data))
			if err != nil {
				return nil, err
			}
			return &v, nil
		case "token":
			var tok struct {
				Turn  int    `json:"turn"`
				Delta string `json:"delta"`
			}
			if json.Unmarshal([]byte(ev.Data), &tok) == nil {
				if tok.Turn != st.turn {
					st.turn = tok.Turn
					st.streamed.Reset()
				}
				st.streamed.WriteString(tok.Delta)
				st.p.text(tok.Delta)
			}
		case "thinking":
		default:
			// An id without data (a turn_started whose start came before
			// its tokens) only moves the cursor.
			if n, err := strconv.ParseInt(ev.ID, 10, 64); err == nil && n > st.lastSeq {
				st.lastSeq = n
			}
			var e event
			if err := json.Unmarshal([]byte(ev.Data), &e); err != nil {
				continue
			}
			if err := st.showUnstreamed(ctx, c, runID, e); err != nil {
				return nil, err
			}
			st.show(e)
		}
	}
}

// showUnstreamed prints the text of a model reply whose tokens were not
// streamed (the run or agent does not stream tokens, an output guardrail
// holds them, the model does not stream), from the committed messages
// the reply's messages_updated event names.
func (st *streamState) showUnstreamed(ctx context.Context, c *client, runID string, e event) error {
	if e.Type != "messages_updated" || e.Data["reason"] != "model_reply" || e.Turn == st.turn {
		return nil
	}
	from, _ := e.Data["from_seq"].(float64)
	to, _ := e.Data["to_seq"].(float64)
	if from < 1 || to < from {
		return nil
	}
	var page struct {
		Messages []message `json:"messages"`
	}
	q := url.Values{"after": {strconv.FormatInt(int64(from)-1, 10)}, "limit": {strconv.FormatInt(int64(to-from)+1, 10)}}
	if err := c.request(ctx, http.MethodGet, runPath(runID, "messages"), q, nil, &page); err != nil {
		return err
	}
	st.turn = e.Turn
	st.streamed.Reset()
	for _, m := range page.Messages {
		if m.Role == "assistant" && m.Content != "" {
			st.streamed.WriteString(m.Content)
			st.p.text(m.Content)
		}
	}
	return nil
}

// show prints the lifecycle events a person follows: one line per tool
// call (status and duration) and pauses.
func (st *streamState) show(e event) {
	p := st.p
	at, _ := time.Parse(time.RFC3339Nano, e.At)
	str := func(k string) string { s, _ := e.Data[k].(string); return s }
	switch e.Type {
	case "tool_call", "tool_call_start":
		if _, ok := st.starts[str("tool_call_id")]; !ok {
			st.starts[str("tool_call_id")] = at
		}
	case "tool_retry":
		again := "trying again"
		if w := str("wait"); w != "" {
			again += " in " + w
		}
		attempt, _ := e.Data["attempt"].(float64)
		attempts, _ := e.Data["attempts"].(float64)
		p.line("  %s %s %s: %s", p.paint(cYellow, "↻"), p.paint(cCyan, str("tool_name")),
			p.paint(cYellow, fmt.Sprintf("attempt %d of %d failed, %s", int(attempt), int(attempts), again)), truncate(strings.Join(strings.Fields(str("reason")), " "), 200))
	case "child_run_finished":
		if !at.IsZero() {
			st.ends[str("tool_call_id")] = at
		}
	case "tool_result":
		name := first(str("tool_name"), str("name"))
		took := ""
		end, ok := st.ends[str("tool_call_id")]
		if !ok || at.Before(end) {
			end = at
		}
		if t0, ok := st.starts[str("tool_call_id")]; ok && !end.IsZero() {
			took = " " + p.paint(cDim, end.Sub(t0).Round(time.Millisecond).String())
		}
		if replayed, _ := e.Data["replayed"].(bool); replayed {
			// A fork's call answered from its source run's record: it ran
			// nothing, so its duration says nothing.
			took = " " + p.paint(cCyan, "replayed")
		}
		if ok, _ := e.Data["success"].(bool); ok {
			p.line("  %s %s %s%s", p.paint(cGreen, "✓"), p.paint(cCyan, name), "ok", took)
		} else {
			why := ""
			if r := strings.Join(strings.Fields(str("result")), " "); r != "" {
				why = ": " + truncate(r, 200)
			}
			p.line("  %s %s %s%s%s", p.paint(cRed, "✗"), p.paint(cCyan, name), p.paint(cRed, "failed "+first(str("error_type"), "error")), why, took)
		}
	case "tool_result_truncated":
		p.line("  %s", p.paint(cDim, "(a tool result was truncated)"))
	}
}

// answer asks for (or computes) the answers a paused run waits on and
// submits them; answered is false when the run is left paused.
func answer(ctx context.Context, c *client, env *Env, p *printer, v runView, opts followOptions) (bool, error) {
	p.line("%s %s", p.paint(cYellow, "⏸ paused:"), p.paint(cBold, strings.ReplaceAll(v.Status, "_", " ")))
	for _, r := range v.Pending.ToolRequests {
		p.line("  client tool %s wants a result (request %s)", p.paint(cCyan, r.ToolName), r.RequestID)
		p.line("  parameters: %s", compact(r.Parameters))
		if command, ok := opts.clientTools[r.ToolName]; ok {
			body := runClientTool(ctx, command, r.Parameters)
			body["request_id"] = r.RequestID
			if _, err := c.view(ctx, http.MethodPost, runPath(v.RunID, "tool-results"), body); err != nil {
				return false, err
			}
			p.line("  %s answered by %s", p.paint(cGreen, "→"), command)
			continue
		}
		if opts.noInput {
			p.line("  answer with: baton submit %s %s --result JSON", v.RunID, r.RequestID)
			return false, nil
		}
		body, ok := promptResult(env)
		if !ok {
			return false, nil
		}
		body["request_id"] = r.RequestID
		if _, err := c.view(ctx, http.MethodPost, runPath(v.RunID, "tool-results"), body); err != nil {
			return false, err
		}
	}
	for _, a := range v.Pending.Actions {
		p.line("  approval of %s%s (action %s)", p.paint(cCyan, a.ToolName), of(a.RunID), a.ActionID)
		if a.Summary != "" {
			p.line("  summary: %s", a.Summary)
		}
		if a.Preview != nil {
			p.line("  preview: %s", compact(a.Preview))
		}
		if opts.noInput {
			p.line("  answer with: baton approve %s %s [--reject --reason R]", v.RunID, a.ActionID)
			return false, nil
		}
		body, ok := promptDecision(env)
		if !ok {
			return false, nil
		}
		if _, err := c.view(ctx, http.MethodPost, runPath(v.RunID, "approvals", a.ActionID), body); err != nil {
			return false, err
		}
	}
	return true, nil
}

// prompt writes a question to stderr and reads one line of stdin; ok is
// false at the end of stdin.
func prompt(env *Env, question string) (string, bool) {
	fmt.Fprint(env.Stderr, question)
	line, err := env.in.ReadString('\n')
	if err != nil && line == "" {
		fmt.Fprintln(env.Stderr)
		return "", false
	}
	return strings.TrimSpace(line), true
}

// promptDecision asks accept or reject, and a reason on reject.
func promptDecision(env *Env) (map[string]any, bool) {
	for {
		ans, ok := prompt(env, "  accept? [y/n] ")
		if !ok {
			return nil, false
		}
		switch strings.ToLower(ans) {
		case "y", "yes", "a", "accept":
			return map[string]any{"decision": "accept"}, true
		case "n", "no", "r", "reject":
			// The reason is optional: the end of input here rejects
			// without one (the decision was made).
			reason, _ := prompt(env, "  reason (optional): ")
			body := map[string]any{"decision": "reject"}
			if reason != "" {
				body["reason"] = reason
			}
			return body, true
		}
		fmt.Fprintln(env.Stderr, "  answer y or n")
	}
}

// promptResult reads a client tool's result: a JSON value, or "!" and an
// error message for a failed result.
func promptResult(env *Env) (map[string]any, bool) {
	for {
		ans, ok := prompt(env, "  result (JSON, or !message for an error): ")
		if !ok {
			return nil, false
		}
		if msg, failed := strings.CutPrefix(ans, "!"); failed {
			return map[string]any{"success": false, "error": strings.TrimSpace(msg)}, true
		}
		var v any
		if ans != "" && json.Unmarshal([]byte(ans), &v) == nil {
			return map[string]any{"success": true, "result": json.RawMessage(ans)}, true
		}
		fmt.Fprintln(env.Stderr, "  that is not JSON; try again")
	}
}

// runClientTool runs command with the parameters as JSON on stdin: its
// stdout is the result (JSON, or else its text); a failure (non-zero
// exit) is a failed result carrying its stderr.
func runClientTool(ctx context.Context, command string, params any) map[string]any {
	in, _ := json.Marshal(params)
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Stdin = bytes.NewReader(in)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errOut.String())
		if msg == "" {
			msg = err.Error()
		}
		return map[string]any{"success": false, "error": truncate(msg, 2000)}
	}
	raw := bytes.TrimSpace(out.Bytes())
	var v any
	if json.Unmarshal(raw, &v) == nil {
		return map[string]any{"success": true, "result": json.RawMessage(raw)}
	}
	return map[string]any{"success": true, "result": string(raw)}
}

// finish prints a run's end (the view with --json) and returns the exit
// code of its status.
func finish(env *Env, p *printer, v runView, st *streamState, opts followOptions) error {
	if opts.json {
		fmt.Fprintln(env.Stdout, string(v.raw))
		return codeErr(exitCode(v.Status))
	}
	if r := v.Result; r != nil {
		if r.FinalContent != "" && strings.TrimSpace(r.FinalContent) != strings.TrimSpace(st.streamed.String()) {
			p.line("%s", r.FinalContent)
		}
		p.line("")
		p.line("%s %s · %s · usage: %s%s", p.paint(cDim, "status"), v.statusText(p), count(r.TurnCount, "turn"), usageLine(r.Usage), costLine(r.Cost))
		if len(r.Interrupted) > 0 {
			p.line("%s %s", p.paint(cDim, "interrupted:"), compact(r.Interrupted))
		}
	}
	return codeErr(exitCode(v.Status))
}

func codeErr(code int) error {
	if code == ExitOK {
		return nil
	}
	return &exitError{code}
}
