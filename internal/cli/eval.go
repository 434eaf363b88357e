package cli

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Evaluations (docs/cli.md): baton eval run sends a JSONL dataset to
// POST /v1/evals, watches the eval to its end and prints each case's
// outcome; show, ls and cancel read and stop evals; dataset writes a
// dataset from recorded runs.

// evalView is an eval view (GET /v1/evals/{id}); raw is the whole view.
type evalView struct {
	EvalID       string `json:"eval_id"`
	Name         string `json:"name"`
	Agent        string `json:"agent"`
	AgentVersion string `json:"agent_version"`
	Alias        string `json:"alias"`
	Tools        string `json:"tools"`
	Status       string `json:"status"`
	CreatedAt    string `json:"created_at"`
	EndedAt      string `json:"ended_at"`
	Progress     struct {
		Total   int `json:"total"`
		Started int `json:"started"`
		Scored  int `json:"scored"`
		Passed  int `json:"passed"`
		Failed  int `json:"failed"`
	} `json:"progress"`
	Totals struct {
		PassRate       *float64 `json:"pass_rate"`
		MeanTurns      float64  `json:"mean_turns"`
		TotalTokens    int64    `json:"total_tokens"`
		MeanTokens     float64  `json:"mean_tokens"`
		CostUSD        *float64 `json:"cost_usd"`
		MeanDurationMS float64  `json:"mean_duration_ms"`
	} `json:"totals"`
	Cases []evalCase `json:"cases"`
	raw   json.RawMessage
}

// evalCase is one case of an eval view.
type evalCase struct {
	ID          string      `json:"id"`
	Index       int         `json:"index"`
	RunID       string      `json:"run_id"`
	Status      string      `json:"status"`
	Pass        *bool       `json:"pass"`
	Checks      []evalCheck `json:"checks"`
	FinalAnswer string      `json:"final_answer"`
	Turns       int         `json:"turns"`
	TotalTokens int64       `json:"total_tokens"`
	CostUSD     *float64    `json:"cost_usd"`
	DurationMS  int64       `json:"duration_ms"`
	DivergedAt  *struct {
		Seq int64 `json:"seq"`
	} `json:"diverged_at"`
	Judge *struct {
		RunID  string  `json:"run_id"`
		Score  float64 `json:"score"`
		Reason string  `json:"reason"`
	} `json:"judge"`
}

type evalCheck struct {
	Name   string `json:"name"`
	Pass   bool   `json:"pass"`
	Detail string `json:"detail"`
}

// scored reports whether the case has its verdict.
func (c evalCase) scored() bool { return c.Pass != nil }

func (c evalCase) passed() bool { return c.Pass != nil && *c.Pass }

// failing is the case's failing checks.
func (c evalCase) failing() []evalCheck {
	var out []evalCheck
	for _, ch := range c.Checks {
		if !ch.Pass {
			out = append(out, ch)
		}
	}
	return out
}

// firstFailure is the first failing check as "name: detail" ("" when
// none failed).
func (c evalCase) firstFailure() string {
	f := c.failing()
	if len(f) == 0 {
		return ""
	}
	return strings.TrimSuffix(f[0].Name+": "+oneLine(f[0].Detail), ": ")
}

// running reports whether the eval may still change.
func (v evalView) running() bool {
	return v.Status == "running" || v.Status == "queued" || v.Status == "pending"
}

// passRate is the eval's pass rate (0 when none is scored).
func (v evalView) passRate() float64 {
	if v.Totals.PassRate == nil {
		return 0
	}
	return *v.Totals.PassRate
}

// allPassed reports whether every case of the eval passed.
func (v evalView) allPassed() bool {
	if v.Progress.Total == 0 || v.Progress.Passed != v.Progress.Total {
		return false
	}
	for _, c := range v.Cases {
		if !c.passed() {
			return false
		}
	}
	return true
}

func decodeEval(raw []byte) (evalView, error) {
	var v evalView
	if err := json.Unmarshal(raw, &v); err != nil {
		return evalView{}, fmt.Errorf("the eval view is not the JSON expected: %w", err)
	}
	v.raw = append(json.RawMessage(nil), raw...)
	return v, nil
}

func evalPath(id string, rest ...string) string {
	p := "/v1/evals/" + url.PathEscape(id)
	for _, r := range rest {
		p += "/" + url.PathEscape(r)
	}
	return p
}

func (c *client) eval(ctx context.Context, id string) (evalView, error) {
	var raw json.RawMessage
	if err := c.request(ctx, http.MethodGet, evalPath(id), nil, nil, &raw); err != nil {
		return evalView{}, err
	}
	return decodeEval(raw)
}

