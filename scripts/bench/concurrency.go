package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/worker"
)

// pollers is the number of concurrent pollers, each with its own runner
// (its own transcript cache), as separate Lambda instances would be.
const pollers = 8

// concurrencyDeadline bounds a concurrency run.
var concurrencyDeadline = 5 * time.Minute

// callTimeout bounds one step, receive (beyond its wait) or delete; the
// queues' visibility timeout (visibility) brings back a message whose
// handling was cut short.
const (
	callTimeout = 20 * time.Second
	visibility  = 30 * time.Second
)

// concResult is one concurrency run.
type concResult struct {
	Runtime         string  `json:"runtime"`
	Sessions        int     `json:"sessions"`
	Steps           int     `json:"steps"`
	Seconds         float64 `json:"seconds"`
	StepsPerSec     float64 `json:"steps_per_second"`
	StepMS          dist    `json:"step_ms"`
	QueueToCommitMS dist    `json:"queue_to_commit_ms"`
	CPUPerStepMS    float64 `json:"cpu_ms_per_step"`
	// RoundTrips and TranscriptReads are per step: with one cache per
	// poller, a session's next step may land on a poller that has not
	// seen its last commit and reads the messages it lacks.
	RoundTrips      float64 `json:"round_trips_per_step"`
	MinRoundTrips   float64 `json:"min_round_trips_per_step"`
	TranscriptReads float64 `json:"transcript_reads_per_step"`
	// Ops is the mean count of each operation per step.
	Ops     map[string]float64 `json:"ops_per_step"`
	Retried int                `json:"retried"`
	// Receives counts the pollers' receive calls; MsgsPerReceive and
	// ReceiveMS are their mean yield and mean duration.
	Receives       int     `json:"receives"`
	MsgsPerReceive float64 `json:"messages_per_receive"`
	ReceiveMS      float64 `json:"receive_ms"`
	// StepsPerInvocation and Chained: the worker invocations' steps, and
	// the share of steps continued after another in one invocation.
	StepsPerInvocation float64 `json:"steps_per_invocation"`
	Chained            float64 `json:"chained_share"`
}

