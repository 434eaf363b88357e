package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"
)

// coldRuns is how many times each function is started.
const coldRuns = 20

// coldResult is one Lambda's cold-start proxies.
type coldResult struct {
	Function string `json:"function"`
	// Commit is the commit whose code was measured: the working tree's,
	// or -coldstart-base's.
	Commit      string  `json:"commit"`
	BinaryBytes int64   `json:"bootstrap_arm64_bytes"`
	ZipBytes    int64   `json:"zip_bytes"`
	NativeBytes int64   `json:"amd64_binary_bytes"`
	InitMS      dist    `json:"init_ms"`
	InitMin     float64 `json:"init_min_ms"`
	InvokeMS    dist    `json:"invoke_ms"`
	Outcome     string  `json:"outcome"`
	// Init is its package initialisation, itemised (GODEBUG=inittrace=1).
	Init initSummary `json:"package_init"`
}

// coldTarget is where the functions' AWS clients point.
type coldTarget struct {
	table, queueURL string
	ddb, sqs        string
}

// coldFunctions are the functions measured, in the report's order.
var coldFunctions = []string{"api", "worker", "sweeper", "intake"}

// lambdaEvents are the sample events of the single invocation: a file
// of the repository, or the event itself when it starts with "{".
var lambdaEvents = map[string]string{
	"api":     "events/api/get-run.json",
	"worker":  "events/sqs/step-batch.json",
	"sweeper": "{}",
	"intake":  `{"Records":[]}`,
}

// coldVariant is one build of the functions: the working tree's, or a
// base commit's (checked out in a temporary worktree).
type coldVariant struct {
	commit string
	root   string            // the repository (or worktree) it is built from
	bins   map[string]string // function → native binary
}