func cmdEval(ctx context.Context, args []string, env *Env) error {
	if len(args) == 0 {
		return usageErr("want eval run|show|ls|cancel|dataset")
	}
	switch args[0] {
	case "run":
		return cmdEvalRun(ctx, args[1:], env)
	case "show":
		return cmdEvalShow(ctx, args[1:], env)
	case "ls", "list":
		return cmdEvalList(ctx, args[1:], env)
	case "cancel":
		return cmdEvalCancel(ctx, args[1:], env)
	case "dataset":
		return cmdEvalDataset(ctx, args[1:], env)
	}
	return usageErr("unknown eval command %q: want run, show, ls, cancel or dataset", args[0])
}

// maxCaseLine is the longest dataset line read (a case with its tools
// and expectations).
const maxCaseLine = 16 << 20

// readDataset reads a JSONL dataset: one case per line (blank lines
// skipped), each a JSON object with an id (1 to 128 characters, unique)
// and either input (an object) or from_run (a run id). A line that is
// not is a usage error naming its number. The rest of a case is the
// API's to check.
//
// lines holds each case's line number.
func readDataset(r io.Reader, name string) (cases []json.RawMessage, lines []int, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxCaseLine)
	seen := map[string]int{}
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		bad := func(format string, args ...any) error {
			return usageErr("%s line %d: %s; nothing was sent", name, n, fmt.Sprintf(format, args...))
		}
		var c map[string]json.RawMessage
		dec := json.NewDecoder(bytes.NewReader(line))
		if err := dec.Decode(&c); err != nil {
			return nil, nil, bad("not JSON: %v", err)
		}
		if dec.More() {
			return nil, nil, bad("more than one JSON value (one case per line)")
		}
		if c == nil {
			return nil, nil, bad("a case is a JSON object")
		}
		var id string
		if err := json.Unmarshal(c["id"], &id); err != nil || id == "" {
			return nil, nil, bad(`a case needs an "id" string`)
		}
		if len([]rune(id)) > 128 {
			return nil, nil, bad("the id is %d characters long, at most 128", len([]rune(id)))
		}
		if prev, dup := seen[id]; dup {
			return nil, nil, bad("id %q is already the id of line %d", id, prev)
		}
		seen[id] = n
		_, hasInput := c["input"]
		_, hasRun := c["from_run"]
		switch {
		case hasInput == hasRun:
			return nil, nil, bad(`case %q needs "input" or "from_run", one of them`, id)
		case hasInput && !isObject(c["input"]):
			return nil, nil, bad(`case %q: "input" is a JSON object`, id)
		case hasRun:
			var run string
			if json.Unmarshal(c["from_run"], &run) != nil || run == "" {
				return nil, nil, bad(`case %q: "from_run" is a run id`, id)
			}
		}
		if e, ok := c["expect"]; ok && !isObject(e) {
			return nil, nil, bad(`case %q: "expect" is a JSON object`, id)
		}
		cases = append(cases, append(json.RawMessage(nil), line...))
		lines = append(lines, n)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, nil, usageErr("%s: a line is longer than %d MiB; nothing was sent", name, maxCaseLine>>20)
		}
		return nil, nil, err
	}
	if len(cases) == 0 {
		return nil, nil, usageErr("%s has no cases; nothing was sent", name)
	}
	return cases, lines, nil
}

func isObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}

// evalPoll is the pause between two reads of a watched eval.
var evalPoll = time.Second

// evalToolModes are the eval's tools modes.
var evalToolModes = []string{"replay", "reuse", "live"}

