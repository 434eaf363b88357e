package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/baton-agents/baton/core"
	batoncost "github.com/baton-agents/baton/internal/cost"
)

// costTolerance is how far result.cost's AWS dollars may lie from the
// benchmark's, counted like with like, before the report flags them.
const costTolerance = 0.05

// costCheck sets one emulator run's result.cost (or several runs' of one
// workload, summed) beside the benchmark's dollars for the run's steps.
//
// The two count the same requests with the same prices and the same
// DynamoDB capacity rules (internal/cost), but not the same set of them:
//
//   - result.cost counts a commit's write units on the step it schedules,
//     so it leaves out the run's last commit; the benchmark counts every
//     step's commit;
//   - result.cost counts each step message's send (the first one made by
//     the start), the benchmark the sends the steps make;
//   - result.cost counts a commit's index writes at the most they can cost
//     (a stateless worker does not know the entries the previous commit
//     left), the benchmark exactly (it remembers them);
//   - Lambda GB-seconds: result.cost until the step's outcome is applied,
//     the benchmark over the whole HandleStep (commit and send included).
//
// The like-with-like figures take the benchmark's counts with the first
// three differences applied and leave out Lambda duration on both sides.
type costCheck struct {
	Workload workload `json:"workload"`
	Runs     int      `json:"runs"`
	Steps    int      `json:"steps"`
	// BenchUSD is the benchmark's dollars for the runs' steps, as the
	// per-1,000-steps projection prices them (Lambda at the steps' wall).
	BenchUSD float64 `json:"bench_usd"`
	// ResultUSD is result.cost's AWS dollars (aws_usd).
	ResultUSD float64 `json:"result_cost_aws_usd"`
	// Bench and Result are the like-with-like counts (no GB-seconds) and
	// BenchLikeUSD and ResultLikeUSD their prices.
	Bench         core.Resources `json:"bench_like_units"`
	Result        core.Resources `json:"result_cost_like_units"`
	BenchLikeUSD  float64        `json:"bench_like_usd"`
	ResultLikeUSD float64        `json:"result_cost_like_usd"`
	// Ratio is ResultLikeUSD / BenchLikeUSD; OK says it is within
	// costTolerance of 1.
	Ratio float64 `json:"ratio"`
	OK    bool    `json:"within_tolerance"`
	// GB-seconds as each counts them (not compared).
	BenchGBs  float64 `json:"bench_lambda_gb_seconds"`
	ResultGBs float64 `json:"result_cost_lambda_gb_seconds"`
	// Missing is set when a run had no result.cost.
	Missing bool `json:"result_cost_missing,omitempty"`
}

// checkRunCost compares one run's result.cost with its steps' samples
// and the requests its start made (start).
func checkRunCost(w workload, samples []stepSample, start map[string]opStat, rc *core.RunCost) costCheck {
	c := costCheck{Workload: w, Runs: 1, Steps: len(samples), Missing: rc == nil}
	var raw core.Resources
	for _, s := range samples {
		for op, o := range s.Ops {
			raw.DynamoDBWRU += o.WCU
			raw.DynamoDBRRU += o.RCU
			c.Bench.DynamoDBWRU += o.CostWCU
			c.Bench.DynamoDBRRU += o.RCU
			if isSQS(op) {
				raw.SQSRequests += float64(o.SQSBilled)
			}
		}
		for _, o := range s.ESM {
			raw.SQSRequests += float64(o.SQSBilled)
		}
		c.BenchGBs += s.Wall.Seconds() * lambdaMemoryGB
	}
	for _, s := range samples {
		raw.LambdaRequests += float64(s.Invocations)
	}
	raw.LambdaGBSeconds = c.BenchGBs
	c.Bench.SQSRequests = raw.SQSRequests + float64(start[opEnqueue].SQSBilled)
	if n := len(samples); n > 0 {
		if last, ok := samples[n-1].Ops[opCommit]; ok {
			c.Bench.DynamoDBWRU -= last.CostWCU
		}
	}
	c.Bench.LambdaRequests = raw.LambdaRequests
	c.BenchUSD = usEast1.AWSUSD(raw)
	if rc != nil {
		c.ResultUSD = rc.AWSUSD
		c.Result = rc.AWS
		c.ResultGBs = rc.AWS.LambdaGBSeconds
		c.Result.LambdaGBSeconds = 0
	}
	c.finish()
	return c
}