// concurrent runs n sessions of the 20-turn, 100 B workload at once.
func concurrent(ctx context.Context, d *distRuntime, n int) (concResult, error) {
	w := workload{Turns: 20, ResultBytes: 100}
	res := concResult{Runtime: d.name, Sessions: n}
	starter := d.newRunner()
	runs := make([]core.RunRecord, n)
	for i := range runs {
		rec, err := d.start(ctx, starter, w)
		if err != nil {
			return res, fmt.Errorf("concurrency %s: start: %w", d.name, err)
		}
		runs[i] = rec
	}
	expected := int64(n * w.steps())
	var (
		mu          sync.Mutex
		stepMS, q2c []float64
		ops         = map[string]opStat{}
		minRT       float64
		sampled     int
		invocations int
		chained     int
		seen        = map[string]bool{} // runs whose first step ran
		done        atomic.Int64
		retried     atomic.Int64
		receives    atomic.Int64
		received    atomic.Int64
		receiveNS   atomic.Int64
		wg          sync.WaitGroup
		firstErr    error
	)
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		cancel()
	}
	wait := 50 * time.Millisecond
	if d.name == rtEmulators {
		wait = time.Second
	}
	c0, t0 := cpuNow(), time.Now()
	for p := 0; p < pollers; p++ {
		wk := d.newWorker()
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			for pctx.Err() == nil {
				r0 := time.Now()
				rctx, rcancel := context.WithTimeout(pctx, wait+callTimeout)
				ds, err := d.queue.Receive(rctx, 10, wait)
				rcancel()
				receives.Add(1)
				received.Add(int64(len(ds)))
				receiveNS.Add(int64(time.Since(r0)))
				if err != nil {
					// A receive that failed or timed out is tried again;
					// messages it may have taken come back after the
					// visibility timeout.
					if pctx.Err() == nil {
						retried.Add(1)
						continue
					}
					return
				}
				if len(ds) == 0 {
					continue
				}
				if err := invokeBatch(pctx, wk, d.queue, ds, &retried, func(ss []stepSample, parts []*recorder) {
					mu.Lock()
					defer mu.Unlock()
					for i, s := range ss {
						stepMS = append(stepMS, ms(s.Wall))
						if i < len(ds) && !ds[i].SentAt.IsZero() {
							q2c = append(q2c, ms(parts[i].committedAt.Sub(ds[i].SentAt)))
						}
						addOps(ops, s.Ops)
						for _, c := range minOps(s.Kind, s.Class, s.Delivery, s.HandsOff) {
							minRT += float64(c)
						}
						if s.Delivery == deliveryChained {
							chained++
						}
						invocations += s.Invocations
					}
					sampled += len(ss)
				}, func(runID string) bool {
					mu.Lock()
					defer mu.Unlock()
					first := !seen[runID]
					seen[runID] = true
					return first
				}, &done); err != nil {
					if pctx.Err() == nil {
						fail(fmt.Errorf("poller %d: %w", p, err))
					}
					return
				}
			}
		}(p)
	}
	deadline := time.Now().Add(concurrencyDeadline)
	for done.Load() < expected && pctx.Err() == nil && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if done.Load() < expected && os.Getenv("BENCH_DEBUG") != "" {
		buf := make([]byte, 1<<22)
		n := runtime.Stack(buf, true)
		fmt.Fprintf(os.Stderr, "%s\n", buf[:n])
	}
	elapsed, cpu := time.Since(t0), cpuNow()-c0
	cancel()
	wg.Wait()
	if firstErr != nil {
		return res, fmt.Errorf("concurrency %s: %w", d.name, firstErr)
	}
	if got := done.Load(); got < expected {
		return res, fmt.Errorf("concurrency %s: %d of %d steps done in %v (%d steps or receives failed and were retried)", d.name, got, expected, concurrencyDeadline, retried.Load())
	}
	for _, r := range runs {
		final, err := d.store.LoadRun(ctx, r.State.RunID)
		if err != nil {
			return res, fmt.Errorf("concurrency %s: %w", d.name, err)
		}
		msgs, err := d.store.Messages(ctx, tenant, r.State.SessionID, 0, final.State.NextMsgSeq, 0)
		if err != nil {
			return res, fmt.Errorf("concurrency %s: %w", d.name, err)
		}
		if err := w.check(string(final.State.Status), msgs); err != nil {
			return res, fmt.Errorf("concurrency %s: %w", d.name, err)
		}
	}
	res.Steps = int(expected)
	res.Seconds = elapsed.Seconds()
	res.StepsPerSec = float64(expected) / elapsed.Seconds()
	res.StepMS, res.QueueToCommitMS = distOf(stepMS), distOf(q2c)
	res.CPUPerStepMS = ms(cpu) / float64(expected)
	res.Retried = int(retried.Load())
	res.Receives = int(receives.Load())
	if res.Receives > 0 {
		res.MsgsPerReceive = float64(received.Load()) / float64(res.Receives)
		res.ReceiveMS = ms(time.Duration(receiveNS.Load())) / float64(res.Receives)
	}
	// Per step over the steps sampled (a batch in which a message failed
	// is not: its requests cannot be matched to its steps).
	total := 0
	res.Ops = map[string]float64{}
	per := float64(max(sampled, 1))
	for op, o := range ops {
		total += o.Calls
		res.Ops[op] = float64(o.Calls) / per
	}
	res.RoundTrips = float64(total) / per
	res.MinRoundTrips = minRT / per
	res.TranscriptReads = float64(ops[opTranscriptRead].Calls) / per
	res.StepsPerInvocation = per / float64(max(invocations, 1))
	res.Chained = float64(chained) / per
	return res, nil
}

// invokeBatch runs a received batch through the worker's handler, as
// the event source mapping invokes the Lambda, and deletes the messages
// that did not fail (failed ones are received again after the queue's
// visibility timeout). It adds the steps committed to done and gives the
// invocation's samples, with their recorders, to ok; first says whether
// a run's step is its first.
func invokeBatch(ctx context.Context, wk *worker.Worker, q core.StepReceiver, ds []core.ReceivedMessage, retried *atomic.Int64, ok func([]stepSample, []*recorder), first func(runID string) bool, done *atomic.Int64) error {
	steps := make([]core.Step, len(ds))
	for i, m := range ds {
		if err := json.Unmarshal(m.Body, &steps[i]); err != nil {
			return fmt.Errorf("message %s is not a step: %w", m.MessageID, err)
		}
	}
	sp, esm := newSplitter(), newRecorder()
	t0, c0 := time.Now(), cpuNow()
	succeeded, _ := invokeWorker(withRecorder(ctx, sp), wk, ds)
	inv := invocation{t0, time.Now(), c0, cpuNow()}
	retried.Add(int64(len(ds) - len(succeeded)))
	for _, m := range succeeded {
		dctx, dcancel := context.WithTimeout(withRecorder(ctx, esm), callTimeout)
		if derr := q.Delete(dctx, m.ReceiptHandle); derr != nil && !errors.Is(derr, core.ErrNotFound) && ctx.Err() == nil {
			retried.Add(1)
		}
		dcancel()
	}
	ss := invocationSamples(steps, func(i int) bool { return first(steps[i].RunID) }, inv, sp, esm)
	parts := sp.steps()
	committed := 0
	for _, r := range parts {
		if r.isCommitted() {
			committed++
		}
	}
	done.Add(int64(committed))
	if ss != nil {
		ok(ss, parts)
	}
	return nil
}