func cmdEvalRun(ctx context.Context, args []string, env *Env) error {
	f := newFlagsNoJSON("eval run", "DATASET.jsonl --agent A [--version V | --alias X] [--against V2] [--tools replay|reuse|live] [--concurrency N] [--judge AGENT] [--name N] [--min-pass P] [--json FILE] [--junit FILE]", env)
	agent := f.String("agent", "", "the agent to evaluate")
	version := f.String("version", "", "the agent version to evaluate (default: the one new runs get)")
	alias := f.String("alias", "", "evaluate the version this alias picks")
	against := f.String("against", "", "also evaluate this version on the same dataset, and print the two side by side")
	tools := f.String("tools", "", "tool calls: replay (nothing runs: recorded results), reuse (recorded results where recorded, the rest run) or live (default: replay for from_run cases, live for input cases)")
	concurrency := f.Int("concurrency", 0, "cases run at once, 1 to 50 (default: the API's, 5)")
	judge := f.String("judge", "", "the agent that scores cases with a rubric")
	name := f.String("name", "", "the eval's label (default: the dataset's file name)")
	minPass := f.Float64("min-pass", 1, "exit 1 when the (first) eval's pass rate is below this, 0 to 1")
	jsonFile := f.String("json", "", "write the eval view (with --against: {\"a\": view, \"b\": view}) to this file")
	junitFile := f.String("junit", "", "write the cases as JUnit XML to this file")
	pos, err := f.parse(args, 1, 1)
	if err != nil {
		return err
	}
	set := map[string]bool{}
	f.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	switch {
	case *agent == "":
		return usageErr("name the agent to evaluate: --agent A")
	case *version != "" && *alias != "":
		return usageErr("give --version or --alias, not both")
	case set["version"] && *version == "", set["alias"] && *alias == "", set["against"] && *against == "":
		return usageErr("--version, --alias and --against want a name")
	case set["tools"] && !slices.Contains(evalToolModes, *tools):
		return usageErr("--tools wants replay, reuse or live; got %q", *tools)
	case set["concurrency"] && (*concurrency < 1 || *concurrency > 50):
		return usageErr("--concurrency wants 1 to 50; got %d", *concurrency)
	case *minPass < 0 || *minPass > 1:
		return usageErr("--min-pass wants a pass rate from 0 to 1; got %g", *minPass)
	case set["json"] && *jsonFile == "", set["junit"] && *junitFile == "":
		return usageErr("--json and --junit want a file name")
	}
	file, err := os.Open(pos[0])
	if err != nil {
		return err
	}
	cases, lines, err := readDataset(file, pos[0])
	file.Close()
	if err != nil {
		return err
	}
	if *name == "" {
		*name = strings.TrimSuffix(filepath.Base(pos[0]), filepath.Ext(pos[0]))
	}
	c, err := f.client(env)
	if err != nil {
		return err
	}
	body := map[string]any{"dataset": cases, "agent": *agent, "name": *name}
	switch {
	case *version != "":
		body["agent_version"] = *version
	case *alias != "":
		body["alias"] = *alias
	}
	if *tools != "" {
		body["tools"] = *tools
	}
	if *concurrency > 0 {
		body["concurrency"] = *concurrency
	}
	if *judge != "" {
		body["judge"] = *judge
	}
	first, err := startEval(ctx, c, body)
	if err != nil {
		return datasetRefusal(err, pos[0], lines)
	}
	evals := []evalView{first}
	if *against != "" {
		// The second eval runs the first one's cases (dataset_from), on
		// version V2.
		other := maps.Clone(body)
		delete(other, "alias")
		delete(other, "dataset")
		other["dataset_from"] = first.EvalID
		other["agent_version"] = *against
		second, err := startEval(ctx, c, other)
		if err != nil {
			return fmt.Errorf("eval %s started, but the one against %s did not: %w", first.EvalID, *against, err)
		}
		evals = append(evals, second)
	}
	ids := make([]string, len(evals))
	for i, v := range evals {
		ids[i] = v.EvalID
		fmt.Fprintf(env.Stderr, "eval %s started: %s on agent %s version %s\n", v.EvalID, count(v.Progress.Total, "case"), v.Agent, cmp.Or(v.AgentVersion, "(default)"))
	}
	fmt.Fprintf(env.Stderr, "Ctrl-C stops watching only: the eval keeps running on the server (baton eval cancel %s stops it)\n", strings.Join(ids, " "))
	evals, err = watchEvals(ctx, c, env, evals)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(env.Stderr, "\nstopped watching; still running on the server: baton eval show %s, baton eval cancel %s\n", strings.Join(ids, ", baton eval show "), strings.Join(ids, " "))
			return &exitError{ExitCancelled}
		}
		return err
	}
	p := newPrinter(env, false)
	if len(evals) == 2 {
		showEvalPair(p, evals[0], evals[1])
	} else {
		showEval(p, evals[0])
	}
	if *jsonFile != "" {
		out := evals[0].raw
		if len(evals) == 2 {
			if out, err = json.Marshal(map[string]json.RawMessage{"a": evals[0].raw, "b": evals[1].raw}); err != nil {
				return err
			}
		}
		if err := os.WriteFile(*jsonFile, append(out, '\n'), 0o644); err != nil {
			return err
		}
	}
	if *junitFile != "" {
		b, err := junitXML(evals)
		if err != nil {
			return err
		}
		if err := os.WriteFile(*junitFile, b, 0o644); err != nil {
			return err
		}
	}
	return passGate(env, evals[0], *minPass)
}