// usEast1 prices the comparison as internal/cost does.
var usEast1 = &batoncost.Table{AWS: batoncost.USEast1}

// finish prices the like-with-like counts and judges their ratio.
func (c *costCheck) finish() {
	c.BenchLikeUSD, c.ResultLikeUSD = usEast1.AWSUSD(c.Bench), usEast1.AWSUSD(c.Result)
	c.Ratio = safeDiv(c.ResultLikeUSD, c.BenchLikeUSD)
	c.OK = !c.Missing && math.Abs(c.Ratio-1) <= costTolerance
}

// sumCostChecks sums one workload's runs.
func sumCostChecks(cs []costCheck) costCheck {
	var t costCheck
	for i, c := range cs {
		if i == 0 {
			t.Workload = c.Workload
		}
		t.Runs += c.Runs
		t.Steps += c.Steps
		t.BenchUSD += c.BenchUSD
		t.ResultUSD += c.ResultUSD
		t.Bench = t.Bench.Add(c.Bench)
		t.Result = t.Result.Add(c.Result)
		t.BenchGBs += c.BenchGBs
		t.ResultGBs += c.ResultGBs
		t.Missing = t.Missing || c.Missing
	}
	t.finish()
	// A workload agrees only when each of its runs does.
	for _, c := range cs {
		t.OK = t.OK && c.OK
	}
	return t
}

// costCheckMarkdown is the report's section comparing result.cost with
// the benchmark's dollars.
func costCheckMarkdown(cases []caseResult) string {
	var rows []costCheck
	for _, c := range cases {
		if c.CostCheck != nil {
			rows = append(rows, *c.CostCheck)
		}
	}
	if len(rows) == 0 {
		return ""
	}
	var b strings.Builder
	p := func(f string, a ...any) { fmt.Fprintf(&b, f, a...) }
	p("## The benchmark's dollars and result.cost (emulators)\n\n")
	p("At the end of each measured run the benchmark reads the run's `result.cost` (the run state the app's store returns, which the run view shows) and sets its AWS dollars beside the benchmark's own dollars for the run's steps, summed over the workload's runs. Both count requests with `internal/cost` (prices, DynamoDB capacity rules), but not the same set: result.cost leaves out the run's last commit (it schedules no step), counts the first step message's send (made by the start) rather than a send by the final step (none), counts each commit's index writes at the most they can cost (a stateless worker does not know the previous entries; the benchmark remembers them), and times Lambda only until the step's outcome is applied (the benchmark: the whole `HandleStep`). The like-with-like columns apply the first three to the benchmark's counts and leave Lambda duration out on both sides; their ratio must lie within ±%.0f %%.\n\n", costTolerance*100)
	p("| workload | runs | steps | bench $ (steps) | result.cost aws_usd | bench $ like with like | result.cost $ like with like | ratio | WRU bench / result.cost | RRU | SQS requests | Lambda GB-s bench / result.cost | agree |\n")
	p("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n")
	bad := 0
	for _, c := range rows {
		verdict := "yes"
		if !c.OK {
			verdict, bad = "**MISMATCH**", bad+1
		}
		if c.Missing {
			verdict = "**MISMATCH** (no result.cost)"
		}
		p("| %s | %d | %d | %.7f | %.7f | %.7f | %.7f | %.3f | %.0f / %.0f | %.0f / %.0f | %.0f / %.0f | %.3f / %.3f | %s |\n",
			c.Workload, c.Runs, c.Steps, c.BenchUSD, c.ResultUSD, c.BenchLikeUSD, c.ResultLikeUSD, c.Ratio,
			c.Bench.DynamoDBWRU, c.Result.DynamoDBWRU, c.Bench.DynamoDBRRU, c.Result.DynamoDBRRU,
			c.Bench.SQSRequests, c.Result.SQSRequests, c.BenchGBs, c.ResultGBs, verdict)
	}
	if bad > 0 {
		p("\n**%d workload(s) disagree beyond ±%.0f %%.**\n", bad, costTolerance*100)
	}
	p("\n")
	return b.String()
}
