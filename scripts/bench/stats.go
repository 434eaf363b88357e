package main

import (
	"fmt"
	batoncost "github.com/baton-agents/baton/internal/cost"
	"math"
	"sort"
	"strings"
	"time"
)

// dist summarizes a per-step quantity.
type dist struct {
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
	Mean float64 `json:"mean"`
	Max  float64 `json:"max"`
}

// distOf returns the nearest-rank median and 99th percentile, the mean
// and the maximum.
func distOf(xs []float64) dist {
	if len(xs) == 0 {
		return dist{}
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	rank := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return s[min(max(i, 0), len(s)-1)]
	}
	sum := 0.0
	for _, x := range s {
		sum += x
	}
	return dist{P50: rank(0.50), P99: rank(0.99), Mean: sum / float64(len(s)), Max: s[len(s)-1]}
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// Prices used for the projection: AWS list prices in us-east-1 as of
// 2025, the ones result.cost uses (internal/cost).
var (
	priceWRU       = batoncost.USEast1.DynamoDBWRU // DynamoDB on-demand, per write request unit
	priceRRU       = batoncost.USEast1.DynamoDBRRU // DynamoDB on-demand, per read request unit
	priceSQSFIFO   = batoncost.USEast1.SQSRequest  // SQS FIFO, per request (64 KB chunk)
	priceLambdaGBs = batoncost.USEast1.LambdaGBSecond
	priceLambdaReq = batoncost.USEast1.LambdaRequest
)

const lambdaMemoryGB = 1.0 // 1024 MB

// cost is the projected AWS cost of 1,000 steps.
type cost struct {
	DynamoDBWrites float64 `json:"dynamodb_writes_usd"`
	DynamoDBReads  float64 `json:"dynamodb_reads_usd"`
	SQS            float64 `json:"sqs_usd"`
	Lambda         float64 `json:"lambda_usd"`
	Total          float64 `json:"total_usd"`
	// SQSRequests and Invocations are the billed SQS requests (sends,
	// receives, deletes) and the worker invocations per step, as counted.
	SQSRequests float64 `json:"sqs_requests_per_step"`
	Invocations float64 `json:"invocations_per_step"`
	// Chained is the share of steps continued in the invocation of the
	// step before them.
	Chained float64 `json:"chained_share"`
}

// kindResult is one step kind of one case.
type kindResult struct {
	Kind  string `json:"kind"`
	Steps int    `json:"steps"`
	// Ops is the mean count of each operation per step; Min the
	// documented minimum.
	Ops map[string]float64 `json:"ops"`
	Min map[string]float64 `json:"min"`
	// RT and MinRT are round trips per step (DynamoDB + SQS, the step's
	// own work); Ratio = RT / MinRT, MaxRatio the largest over the steps.
	RT       float64 `json:"round_trips"`
	MinRT    float64 `json:"min_round_trips"`
	Ratio    float64 `json:"ratio"`
	MaxRatio float64 `json:"max_ratio"`
	DDBRatio float64 `json:"dynamodb_ratio"`
	SQSRatio float64 `json:"sqs_ratio"`
	// Bytes and capacity: measured means, minimum means, ratios.
	BytesW      float64 `json:"bytes_written"`
	MinBytesW   float64 `json:"min_bytes_written"`
	BytesR      float64 `json:"bytes_read"`
	MinBytesR   float64 `json:"min_bytes_read"`
	WCU         float64 `json:"wcu"`
	MinWCU      float64 `json:"min_wcu"`
	RCU         float64 `json:"rcu"`
	MinRCU      float64 `json:"min_rcu"`
	IndexWCU    float64 `json:"index_wcu"`
	ExtraWCUEst float64 `json:"extra_wcu_estimate"`
	Events      float64 `json:"events"`
	ToolResults float64 `json:"tool_results"`
	Audit       float64 `json:"audit"`
	// Above lists why steps exceeded the minimum round trips.
	Above []string `json:"above_minimum,omitempty"`
	// WallMS and CPUMS are the step kind's times.
	WallMS dist `json:"wall_ms"`
	CPUMS  dist `json:"cpu_ms"`
}

// caseResult is one workload on one runtime.
type caseResult struct {
	Runtime  string   `json:"runtime"`
	Workload workload `json:"workload"`
	Runs     int      `json:"runs"`
	Steps    int      `json:"steps"`
	WallMS   dist     `json:"wall_ms"`
	CPUMS    dist     `json:"cpu_ms"`
	DDBRT    dist     `json:"dynamodb_round_trips"`
	SQSRT    dist     `json:"sqs_round_trips"`
	BytesW   dist     `json:"bytes_written"`
	BytesR   dist     `json:"bytes_read"`
	WCU      dist     `json:"wcu"`
	RCU      dist     `json:"rcu"`
	// SteadyBytesR is the mean bytes read by the steps after the first.
	SteadyBytesR float64 `json:"steady_bytes_read"`
	// ESM totals the event source mapping's receives and deletes of the
	// steps' messages (one message per step).
	ESM map[string]opStat `json:"esm_total,omitempty"`
	// Ops totals every operation of the steps over all runs.
	Ops    map[string]opStat `json:"ops_total,omitempty"`
	ByKind []kindResult      `json:"by_kind,omitempty"`
	// Reload is the cost of reading the whole transcript with a cold
	// cache at the end of the run.
	Reload        *opStat           `json:"cold_transcript_reload,omitempty"`
	Start         map[string]opStat `json:"start_run,omitempty"`
	EmptyReceives int               `json:"empty_receives,omitempty"`
	Retried       int               `json:"retried,omitempty"`
	Cost          *cost             `json:"cost_per_1000_steps,omitempty"`
	// CostCheck sets the runs' result.cost beside the benchmark's
	// dollars for their steps (emulators).
	CostCheck *costCheck `json:"result_cost_check,omitempty"`
}

// sums adds up a step's operations: DynamoDB and SQS round trips, bytes
// written and read, capacity units.
func sums(ops map[string]opStat) (ddb, sqs int, w, r int64, wcu, rcu float64) {
	for op, s := range ops {
		if isSQS(op) {
			sqs += s.Calls
		} else {
			ddb += s.Calls
		}
		w += s.BytesOut
		r += s.BytesIn
		wcu += s.WCU
		rcu += s.RCU
	}
	return
}

// aggregate summarizes the samples of a case's runs.
func aggregate(runtime string, w workload, runs []runResult, inproc [][]stepSample) caseResult {
	c := caseResult{Runtime: runtime, Workload: w, Runs: len(runs) + len(inproc), Ops: map[string]opStat{}}
	var all []stepSample
	for _, r := range runs {
		all = append(all, r.Samples...)
		c.EmptyReceives += r.EmptyReceives
		c.Retried += r.Retried
	}
	for _, s := range inproc {
		all = append(all, s...)
	}
	c.Steps = len(all)
	if len(runs) > 0 {
		last := runs[len(runs)-1]
		rl := last.Reload
		c.Reload = &rl
		c.Start = last.Start
	}
	var wall, cpu, ddb, sqs, bw, br, wcu, rcu []float64
	steadyR, steadyN := 0.0, 0
	esm := map[string]opStat{}
	for _, s := range all {
		wall = append(wall, ms(s.Wall))
		cpu = append(cpu, ms(s.CPU))
		if runtime == rtInProcess {
			continue
		}
		d, q, bwi, bri, wc, rc := sums(s.Ops)
		ddb = append(ddb, float64(d))
		sqs = append(sqs, float64(q))
		bw = append(bw, float64(bwi))
		br = append(br, float64(bri))
		wcu = append(wcu, wc)
		rcu = append(rcu, rc)
		if s.Class != classFirst {
			steadyR += float64(bri)
			steadyN++
		}
		addOps(c.Ops, s.Ops)
		addOps(esm, s.ESM)
	}
	c.WallMS, c.CPUMS = distOf(wall), distOf(cpu)
	if runtime == rtInProcess {
		c.Ops = nil
		return c
	}
	c.DDBRT, c.SQSRT, c.BytesW, c.BytesR, c.WCU, c.RCU = distOf(ddb), distOf(sqs), distOf(bw), distOf(br), distOf(wcu), distOf(rcu)
	if steadyN > 0 {
		c.SteadyBytesR = steadyR / float64(steadyN)
	}
	c.ESM = esm
	c.ByKind = byKind(all)
	if runtime == rtEmulators {
		c.Cost = projectCost(c, all)
		var checks []costCheck
		for _, r := range runs {
			checks = append(checks, checkRunCost(w, r.Samples, r.Start, r.Cost))
		}
		if len(checks) > 0 {
			cc := sumCostChecks(checks)
			c.CostCheck = &cc
		}
	}
	return c
}

// byKind compares each step kind's operations with its minimum.
func byKind(all []stepSample) []kindResult {
	groups := map[string][]stepSample{}
	var order []string
	for _, s := range all {
		k := kindName(s.Kind, s.Class, s.Delivery)
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], s)
	}
	sort.Slice(order, func(i, j int) bool { return kindOrder(order[i]) < kindOrder(order[j]) })
	var out []kindResult
	for _, k := range order {
		ss := groups[k]
		// The minimum depends on the step's delivery and on whether it
		// handed off (sent the next step): the mean over the steps.
		kr := kindResult{Kind: k, Steps: len(ss), Ops: map[string]float64{}, Min: map[string]float64{}}
		var minDDB, minSQS float64
		reasons := map[string]int{}
		var ddbSum, sqsSum float64
		var walls, cpus []float64
		n := float64(len(ss))
		for _, s := range ss {
			min := minOps(s.Kind, s.Class, s.Delivery, s.HandsOff || s.Delivery == "")
			minRT := 0
			for op, m := range min {
				minRT += m
				kr.Min[op] += float64(m) / n
				if isSQS(op) {
					minSQS += float64(m) / n
				} else {
					minDDB += float64(m) / n
				}
			}
			kr.MinRT += float64(minRT) / n
			walls = append(walls, ms(s.Wall))
			cpus = append(cpus, ms(s.CPU))
			d, q, bw, br, wc, rc := sums(s.Ops)
			ddbSum += float64(d)
			sqsSum += float64(q)
			rt := float64(d + q)
			kr.RT += rt / n
			if minRT > 0 {
				kr.MaxRatio = math.Max(kr.MaxRatio, rt/float64(minRT))
			}
			for op, o := range s.Ops {
				kr.Ops[op] += float64(o.Calls) / n
				if extra := o.Calls - min[op]; extra > 0 {
					reasons[reason(op, s.Class, extra)]++
				}
				kr.IndexWCU += o.IndexWCU / n
			}
			kr.BytesW += float64(bw) / n
			kr.BytesR += float64(br) / n
			kr.WCU += wc / n
			kr.RCU += rc / n
			kr.MinBytesW += float64(s.MinBytesW) / n
			kr.MinBytesR += float64(s.MinBytesR) / n
			kr.MinWCU += s.MinWCU / n
			kr.MinRCU += s.MinRCU / n
			kr.ExtraWCUEst += s.ExtraWCUEst / n
			kr.Events += float64(s.Events) / n
			kr.ToolResults += float64(s.ToolResults) / n
			kr.Audit += float64(s.Audit) / n
		}
		kr.WallMS, kr.CPUMS = distOf(walls), distOf(cpus)
		if kr.MinRT > 0 {
			kr.Ratio = kr.RT / kr.MinRT
		}
		if minDDB > 0 {
			kr.DDBRatio = ddbSum / n / minDDB
		}
		if minSQS > 0 {
			kr.SQSRatio = sqsSum / n / minSQS
		} else if sqsSum > 0 {
			kr.SQSRatio = math.Inf(1)
		}
		for r, cnt := range reasons {
			kr.Above = append(kr.Above, fmt.Sprintf("%s in %d of %d steps", r, cnt, len(ss)))
		}
		sort.Strings(kr.Above)
		out = append(out, kr)
	}
	return out
}