// datasetRefusal names the file's line of a case the API refused
// (invalid_dataset's details.line is the case's position in the dataset
// sent, which skipped blank lines): a usage error, as a line the command
// refused itself is.
func datasetRefusal(err error, file string, lines []int) error {
	var ae *APIError
	if !errors.As(err, &ae) || ae.Code != "invalid_dataset" {
		return err
	}
	n, _ := ae.Details["line"].(float64)
	if i := int(n); float64(i) == n && i >= 1 && i <= len(lines) {
		return usageErr("%s line %d: %v; nothing was started", file, lines[i-1], err)
	}
	return usageErr("%s: %v; nothing was started", file, err)
}

// passGate ends the command with exit 1 when the eval was cancelled or
// its pass rate is below minPass.
func passGate(env *Env, v evalView, minPass float64) error {
	switch {
	case v.Status == "cancelled":
		fmt.Fprintf(env.Stderr, "eval %s was cancelled\n", v.EvalID)
		return &exitError{ExitError}
	case v.passRate() < minPass:
		fmt.Fprintf(env.Stderr, "eval %s: pass rate %s is below --min-pass %s\n", v.EvalID, percent(v.passRate()), percent(minPass))
		return &exitError{ExitError}
	}
	return nil
}

// startEval posts an eval (with an Idempotency-Key, sent again on no
// answer or a transient error) and reads its view.
func startEval(ctx context.Context, c *client, body map[string]any) (evalView, error) {
	raw, err := c.postKeyed(ctx, "/v1/evals", body, newKey())
	if err != nil {
		return evalView{}, err
	}
	return decodeEval(raw)
}

// watchEvals reads the evals again every evalPoll until none runs,
// showing their progress on stderr: a bar redrawn in place on a
// terminal, else a line each time a case is scored.
func watchEvals(ctx context.Context, c *client, env *Env, evals []evalView) ([]evalView, error) {
	last := make([]int, len(evals))
	for i := range last {
		last[i] = -1
	}
	drawn := false
	defer func() {
		if drawn {
			fmt.Fprint(env.Stderr, "\r\x1b[K")
		}
	}()
	for {
		done := true
		for i, v := range evals {
			if v.running() {
				done = false
			}
			if env.StderrTTY {
				continue
			}
			if v.Progress.Scored != last[i] {
				last[i] = v.Progress.Scored
				fmt.Fprintf(env.Stderr, "eval %s: %s\n", v.EvalID, progressText(v))
			}
		}
		if env.StderrTTY {
			parts := make([]string, len(evals))
			for i, v := range evals {
				parts[i] = progressBar(v, 24)
			}
			fmt.Fprint(env.Stderr, "\r\x1b[K"+strings.Join(parts, "   "))
			drawn = true
		}
		if done {
			return evals, nil
		}
		if err := pause(ctx, evalPoll); err != nil {
			return nil, err
		}
		for i, v := range evals {
			if !v.running() {
				continue
			}
			nv, err := c.eval(ctx, v.EvalID)
			if err != nil {
				return nil, err
			}
			evals[i] = nv
		}
	}
}

// progressText is "3/10 scored, 2 passed, 1 failed".
func progressText(v evalView) string {
	pr := v.Progress
	return fmt.Sprintf("%d/%d scored, %d passed, %d failed", pr.Scored, pr.Total, pr.Passed, pr.Failed)
}

// progressBar is the eval's id, a bar of width characters filled by the
// scored share of its cases, and its counts.
func progressBar(v evalView, width int) string {
	pr := v.Progress
	fill := 0
	if pr.Total > 0 {
		fill = pr.Scored * width / pr.Total
	}
	return fmt.Sprintf("%s [%s%s] %s", v.EvalID, strings.Repeat("#", fill), strings.Repeat("-", width-fill), progressText(v))
}

// percent writes a rate of 0 to 1 as a percentage with one decimal.
func percent(r float64) string { return strconv.FormatFloat(r*100, 'f', 1, 64) + "%" }

func usd6(x *float64) string {
	if x == nil {
		return "not priced"
	}
	return fmt.Sprintf("$%.6f", *x)
}

func msText(ms float64) string {
	return (time.Duration(ms) * time.Millisecond).Round(time.Millisecond).String()
}

// cell is a table cell: its text and colour.
type cell struct {
	text, colour string
}

