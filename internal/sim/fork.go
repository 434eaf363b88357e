package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/baton-agents/baton/core"
)

// Forks under faults: once the first run left alone completes, the
// battery forks it at its question with the same script, reusing the
// source's record (tools: reuse, the default). Every call of the fork
// matches one the source made, so the fork executes nothing and starts
// no child run, whatever the faults (crashes, redeliveries, a frozen
// worker), and ends with its source's answer. The fork is asked twice
// with one Idempotency-Key: one fork.

// forkSuffix marks a fork's workload index: its source's, then ~fork.
const forkSuffix = "~fork"

// forkPlan is the run a seed forks (the first left alone, -1: none).
func forkPlan(w workload) int {
	for i, p := range w {
		if p.kind == "" {
			return i
		}
	}
	return -1
}

// forkWhenDone forks the chosen run once it completed.
func (s *sim) forkWhenDone(ctx context.Context) error {
	if s.forkSrc < 0 || s.forked {
		return nil
	}
	id := s.runs[s.forkSrc]
	snap, err := s.a.Runner.Get(ctx, tenant, id)
	if err != nil || !core.IsTerminal(snap.State.Status) {
		return nil // a failed read is the next step's to retry
	}
	s.forked = true
	if snap.State.Status != core.StatusCompleted {
		return nil
	}
	body, _ := json.Marshal(map[string]any{"seq": 1, "model": s.models[id], "parallel_tool_calls": s.parallel[id]})
	key := "fork-" + id
	st, v := s.api(ctx, "POST", "/v1/runs/"+id+"/fork", string(body), key)
	if st != 202 {
		return fmt.Errorf("fork run %s: %d %v", id, st, v)
	}
	fork, _ := v["run_id"].(string)
	if st, again := s.api(ctx, "POST", "/v1/runs/"+id+"/fork", string(body), key); st != 202 || again["run_id"] != fork {
		s.violation("%s: a fork asked again with its Idempotency-Key answered %d %v, not fork %s", s.index[id], st, again["run_id"], fork)
	}
	src := s.index[id]
	run := src + forkSuffix
	s.mu.Lock()
	s.index[fork] = run
	s.mu.Unlock()
	s.runs = append(s.runs, fork)
	s.kinds[fork] = ""
	s.res.Kinds[run], s.res.Turns[run], s.res.Forks[run] = "", s.res.Turns[src], src
	return nil
}

// checkForks: a fork of a completed run with its source's script
// executed nothing, started no child run and ended with its source's
// answer.
func checkForks(r Result, bad func(run, format string, args ...any)) {
	for _, run := range Keys(r.Forks) {
		f, src := r.Runs[run], r.Runs[r.Forks[run]]
		if f.Status != core.StatusCompleted || f.Final != src.Final {
			bad(run, "the fork ended %s with %q; its source %s ended %s with %q", f.Status, f.Final, r.Forks[run], src.Status, src.Final)
		}
		if f.ChildUsage != (usage{}) {
			bad(run, "the fork's calls started child runs (usage %+v)", f.ChildUsage)
		}
	}
	for _, k := range Keys(r.Executions) {
		for run := range r.Forks {
			if strings.HasPrefix(k, run+"/") || strings.HasPrefix(k, run+">") {
				bad(k, "the fork executed %s, a call its source recorded (%d times)", toolOf(r, k), r.Executions[k])
			}
		}
	}
}