// coldStarts measures each function: the sizes make build-lambdas wrote,
// and the time from exec to the first request for an invocation of a
// native build of the same main package, on a fake Lambda Runtime API,
// and its package initialisation (initTraceRuns more starts with
// GODEBUG=inittrace=1). With o.coldBase it measures that commit's
// functions too, built in a temporary git worktree, each start of one
// beside the same start of the other, so both see the same machine; the
// base's results are the second slice.
func coldStarts(ctx context.Context, o options, t coldTarget) (cur, base []coldResult, note string, err error) {
	root, err := filepath.Abs(o.repoRoot)
	if err != nil {
		return nil, nil, "", fmt.Errorf("repository root: %w", err)
	}
	tmp, err := os.MkdirTemp("", "baton-bench-lambdas-")
	if err != nil {
		return nil, nil, "", fmt.Errorf("temp dir: %w", err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	extra := []string(nil)
	if t.ddb == "" {
		extra = append(extra, "AWS_MAX_ATTEMPTS=1")
		// Nothing listens there: the functions' AWS calls at init (the
		// default alias's read) fail fast, and with them their init.
		t = coldTarget{table: "baton-bench-none", queueURL: "http://127.0.0.1:9/000000000000/none.fifo", ddb: "http://127.0.0.1:9", sqs: "http://127.0.0.1:9"}
		note = "Cold start: the emulators were not running, so the functions' endpoints pointed at an unused port; init reads the default agent alias from DynamoDB, so it fails there (run on the emulators)."
	}
	variants := []*coldVariant{{commit: machine(root).Commit, root: root}}
	if o.coldBase != "" {
		wt := filepath.Join(tmp, "base")
		add := exec.CommandContext(ctx, "git", "-C", root, "worktree", "add", "--detach", wt, o.coldBase)
		if b, err := add.CombinedOutput(); err != nil {
			return nil, nil, "", fmt.Errorf("git worktree add %s: %w: %s", o.coldBase, err, b)
		}
		defer func() { _ = exec.Command("git", "-C", root, "worktree", "remove", "--force", wt).Run() }()
		rev, err := exec.CommandContext(ctx, "git", "-C", wt, "rev-parse", "--short=12", "HEAD").Output()
		if err != nil {
			return nil, nil, "", fmt.Errorf("git rev-parse %s: %w", o.coldBase, err)
		}
		variants = append(variants, &coldVariant{commit: strings.TrimSpace(string(rev)), root: wt})
	}
	for i, v := range variants {
		v.bins = map[string]string{}
		for _, fn := range coldFunctions {
			bin := filepath.Join(tmp, fmt.Sprintf("%s-%d", fn, i))
			build := exec.CommandContext(ctx, "go", "build", "-tags", "lambda.norpc grpcnotrace", "-trimpath", "-buildvcs=false", "-ldflags=-s -w -buildid=", "-o", bin, "./functions/"+fn)
			build.Dir = v.root
			build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
			if b, err := build.CombinedOutput(); err != nil {
				return nil, nil, "", fmt.Errorf("build %s of %s: %w: %s", fn, v.commit, err, b)
			}
			v.bins[fn] = bin
		}
	}
	results := make([][]coldResult, len(variants))
	for _, fn := range coldFunctions {
		event := []byte(lambdaEvents[fn])
		if !strings.HasPrefix(lambdaEvents[fn], "{") {
			if event, err = os.ReadFile(filepath.Join(root, lambdaEvents[fn])); err != nil {
				return nil, nil, "", fmt.Errorf("event of %s: %w", fn, err)
			}
		}
		env := []string{
			"PATH=" + os.Getenv("PATH"), "HOME=" + tmp,
			"BATON_TABLE=" + t.table, "BATON_QUEUE_URL=" + t.queueURL, "BATON_INTAKE_DLQ_URL=" + t.queueURL,
			"BATON_AGENTS_FILE=" + filepath.Join(root, "cmd/baton/agents.demo.json"), "BATON_PROVIDERS=scripted",
			"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local", "AWS_EC2_METADATA_DISABLED=true",
			"AWS_ENDPOINT_URL_DYNAMODB=" + t.ddb, "AWS_ENDPOINT_URL_SQS=" + t.sqs,
			"AWS_LAMBDA_FUNCTION_NAME=baton-" + fn, "AWS_LAMBDA_FUNCTION_MEMORY_SIZE=1024", "AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
			"LOG_LEVEL=error",
		}
		env = append(env, extra...)
		rs := make([]coldResult, len(variants))
		inits, invokes := make([][]float64, len(variants)), make([][]float64, len(variants))
		traces := make([][][]pkgInit, len(variants))
		for i := 0; i < coldRuns+initTraceRuns; i++ {
			traced := i >= coldRuns
			runEnv := env
			if traced {
				runEnv = append(append([]string(nil), env...), "GODEBUG=inittrace=1")
			}
			for k, v := range variants {
				r, err := coldStart(ctx, v.bins[fn], runEnv, event)
				if err != nil {
					return nil, nil, "", fmt.Errorf("%s of %s: %w", fn, v.commit, err)
				}
				if traced {
					traces[k] = append(traces[k], parseInitTrace(r.stderr))
					continue
				}
				inits[k] = append(inits[k], r.initMS)
				invokes[k] = append(invokes[k], r.invokeMS)
				if rs[k].Outcome == "" {
					rs[k].Outcome = r.outcome
				}
			}
		}
		for k, v := range variants {
			r := &rs[k]
			r.Function, r.Commit = fn, v.commit
			if k == 0 {
				if fi, err := os.Stat(filepath.Join(root, "build", fn, "bootstrap")); err == nil {
					r.BinaryBytes = fi.Size()
				}
				if fi, err := os.Stat(filepath.Join(root, "build", fn+".zip")); err == nil {
					r.ZipBytes = fi.Size()
				}
			}
			if fi, err := os.Stat(v.bins[fn]); err == nil {
				r.NativeBytes = fi.Size()
			}
			r.InitMS, r.InvokeMS = distOf(inits[k]), distOf(invokes[k])
			r.InitMin = r.InitMS.Max
			for _, x := range inits[k] {
				r.InitMin = min(r.InitMin, x)
			}
			r.Init = summarizeInit(traces[k], initTopPackages)
			results[k] = append(results[k], *r)
		}
	}
	if len(results) > 1 {
		base = results[1]
	}
	return results[0], base, note, nil
}

// invocationResult is the function's answer to the one invocation.
type invocationResult struct {
	kind string // "response" or "error"
	body []byte
	at   time.Time
}

// coldRun is one start of a function.
type coldRun struct {
	// initMS is the time from exec to its first GET …/invocation/next,
	// invokeMS the time from handing it the event to its response.
	initMS, invokeMS float64
	outcome          string // what it answered
	stderr           string // what it wrote to stderr until it was killed
}

// coldStart execs bin once with a fake Runtime API and returns the run;
// then it kills the process by its PID.
func coldStart(ctx context.Context, bin string, env []string, event []byte) (run coldRun, err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return run, fmt.Errorf("listen: %w", err)
	}
	first := make(chan time.Time, 1)
	served := make(chan time.Time, 1)
	result := make(chan invocationResult, 1)
	var gotFirst atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", func(w http.ResponseWriter, r *http.Request) {
		at := time.Now()
		if gotFirst.Swap(true) {
			<-r.Context().Done() // the next invocation never comes
			return
		}
		first <- at
		h := w.Header()
		h.Set("Lambda-Runtime-Aws-Request-Id", "bench-request-1")
		h.Set("Lambda-Runtime-Deadline-Ms", fmt.Sprint(time.Now().Add(30*time.Second).UnixMilli()))
		h.Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:baton-bench")
		h.Set("Lambda-Runtime-Trace-Id", "Root=1-00000000-000000000000000000000000;Sampled=0")
		h.Set("Content-Type", "application/json")
		served <- time.Now()
		_, _ = w.Write(event)
	})
	answer := func(kind string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			at := time.Now()
			b, _ := io.ReadAll(r.Body)
			w.WriteHeader(http.StatusAccepted)
			select {
			case result <- invocationResult{kind: kind, body: b, at: at}:
			default:
			}
		}
	}
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/response", answer("response"))
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/error", answer("error"))
	mux.HandleFunc("POST /2018-06-01/runtime/init/error", answer("init error"))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() { _ = srv.Close() }()

	cmd := exec.Command(bin)
	cmd.Env = append(append([]string(nil), env...), "AWS_LAMBDA_RUNTIME_API="+ln.Addr().String())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return run, fmt.Errorf("exec: %w", err)
	}
	exited := false
	stop := func() string { // kills the process; then stderr is complete
		if !exited {
			exited = true
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		return stderr.String()
	}
	defer stop()
	timeout := time.NewTimer(15 * time.Second)
	defer timeout.Stop()
	var ready time.Time
	select {
	case ready = <-first:
	case r := <-result:
		return run, fmt.Errorf("%s before the first invocation: %s (stderr: %s)", r.kind, r.body, stop())
	case <-timeout.C:
		return run, errors.New("no request for an invocation within 15 s (stderr: " + stop() + ")")
	case <-ctx.Done():
		return run, ctx.Err()
	}
	handed := <-served
	select {
	case r := <-result:
		run = coldRun{initMS: ms(ready.Sub(t0)), invokeMS: ms(r.at.Sub(handed)), outcome: describe(r)}
		run.stderr = stop()
		return run, nil
	case <-timeout.C:
		return run, errors.New("no response to the invocation within 15 s (stderr: " + stop() + ")")
	case <-ctx.Done():
		return run, ctx.Err()
	}
}

// describe summarizes an invocation's answer.
func describe(r invocationResult) string {
	var v map[string]any
	if json.Unmarshal(r.body, &v) == nil {
		if code, ok := v["statusCode"]; ok {
			return fmt.Sprintf("%s, HTTP %v", r.kind, code)
		}
		if f, ok := v["batchItemFailures"].([]any); ok {
			return fmt.Sprintf("%s, %d batch item failures", r.kind, len(f))
		}
		if msg, ok := v["errorMessage"]; ok {
			s := fmt.Sprint(msg)
			if len(s) > 80 {
				s = s[:80] + "…"
			}
			return fmt.Sprintf("%s: %s", r.kind, s)
		}
	}
	s := string(r.body)
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return fmt.Sprintf("%s: %s", r.kind, s)
}