// printTable prints rows under a bold header, each column as wide as its
// widest cell (the last one unpadded), cells cut at cellWidth characters
// but for the last column's, cut at 80.
func printTable(p *printer, header []string, rows [][]cell) {
	all := append([][]cell{make([]cell, len(header))}, rows...)
	for i, h := range header {
		all[0][i] = cell{h, cBold}
	}
	w := make([]int, len(header))
	for _, r := range all {
		for j := range r {
			limit := cellWidth
			if j == len(header)-1 {
				limit = 80
			}
			r[j].text = truncate(r[j].text, limit-1)
			w[j] = max(w[j], len([]rune(r[j].text)))
		}
	}
	for _, r := range all {
		var sb strings.Builder
		for j, c := range r {
			if j > 0 {
				sb.WriteString("  ")
			}
			sb.WriteString(p.paint(c.colour, c.text))
			if j < len(r)-1 {
				sb.WriteString(strings.Repeat(" ", w[j]-len([]rune(c.text))))
			}
		}
		p.line("%s", strings.TrimRight(sb.String(), " "))
	}
}

// verdict is a case's result cell: pass, FAIL, or its status while it
// has none.
func verdict(c *evalCase) cell {
	switch {
	case c == nil:
		return cell{"-", cDim}
	case c.passed():
		return cell{"pass", cGreen}
	case c.scored():
		return cell{"FAIL", cRed}
	}
	return cell{cmp.Or(c.Status, "pending"), cYellow}
}

// evalHeader is an eval's first line: id, name, agent and version, tools,
// status and progress.
func evalHeader(p *printer, v evalView) {
	ver := cmp.Or(v.AgentVersion, "(default)")
	if v.Alias != "" {
		ver += " (alias " + v.Alias + ")"
	}
	status := p.paint(evalStatusColour(v), v.Status)
	p.line("%s %s  %s  %s %s", p.paint(cBold, "eval "+v.EvalID), v.Name, p.paint(cDim, "agent "+v.Agent+" version "+ver+", tools "+cmp.Or(v.Tools, "default")), status, p.paint(cDim, progressText(v)))
}

func evalStatusColour(v evalView) string {
	switch {
	case v.running():
		return cYellow
	case v.Status == "completed":
		return cGreen
	}
	return cRed
}

// showEval prints an eval: its header, a row per case (the first failing
// check last) and its totals.
func showEval(p *printer, v evalView) {
	evalHeader(p, v)
	p.line("")
	judged := slices.ContainsFunc(v.Cases, func(c evalCase) bool { return c.Judge != nil })
	header := []string{"CASE", "RESULT", "TURNS", "TOKENS", "COST", "RUN"}
	if judged {
		header = append(header, "JUDGE")
	}
	header = append(header, "FIRST FAILING CHECK")
	rows := make([][]cell, 0, len(v.Cases))
	for i := range v.Cases {
		c := &v.Cases[i]
		r := []cell{{c.ID, ""}, verdict(c), {strconv.Itoa(c.Turns), ""}, {thousands(c.TotalTokens), ""}, {usd6(c.CostUSD), ""}, {c.RunID, cDim}}
		if judged {
			r = append(r, cell{judgeText(c), ""})
		}
		rows = append(rows, append(r, cell{c.firstFailure(), cRed}))
	}
	printTable(p, header, rows)
	p.line("")
	t := v.Totals
	p.line("%s pass rate %s (%d of %d) · mean %.1f turns · %s tokens · cost %s · mean duration %s",
		p.paint(cBold, "totals:"), percent(v.passRate()), v.Progress.Passed, v.Progress.Total, t.MeanTurns, thousands(t.TotalTokens), usd6(t.CostUSD), msText(t.MeanDurationMS))
}

func judgeText(c *evalCase) string {
	if c.Judge == nil {
		return ""
	}
	return strconv.FormatFloat(c.Judge.Score, 'f', 2, 64)
}

