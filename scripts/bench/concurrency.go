package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/durable"
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
		eng := d.newRunner()
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
				for _, m := range ds {
					if err := handle(pctx, eng, d.queue, m, &retried, func(took time.Duration, end time.Time, r map[string]opStat) {
						mu.Lock()
						stepMS = append(stepMS, ms(took))
						if !m.SentAt.IsZero() {
							q2c = append(q2c, ms(end.Sub(m.SentAt)))
						}
						for op, o := range r {
							t := ops[op]
							t.add(o)
							ops[op] = t
						}
						mu.Unlock()
						done.Add(1)
					}); err != nil {
						if pctx.Err() == nil {
							fail(fmt.Errorf("poller %d: %w", p, err))
						}
						return
					}
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
	total := 0
	res.Ops = map[string]float64{}
	for op, o := range ops {
		total += o.Calls
		res.Ops[op] = float64(o.Calls) / float64(expected)
	}
	res.RoundTrips = float64(total) / float64(expected)
	res.MinRoundTrips = minRunRT(w)
	res.TranscriptReads = float64(ops[opTranscriptRead].Calls) / float64(expected)
	return res, nil
}

// minRunRT is the documented minimum of round trips per step, averaged
// over the steps of one run of w.
func minRunRT(w workload) float64 {
	sum := 0
	add := func(kind, class string, n int) {
		for _, c := range minOps(kind, class, deliveryQueued, true) {
			sum += c * n
		}
	}
	add(string(core.StepModelTurn), classFirst, 1)
	add(string(core.StepModelTurn), classSteady, w.Turns-1)
	add(string(core.StepToolCall), classSteady, w.Turns)
	add(string(core.StepModelTurn), classFinal, 1)
	return float64(sum) / float64(w.steps())
}

// handle runs one message's step, as the worker does: on success it
// deletes the message; on failure it leaves it to be received again after
// the queue's visibility timeout (the worker reports a batch item
// failure). Every call has a time limit, so that a request an emulator
// never answers costs a redelivery instead of a stuck poller.
func handle(ctx context.Context, eng *durable.Runner, q core.StepReceiver, m core.ReceivedMessage, retried *atomic.Int64, ok func(time.Duration, time.Time, map[string]opStat)) error {
	var step core.Step
	if err := json.Unmarshal(m.Body, &step); err != nil {
		return fmt.Errorf("message %s is not a step: %w", m.MessageID, err)
	}
	r := newRecorder()
	sctx, cancel := context.WithTimeout(withRecorder(ctx, r), callTimeout)
	defer cancel()
	t0 := time.Now()
	err := eng.HandleStep(sctx, step, durable.Attempt{ReceiveCount: m.ReceiveCount, Owner: m.MessageID + "#" + strconv.Itoa(m.ReceiveCount)})
	end := time.Now()
	if err != nil {
		retried.Add(1)
		return nil
	}
	dctx, dcancel := context.WithTimeout(ctx, callTimeout)
	defer dcancel()
	if derr := q.Delete(dctx, m.ReceiptHandle); derr != nil && !errors.Is(derr, core.ErrNotFound) && ctx.Err() == nil {
		retried.Add(1)
	}
	ok(end.Sub(t0), end, r.finish())
	return nil
}
