package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/baton-agents/baton/internal/app"
	"github.com/baton-agents/baton/internal/durable"
)

// options select what a benchmark run does.
type options struct {
	smoke       bool
	out         string
	ddbEndpoint string
	sqsEndpoint string
	coldStart   bool
	coldOnly    bool   // the cold-start proxies alone
	coldBase    string // a git revision whose functions are measured beside the working tree's
	concurrency bool
	streaming   bool
	floor       bool
	repoRoot    string
	progress    io.Writer
	turns       []int
	skipCases   bool
	sessions    []int
	log         *slog.Logger
}

func main() {
	var o options
	flag.BoolVar(&o.smoke, "smoke", false, "run 1 and 3 turns in process and in memory only, and check the workload")
	flag.StringVar(&o.out, "out", "", "directory for the Markdown and JSON results (none when empty)")
	flag.BoolVar(&o.coldStart, "coldstart", true, "measure the Lambdas' cold-start proxies (needs make build-lambdas)")
	flag.BoolVar(&o.coldOnly, "coldstart-only", false, "measure the cold-start proxies and nothing else")
	flag.StringVar(&o.coldBase, "coldstart-base", "", "also measure the functions of this git revision (built in a temporary worktree), each start beside the working tree's")
	flag.BoolVar(&o.concurrency, "concurrency", true, "run the concurrency benchmark")
	flag.BoolVar(&o.streaming, "streaming", true, "run the token-streaming benchmark")
	flag.BoolVar(&o.floor, "floor", true, "compare the in-process runner with a hand-written loop at 20, 100 and 500 turns")
	flag.StringVar(&o.repoRoot, "root", ".", "the repository root")
	verbose := flag.Bool("v", false, "log the runner's warnings")
	turns := flag.String("turns", "", "comma-separated turn counts instead of the plan's (for quick runs)")
	flag.BoolVar(&o.skipCases, "skip-cases", false, "skip the per-step cases (for quick runs of the other parts)")
	flag.DurationVar(&concurrencyDeadline, "concurrency-deadline", concurrencyDeadline, "how long a concurrency run may take")
	sessions := flag.String("sessions", "10,100", "comma-separated session counts of the concurrency runs")
	lc := defaultLoad()
	load := flag.Bool("load", false, "run only the load run (make load): -runs runs over -tenants tenants to completion, every request counted")
	flag.IntVar(&lc.Runs, "runs", lc.Runs, "load: runs")
	flag.IntVar(&lc.Tenants, "tenants", lc.Tenants, "load: tenants, each with its own token")
	flag.IntVar(&lc.Turns, "load-turns", lc.Turns, "load: tool-call turns per run (2×turns+1 steps)")
	flag.IntVar(&lc.Pollers, "pollers", lc.Pollers, "load: concurrent worker instances")
	flag.DurationVar(&lc.Deadline, "load-deadline", lc.Deadline, "load: how long the load run may take")
	flag.Parse()
	o.turns, o.sessions = ints(*turns), ints(*sessions)
	o.ddbEndpoint = os.Getenv("BATON_TEST_DYNAMODB_ENDPOINT")
	o.sqsEndpoint = os.Getenv("BATON_TEST_SQS_ENDPOINT")
	level := slog.LevelError
	if *verbose {
		level = slog.LevelWarn
	}
	o.log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	if *load {
		if err := runLoad(context.Background(), o, lc, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if _, err := run(context.Background(), o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// ints parses a comma-separated list of positive integers.
func ints(s string) []int {
	var out []int
	for _, t := range strings.Split(s, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(t)); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}

// plan is a case list: the workloads and how many runs of each a runtime
// gets.
type plan struct {
	turns []int
	sizes []int
	// reps[runtime][turns] is the number of runs.
	reps map[string]map[int]int
}

// fullPlan keeps make bench within 10 minutes on 2 cores: the long cases
// run once on the emulators, where a step costs milliseconds.
func fullPlan() plan {
	return plan{
		turns: []int{1, 20, 100, 500},
		sizes: []int{100, 8 << 10, 64 << 10},
		reps: map[string]map[int]int{
			rtInProcess: {1: 200, 20: 20, 100: 5, 500: 2},
			rtMemory:    {1: 30, 20: 5, 100: 2, 500: 1},
			rtEmulators: {1: 5, 20: 2, 100: 1, 500: 1},
		},
	}
}

func smokePlan() plan {
	return plan{
		turns: []int{1, 3},
		sizes: []int{100, 8 << 10, 64 << 10},
		reps: map[string]map[int]int{
			rtInProcess: {1: 2, 3: 2},
			rtMemory:    {1: 2, 3: 2},
		},
	}
}

// run runs the benchmark, prints (and, with o.out, writes) the report and
// returns the results. Its error means the workload or the harness is
// wrong, never that something was slow.
func run(ctx context.Context, o options, stdout io.Writer) (*results, error) {
	began := time.Now()
	if o.progress == nil {
		o.progress = os.Stderr
	}
	progress := func(format string, args ...any) {
		fmt.Fprintf(o.progress, "[%6.1fs] %s\n", time.Since(began).Seconds(), fmt.Sprintf(format, args...))
	}
	emulators := !o.smoke && o.ddbEndpoint != "" && o.sqsEndpoint != ""
	if o.coldOnly {
		res := &results{Mode: "coldstart", Machine: machine(o.repoRoot)}
		if err := measureColdStarts(ctx, o, emulators, res, progress); err != nil {
			return nil, err
		}
		return report(o, res, began, stdout)
	}
	p := fullPlan()
	if o.smoke {
		p = smokePlan()
	}
	if o.skipCases {
		p.turns = nil
	}
	if len(o.turns) > 0 {
		p.turns = o.turns
		for _, m := range p.reps {
			for _, t := range o.turns {
				if m[t] == 0 {
					m[t] = 1
				}
			}
		}
	}
	// The distributed runtime on the in-memory adapters; its agent
	// registry and tool router also serve the in-process runner.
	mem, err := newDist(ctx, rtMemory, memoryConfig(), app.Deps{
		WrapStore: func(s durable.Store) durable.Store { return &observedStore{Store: s, count: true, sizes: true} },
		WrapQueue: func(q app.Queue) app.Queue { return countedQueue{inner: q, sizes: true} },
	}, o.log, time.Millisecond)
	if err != nil {
		return nil, err
	}
	reg, tools := mem.app.Agents, mem.app.Tools
	res := &results{Mode: map[bool]string{true: "smoke", false: "full"}[o.smoke], Machine: machine(o.repoRoot), Plan: p.reps}

	// The floor: the in-process runner (after a discarded warm-up run).
	if _, err := runInProcess(ctx, reg, tools, workload{Turns: 1, ResultBytes: 100}); err != nil {
		return nil, fmt.Errorf("warm-up: %w", err)
	}
	for _, t := range p.turns {
		for _, size := range p.sizes {
			w := workload{Turns: t, ResultBytes: size}
			var all [][]stepSample
			for i := 0; i < p.reps[rtInProcess][t]; i++ {
				s, err := runInProcess(ctx, reg, tools, w)
				if err != nil {
					return nil, err
				}
				all = append(all, s)
			}
			res.Cases = append(res.Cases, aggregate(rtInProcess, w, nil, all))
		}
	}
	progress("in-process runner done")
	if !o.smoke && o.floor {
		if res.Floor, err = compareFloor(ctx, reg, tools, floorTurns, floorRounds, floorSlice); err != nil {
			return nil, err
		}
		progress("in-process comparison with the floor done")
	}

	// The distributed runtime on the in-memory adapters.
	if _, err := mem.run(ctx, workload{Turns: 1, ResultBytes: 100}); err != nil {
		return nil, fmt.Errorf("warm-up: %w", err)
	}
	if err := runCases(ctx, mem, p, res, progress); err != nil {
		return nil, err
	}
	if !o.smoke {
		// The scripted provider keeps its whole script in the run
		// configuration, which every step's state read returns.
		for _, t := range scriptedTurns(p) {
			if err := runCase(ctx, mem, workload{Turns: t, ResultBytes: 100, Scripted: true}, 1, res, progress); err != nil {
				return nil, err
			}
		}
		if err := runUnchained(ctx, mem, p, res, progress); err != nil {
			return nil, err
		}
	}

	// The distributed runtime on DynamoDB Local and fauxqs. Each part gets
	// a table and a queue of its own, deleted afterwards: DynamoDB Local
	// keeps everything in memory and slows down as it fills.
	if !o.smoke && !emulators {
		res.Notes = append(res.Notes, "The emulator runs were skipped: BATON_TEST_DYNAMODB_ENDPOINT and BATON_TEST_SQS_ENDPOINT are not set (run make bench, or scripts/emulators.sh run go run ./scripts/bench).")
		progress("emulators not configured; skipping their runs")
	}
	if emulators && len(p.turns) > 0 {
		err := withEmulators(ctx, o, false, app.Deps{}, func(emu *distRuntime) error {
			if _, err := emu.run(ctx, workload{Turns: 20, ResultBytes: 100}); err != nil {
				return fmt.Errorf("warm-up: %w", err)
			}
			if err := runCases(ctx, emu, p, res, progress); err != nil {
				return err
			}
			for _, t := range scriptedTurns(p) {
				if err := runCase(ctx, emu, workload{Turns: t, ResultBytes: 100, Scripted: true}, 1, res, progress); err != nil {
					return err
				}
			}
			return runUnchained(ctx, emu, p, res, progress)
		})
		if err != nil {
			return nil, err
		}
		res.CapacitySource = capacitySource()
	}
	res.Scaling, res.Gate = scaling(res.Cases)

	if !o.smoke && o.concurrency {
		for _, n := range o.sessions {
			// Calls are counted, their sizes not (no JSON encoding
			// inside the measurement).
			fresh, err := newDist(ctx, rtMemory, memoryConfig(), app.Deps{
				WrapStore: func(s durable.Store) durable.Store { return &observedStore{Store: s, count: true} },
				WrapQueue: func(q app.Queue) app.Queue { return countedQueue{inner: q} },
			}, o.log, 0)
			if err != nil {
				return nil, err
			}
			c, err := concurrent(ctx, fresh, n)
			if err != nil {
				return nil, err
			}
			res.Concurrency = append(res.Concurrency, c)
			progress("concurrency: memory, %d sessions: %.0f steps/s", n, c.StepsPerSec)
		}
		for _, n := range o.sessions {
			if !emulators {
				break
			}
			err := withEmulators(ctx, o, false, app.Deps{}, func(emu *distRuntime) error {
				c, err := concurrent(ctx, emu, n)
				if err != nil {
					return err
				}
				res.Concurrency = append(res.Concurrency, c)
				progress("concurrency: emulators, %d sessions: %.0f steps/s", n, c.StepsPerSec)
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
	}

	if o.streaming {
		s, err := streaming(ctx, o, progress)
		if err != nil {
			return nil, err
		}
		res.Streaming = s
	}

	if !o.smoke && o.coldStart {
		if err := measureColdStarts(ctx, o, emulators, res, progress); err != nil {
			return nil, err
		}
	}
	return report(o, res, began, stdout)
}

// measureColdStarts adds the cold-start proxies to res, on a table and a
// queue of their own on the emulators when they run.
func measureColdStarts(ctx context.Context, o options, emulators bool, res *results, progress func(string, ...any)) error {
	measure := func(target coldTarget) error {
		cs, base, note, err := coldStarts(ctx, o, target)
		if err != nil {
			// A cold-start proxy that cannot be measured is reported,
			// not fatal: the workload is what must be right.
			res.Notes = append(res.Notes, "Cold-start proxies not measured: "+err.Error())
			progress("cold start: %v", err)
			return nil
		}
		res.ColdStart, res.ColdStartBase = cs, base
		if note != "" {
			res.Notes = append(res.Notes, note)
		}
		progress("cold-start proxies done")
		return nil
	}
	if emulators {
		return withEmulators(ctx, o, false, app.Deps{}, func(emu *distRuntime) error {
			return measure(coldTarget{table: emu.table, queueURL: emu.queueURL, ddb: o.ddbEndpoint, sqs: o.sqsEndpoint})
		})
	}
	return measure(coldTarget{})
}

// report prints (and, with o.out, writes) the report of res.
func report(o options, res *results, began time.Time, stdout io.Writer) (*results, error) {
	res.DurationS = time.Since(began).Seconds()
	md := markdown(res)
	if _, err := io.WriteString(stdout, md); err != nil {
		return nil, fmt.Errorf("print report: %w", err)
	}
	if o.out != "" {
		paths, err := write(o.out, res, md)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(stdout, "\nWrote %s.\n", strings.Join(paths, " and "))
	}
	return res, nil
}

// scriptedTurns are the turn counts of the scripted-provider variant:
// the plan's 20 and 500.
func scriptedTurns(p plan) []int {
	var out []int
	for _, t := range p.turns {
		if t == 20 || t == 500 {
			out = append(out, t)
		}
	}
	return out
}

// runUnchained runs the plan's 20-turn, 100 B workload again with the
// worker's chaining off, as often as the chained one, so that one report
// sets the two side by side.
func runUnchained(ctx context.Context, d *distRuntime, p plan, res *results, progress func(string, ...any)) error {
	for _, t := range p.turns {
		if t == 20 {
			return runCase(ctx, d, workload{Turns: t, ResultBytes: 100, NoChain: true}, p.reps[d.name][t], res, progress)
		}
	}
	return nil
}

// runCases runs every workload of the plan on a distributed runtime.
func runCases(ctx context.Context, d *distRuntime, p plan, res *results, progress func(string, ...any)) error {
	for _, t := range p.turns {
		for _, size := range p.sizes {
			if err := runCase(ctx, d, workload{Turns: t, ResultBytes: size}, p.reps[d.name][t], res, progress); err != nil {
				return err
			}
		}
	}
	return nil
}

func runCase(ctx context.Context, d *distRuntime, w workload, reps int, res *results, progress func(string, ...any)) error {
	var runs []runResult
	for i := 0; i < reps; i++ {
		r, err := d.run(ctx, w)
		if err != nil {
			return err
		}
		runs = append(runs, r)
	}
	res.Cases = append(res.Cases, aggregate(d.name, w, runs, nil))
	progress("%s: %s × %d done", d.name, w, reps)
	return nil
}

// memoryConfig selects the embedded in-memory adapters.
func memoryConfig() app.Config { return app.Config{Stores: app.Stores{Memory: true}} }

// withEmulators runs f on a runtime over a new table and queue, and
// deletes them afterwards; oneProcess as app.Stores.OneProcess (baton
// dev's streams wake on its writes).
func withEmulators(ctx context.Context, o options, oneProcess bool, deps app.Deps, f func(*distRuntime) error) error {
	emu, cleanup, err := emulatorRuntime(ctx, o, oneProcess, deps)
	if err != nil {
		return err
	}
	defer cleanup()
	return f(emu)
}

// emulatorRuntime creates a table and a queue with names of their own on
// the emulators and returns the runtime over them, and a cleanup that
// deletes them. Its DynamoDB and SQS clients count their calls (with
// instrument unless deps says otherwise), and its store notes what steps
// read and commit (unless deps wraps it otherwise).
func emulatorRuntime(ctx context.Context, o options, oneProcess bool, deps app.Deps, tune ...func(*app.Config)) (*distRuntime, func(), error) {
	name := randomID("baton-bench")
	setup, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cfg := app.Config{Region: "us-east-1", Stores: app.Stores{DynamoDBEndpoint: o.ddbEndpoint, SQSEndpoint: o.sqsEndpoint,
		Table: name, QueueName: name, CreateResources: true, OneProcess: oneProcess}}
	for _, f := range tune {
		f(&cfg)
	}
	if deps.WrapStore == nil {
		deps.WrapStore = func(s durable.Store) durable.Store { return &observedStore{Store: s} }
	}
	if deps.InstrumentAWS == nil {
		deps.InstrumentAWS = instrument
	}
	d, err := newDist(setup, rtEmulators, cfg, deps, o.log, 20*time.Millisecond)
	if err != nil {
		return nil, nil, fmt.Errorf("emulators: %w", err)
	}
	cleanup := func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := d.app.DeleteResources(ctx); err != nil {
			o.log.Warn("delete the benchmark's table and queues", "err", err)
		}
	}
	return d, cleanup, nil
}