// showEvalPair prints two evals of one dataset side by side: a row per
// case id (in the first eval's order) with each side's result and the
// turns, tokens and cost from A to B, then both totals with the deltas.
func showEvalPair(p *printer, a, b evalView) {
	evalHeader(p, a)
	evalHeader(p, b)
	p.line("")
	byID := map[string]*evalCase{}
	for i := range b.Cases {
		byID[b.Cases[i].ID] = &b.Cases[i]
	}
	var order []string
	inA := map[string]*evalCase{}
	for i := range a.Cases {
		inA[a.Cases[i].ID] = &a.Cases[i]
		order = append(order, a.Cases[i].ID)
	}
	for _, c := range b.Cases {
		if inA[c.ID] == nil {
			order = append(order, c.ID)
		}
	}
	header := []string{"CASE", "A " + cmp.Or(a.AgentVersion, a.EvalID), "B " + cmp.Or(b.AgentVersion, b.EvalID), "TURNS", "TOKENS", "COST", "RUN A", "RUN B", "FIRST FAILING CHECK"}
	var rows [][]cell
	for _, id := range order {
		ca, cb := inA[id], byID[id]
		r := []cell{{id, ""}, verdict(ca), verdict(cb)}
		if ca != nil && cb != nil {
			r = append(r,
				cell{delta(float64(ca.Turns), float64(cb.Turns), func(x float64) string { return strconv.Itoa(int(x)) }), ""},
				cell{delta(float64(ca.TotalTokens), float64(cb.TotalTokens), func(x float64) string { return thousands(int64(x)) }), ""},
				cell{costDelta(ca.CostUSD, cb.CostUSD), ""})
		} else {
			r = append(r, cell{}, cell{}, cell{})
		}
		run := func(c *evalCase) cell {
			if c == nil {
				return cell{}
			}
			return cell{c.RunID, cDim}
		}
		fail := ""
		switch {
		case cb != nil && cb.firstFailure() != "":
			fail = "B " + cb.firstFailure()
		case ca != nil && ca.firstFailure() != "":
			fail = "A " + ca.firstFailure()
		}
		rows = append(rows, append(r, run(ca), run(cb), cell{fail, cRed}))
	}
	printTable(p, header, rows)
	p.line("")
	ta, tb := a.Totals, b.Totals
	pts := func(x float64) string { return strconv.FormatFloat(x*100, 'f', 1, 64) }
	totals := [][]cell{
		{{"pass rate", ""}, {fmt.Sprintf("%s (%d of %d)", percent(a.passRate()), a.Progress.Passed, a.Progress.Total), ""},
			{fmt.Sprintf("%s (%d of %d)", percent(b.passRate()), b.Progress.Passed, b.Progress.Total), ""}, {signed(b.passRate()-a.passRate(), pts) + " points", ""}},
		{{"mean turns", ""}, {fmt.Sprintf("%.1f", ta.MeanTurns), ""}, {fmt.Sprintf("%.1f", tb.MeanTurns), ""},
			{signed(tb.MeanTurns-ta.MeanTurns, func(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }), ""}},
		{{"tokens", ""}, {thousands(ta.TotalTokens), ""}, {thousands(tb.TotalTokens), ""},
			{signed(float64(tb.TotalTokens-ta.TotalTokens), func(x float64) string { return thousands(int64(x)) }), ""}},
		{{"cost", ""}, {usd6(ta.CostUSD), ""}, {usd6(tb.CostUSD), ""}, {costChange(ta.CostUSD, tb.CostUSD), ""}},
		{{"mean duration", ""}, {msText(ta.MeanDurationMS), ""}, {msText(tb.MeanDurationMS), ""},
			{signed(tb.MeanDurationMS-ta.MeanDurationMS, msText), ""}},
	}
	printTable(p, []string{"TOTALS", "A " + a.EvalID, "B " + b.EvalID, "B - A"}, totals)
}

// signed writes a change with its sign ("+3", "-1.5", "0").
func signed(d float64, f func(float64) string) string {
	switch {
	case d > 0:
		return "+" + f(d)
	case d < 0:
		return "-" + f(-d)
	}
	return "0"
}

// delta is "a → b (+d)", or a alone when they are the same.
func delta(a, b float64, f func(float64) string) string {
	if a == b {
		return f(a)
	}
	return fmt.Sprintf("%s → %s (%s)", f(a), f(b), signed(b-a, f))
}

func costChange(a, b *float64) string {
	if a == nil || b == nil {
		return "not priced"
	}
	return signed(*b-*a, func(x float64) string { return fmt.Sprintf("$%.6f", x) })
}

func costDelta(a, b *float64) string {
	if a == nil || b == nil {
		return "not priced"
	}
	return delta(*a, *b, func(x float64) string { return fmt.Sprintf("$%.6f", x) })
}

func cmdEvalShow(ctx context.Context, args []string, env *Env) error {
	f := newFlags("eval show", "EVAL", env)
	pos, c, err := f.parseClient(args, 1, 1, env)
	if err != nil {
		return err
	}
	v, err := c.eval(ctx, pos[0])
	if err != nil {
		return err
	}
	if f.json {
		fmt.Fprintln(env.Stdout, string(v.raw))
		return nil
	}
	showEval(newPrinter(env, false), v)
	return nil
}

// cmdEvalCancel is eval cancel EVAL…: each eval in turn (one line, or
// one JSON view, each).
func cmdEvalCancel(ctx context.Context, args []string, env *Env) error {
	f := newFlags("eval cancel", "EVAL…", env)
	pos, c, err := f.parseClient(args, 1, -1, env)
	if err != nil {
		return err
	}
	for _, id := range pos {
		raw, err := c.postKeyed(ctx, evalPath(id, "cancel"), map[string]any{}, newKey())
		if err != nil {
			return fmt.Errorf("eval %s: %w", id, err)
		}
		if f.json {
			fmt.Fprintln(env.Stdout, string(raw))
			continue
		}
		v, err := decodeEval(raw)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "eval %s %s: %s\n", v.EvalID, v.Status, progressText(v))
	}
	return nil
}