func kindOrder(k string) int {
	switch {
	case strings.HasSuffix(k, "(first)"):
		return 0
	case strings.HasPrefix(k, "model_turn") && !strings.Contains(k, "("):
		return 1
	case strings.HasPrefix(k, "tool_call"):
		return 2
	}
	return 3
}

// reason explains operations above a step's minimum.
func reason(op, class string, extra int) string {
	why := "unexpected"
	switch op {
	case opTranscriptRead:
		why = "transcript read although the worker cached the session (cache miss)"
		if class == classFirst {
			why = "transcript read in more than one request (paged Query)"
		}
	case opStateRead:
		why = "run state read again (reload after a version conflict, or a paged Query)"
	case opCommit:
		why = "commit sent again (version conflict, transaction collision or SDK retry)"
	case opIntentClaim:
		why = "intent claim sent again (SDK retry)"
	case opEnqueue:
		why = "next step sent in more than one request (SDK retry)"
	case opSessionHead, "dynamodb:GetItem", "dynamodb:GetItem(RUN)":
		why = "extra GetItem (explaining a refused commit)"
	}
	return fmt.Sprintf("+%d %s: %s", extra, op, why)
}

// projectCost prices 1,000 steps from the counted requests: DynamoDB
// capacity units, SQS requests (the sends the steps made, and the event
// source mapping's receive and delete of each message, each per started
// 64 KB) and Lambda (the invocations counted — one per message; chained
// steps run in the invocation of the step before them — at 1024 MB for
// the steps' wall time).
func projectCost(c caseResult, all []stepSample) *cost {
	n := float64(len(all))
	var wcu, rcu, sqsBilled, wallS, invocations, chained float64
	for _, s := range all {
		invocations += float64(s.Invocations)
		if s.Delivery == deliveryChained {
			chained++
		}
		for op, o := range s.Ops {
			wcu += o.WCU
			rcu += o.RCU
			if isSQS(op) {
				sqsBilled += float64(o.SQSBilled)
			}
		}
		for _, o := range s.ESM {
			sqsBilled += float64(o.SQSBilled)
		}
		wallS += s.Wall.Seconds()
	}
	k := 1000 / n
	out := &cost{
		DynamoDBWrites: wcu * k * priceWRU,
		DynamoDBReads:  rcu * k * priceRRU,
		SQS:            sqsBilled * k * priceSQSFIFO,
		Lambda:         invocations*k*priceLambdaReq + wallS*k*lambdaMemoryGB*priceLambdaGBs,
		SQSRequests:    sqsBilled / n,
		Invocations:    invocations / n,
		Chained:        chained / n,
	}
	out.Total = out.DynamoDBWrites + out.DynamoDBReads + out.SQS + out.Lambda
	return out
}

// addOps adds each operation's totals in src to those of dst.
func addOps(dst, src map[string]opStat) {
	for op, o := range src {
		t := dst[op]
		t.add(o)
		dst[op] = t
	}
}