func cmdEvalList(ctx context.Context, args []string, env *Env) error {
	f := newFlags("eval ls", "[--limit N] [--cursor C]", env)
	limit := f.Int("limit", 20, "evals per page")
	cursor := f.String("cursor", "", "the next page's cursor, as the previous page printed it")
	if _, err := f.parse(args, 0, 0); err != nil {
		return err
	}
	c, err := f.client(env)
	if err != nil {
		return err
	}
	q := url.Values{"limit": {strconv.Itoa(*limit)}}
	if *cursor != "" {
		q.Set("cursor", *cursor)
	}
	var raw json.RawMessage
	if err := c.request(ctx, http.MethodGet, "/v1/evals", q, nil, &raw); err != nil {
		return err
	}
	if f.json {
		fmt.Fprintln(env.Stdout, string(raw))
		return nil
	}
	var page struct {
		Evals      []evalView `json:"evals"`
		NextCursor *string    `json:"next_cursor"`
	}
	if err := json.Unmarshal(raw, &page); err != nil {
		return fmt.Errorf("the eval list is not the JSON expected: %w", err)
	}
	p := newPrinter(env, false)
	if len(page.Evals) == 0 {
		p.line("no evals")
		return nil
	}
	rows := make([][]cell, len(page.Evals))
	for i, v := range page.Evals {
		rate := ""
		if v.Totals.PassRate != nil {
			rate = percent(*v.Totals.PassRate)
		}
		rows[i] = []cell{{v.EvalID, ""}, {v.Name, ""}, {v.Agent, ""}, {v.AgentVersion, ""}, {v.Status, evalStatusColour(v)},
			{fmt.Sprintf("%d/%d", v.Progress.Scored, v.Progress.Total), ""}, {rate, ""}, {localTime(v.CreatedAt), ""}}
	}
	printTable(p, []string{"EVAL", "NAME", "AGENT", "VERSION", "STATUS", "SCORED", "PASS RATE", "CREATED"}, rows)
	if page.NextCursor != nil {
		p.line("%s", p.paint(cDim, "more: baton eval ls --limit "+strconv.Itoa(*limit)+" --cursor "+*page.NextCursor))
	}
	return nil
}

// datasetCase is a case eval dataset --from-runs writes: a recorded run
// replayed, expected to end with its answer after the same tool calls.
type datasetCase struct {
	ID      string `json:"id"`
	FromRun string `json:"from_run"`
	Expect  struct {
		Final *struct {
			Equals string `json:"equals"`
		} `json:"final,omitempty"`
		Trajectory struct {
			Mode  string         `json:"mode"`
			Tools []recordedCall `json:"tools"`
		} `json:"trajectory"`
	} `json:"expect"`
}

type recordedCall struct {
	Name       string `json:"name"`
	Parameters any    `json:"parameters"`
}

func cmdEvalDataset(ctx context.Context, args []string, env *Env) error {
	f := newFlags("eval dataset", "--from-runs --agent A [--status S] [--since T] [--limit N]", env)
	fromRuns := f.Bool("from-runs", false, "a case per recorded run (the only source for now)")
	agent := f.String("agent", "", "the runs' agent")
	status := f.String("status", "completed", "the runs' status")
	since := f.String("since", "", "only runs created since: an RFC 3339 time, or a duration back from now (24h)")
	limit := f.Int("limit", 50, "at most this many cases (the newest runs)")
	if _, err := f.parse(args, 0, 0); err != nil {
		return err
	}
	switch {
	case !*fromRuns:
		return usageErr("say where the cases come from: --from-runs")
	case *agent == "":
		return usageErr("name the runs' agent: --agent A")
	case *limit < 1:
		return usageErr("--limit wants 1 or more; got %d", *limit)
	}
	q := url.Values{"agent": {*agent}}
	if *status != "" {
		q.Set("status", *status)
	}
	if *since != "" {
		t, err := sinceTime(*since, time.Now())
		if err != nil {
			return err
		}
		q.Set("since", t)
	}
	c, err := f.client(env)
	if err != nil {
		return err
	}
	var ids []string
	for len(ids) < *limit {
		q.Set("limit", strconv.Itoa(min(100, *limit-len(ids))))
		var page struct {
			Runs []struct {
				RunID  string          `json:"run_id"`
				Status string          `json:"status"`
				Eval   json.RawMessage `json:"eval"`
			} `json:"runs"`
			NextCursor *string `json:"next_cursor"`
		}
		if err := c.request(ctx, http.MethodGet, "/v1/runs", q, nil, &page); err != nil {
			return err
		}
		for _, r := range page.Runs {
			if len(ids) == *limit {
				break
			}
			switch {
			case len(r.Eval) > 0 && string(r.Eval) != "null":
				fmt.Fprintf(env.Stderr, "skipped %s: a case run of an eval\n", r.RunID)
			case !isTerminalStatus(r.Status):
				fmt.Fprintf(env.Stderr, "skipped %s: %s, not finished\n", r.RunID, r.Status)
			default:
				ids = append(ids, r.RunID)
			}
		}
		if page.NextCursor == nil || len(page.Runs) == 0 {
			break
		}
		q.Set("cursor", *page.NextCursor)
	}
	for _, id := range ids {
		dc, err := caseOfRun(ctx, c, id)
		if err != nil {
			return fmt.Errorf("run %s: %w", id, err)
		}
		b, err := json.Marshal(dc)
		if err != nil {
			return err
		}
		fmt.Fprintln(env.Stdout, string(b))
	}
	fmt.Fprintf(env.Stderr, "%s from runs of agent %s\n", count(len(ids), "case"), *agent)
	return nil
}

// sinceTime reads --since: an RFC 3339 time, or a duration back from now.
func sinceTime(s string, now time.Time) (string, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC().Format(time.RFC3339Nano), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return "", usageErr(`--since wants an RFC 3339 time (2026-03-02T09:00:00Z) or a duration back from now (24h); got %q`, s)
	}
	return now.Add(-d).UTC().Format(time.RFC3339Nano), nil
}

func isTerminalStatus(s string) bool {
	switch s {
	case "queued", "running", "runtime_tool_pending", "approval_required":
		return false
	}
	return true
}

// caseOfRun is the case of a recorded run: its final answer (when it
// has one) and its own tool calls, in order, with their parameters.
func caseOfRun(ctx context.Context, c *client, id string) (datasetCase, error) {
	var dc datasetCase
	var v struct {
		RunID    string `json:"run_id"`
		FirstSeq int64  `json:"first_seq"`
		Result   *struct {
			FinalContent string `json:"final_content"`
		} `json:"result"`
	}
	if err := c.request(ctx, http.MethodGet, runPath(id), nil, nil, &v); err != nil {
		return dc, err
	}
	msgs, err := c.messages(ctx, id)
	if err != nil {
		return dc, err
	}
	dc.ID, dc.FromRun = id, id
	if v.Result != nil && v.Result.FinalContent != "" {
		dc.Expect.Final = &struct {
			Equals string `json:"equals"`
		}{v.Result.FinalContent}
	}
	dc.Expect.Trajectory.Mode = "exact"
	dc.Expect.Trajectory.Tools = []recordedCall{}
	for _, m := range msgs {
		if m.Role != "tool_call" || m.Seq < v.FirstSeq {
			continue
		}
		params := m.Metadata["parameters"]
		if params == nil {
			params = map[string]any{}
		}
		dc.Expect.Trajectory.Tools = append(dc.Expect.Trajectory.Tools, recordedCall{Name: m.meta("tool_name"), Parameters: params})
	}
	return dc, nil
}

// checkEvalGate is agents alias --if-eval: the alias moves to version
// only after an eval of it that completed and passed (every case, or a
// pass rate of minPass when it is not negative).
func checkEvalGate(ctx context.Context, c *client, evalID, version string, minPass float64) (evalView, error) {
	v, err := c.eval(ctx, evalID)
	if err != nil {
		return v, fmt.Errorf("reading eval %s: %w; the alias was not moved", evalID, err)
	}
	refuse := func(format string, args ...any) error {
		return fmt.Errorf("eval %s %s; the alias was not moved", evalID, fmt.Sprintf(format, args...))
	}
	switch {
	case v.Status != "completed":
		return v, refuse("is %s, not completed (%s)", v.Status, progressText(v))
	case v.AgentVersion != version:
		return v, refuse("ran on version %s, not %s", cmp.Or(v.AgentVersion, "(unknown)"), version)
	case minPass < 0 && !v.allPassed():
		return v, refuse("did not pass: %d of %d cases failed (pass rate %s; --min-pass sets a lower bar)", v.Progress.Total-v.Progress.Passed, v.Progress.Total, percent(v.passRate()))
	case minPass >= 0 && v.passRate() < minPass:
		return v, refuse("has pass rate %s, below --min-pass %s", percent(v.passRate()), percent(minPass))
	}
	return v, nil
}
