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
	Function    string  `json:"function"`
	BinaryBytes int64   `json:"bootstrap_arm64_bytes"`
	ZipBytes    int64   `json:"zip_bytes"`
	NativeBytes int64   `json:"amd64_binary_bytes"`
	InitMS      dist    `json:"init_ms"`
	InitMin     float64 `json:"init_min_ms"`
	InvokeMS    dist    `json:"invoke_ms"`
	Outcome     string  `json:"outcome"`
}

// coldTarget is where the functions' AWS clients point.
type coldTarget struct {
	table, queueURL string
	ddb, sqs        string
}

// lambdaEvents are the sample events of the single invocation.
var lambdaEvents = map[string]string{
	"api":     "events/api/get-run.json",
	"worker":  "events/sqs/step-batch.json",
	"sweeper": "",
}

// coldStarts measures each function: the sizes make build-lambdas wrote,
// and the time from exec to the first request for an invocation of a
// native build of the same main package, on a fake Lambda Runtime API.
func coldStarts(ctx context.Context, o options, t coldTarget) ([]coldResult, string, error) {
	root, err := filepath.Abs(o.repoRoot)
	if err != nil {
		return nil, "", fmt.Errorf("repository root: %w", err)
	}
	tmp, err := os.MkdirTemp("", "baton-bench-lambdas-")
	if err != nil {
		return nil, "", fmt.Errorf("temp dir: %w", err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	note := ""
	extra := []string(nil)
	if t.ddb == "" {
		extra = append(extra, "AWS_MAX_ATTEMPTS=1")
		// Nothing listens there: init makes no AWS call, so init time is
		// unaffected; the invocation's AWS calls fail fast.
		t = coldTarget{table: "baton-bench-none", queueURL: "http://127.0.0.1:9/000000000000/none.fifo", ddb: "http://127.0.0.1:9", sqs: "http://127.0.0.1:9"}
		note = "Cold start: the emulators were not running, so the functions' endpoints pointed at an unused port; init makes no AWS call, and the one invocation's response may be an error, which does not affect the init proxy."
	}
	var out []coldResult
	for _, fn := range []string{"api", "worker", "sweeper"} {
		r := coldResult{Function: fn}
		if fi, err := os.Stat(filepath.Join(root, "build", fn, "bootstrap")); err == nil {
			r.BinaryBytes = fi.Size()
		}
		if fi, err := os.Stat(filepath.Join(root, "build", fn+".zip")); err == nil {
			r.ZipBytes = fi.Size()
		}
		bin := filepath.Join(tmp, fn)
		build := exec.CommandContext(ctx, "go", "build", "-tags", "lambda.norpc grpcnotrace", "-trimpath", "-buildvcs=false", "-ldflags=-s -w -buildid=", "-o", bin, "./functions/"+fn)
		build.Dir = root
		build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
		if b, err := build.CombinedOutput(); err != nil {
			return nil, "", fmt.Errorf("build %s: %w: %s", fn, err, b)
		}
		if fi, err := os.Stat(bin); err == nil {
			r.NativeBytes = fi.Size()
		}
		event := []byte("{}")
		if p := lambdaEvents[fn]; p != "" {
			if event, err = os.ReadFile(filepath.Join(root, p)); err != nil {
				return nil, "", fmt.Errorf("event of %s: %w", fn, err)
			}
		}
		env := []string{
			"PATH=" + os.Getenv("PATH"), "HOME=" + tmp,
			"BATON_TABLE=" + t.table, "BATON_QUEUE_URL=" + t.queueURL,
			"BATON_AGENTS_FILE=" + filepath.Join(root, "cmd/baton/agents.demo.json"), "BATON_PROVIDERS=scripted",
			"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local", "AWS_EC2_METADATA_DISABLED=true",
			"AWS_ENDPOINT_URL_DYNAMODB=" + t.ddb, "AWS_ENDPOINT_URL_SQS=" + t.sqs,
			"AWS_LAMBDA_FUNCTION_NAME=baton-" + fn, "AWS_LAMBDA_FUNCTION_MEMORY_SIZE=1024", "AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
			"LOG_LEVEL=error",
		}
		env = append(env, extra...)
		var inits, invokes []float64
		for i := 0; i < coldRuns; i++ {
			initMS, invokeMS, outcome, err := coldStart(ctx, bin, env, event)
			if err != nil {
				return nil, "", fmt.Errorf("%s: %w", fn, err)
			}
			inits = append(inits, initMS)
			invokes = append(invokes, invokeMS)
			if r.Outcome == "" {
				r.Outcome = outcome
			}
		}
		r.InitMS, r.InvokeMS = distOf(inits), distOf(invokes)
		r.InitMin = r.InitMS.Max
		for _, x := range inits {
			r.InitMin = min(r.InitMin, x)
		}
		out = append(out, r)
	}
	return out, note, nil
}

// invocationResult is the function's answer to the one invocation.
type invocationResult struct {
	kind string // "response" or "error"
	body []byte
	at   time.Time
}

// coldStart execs bin once with a fake Runtime API and returns the time
// from exec to its first GET …/invocation/next, the time from handing it
// the event to its response, and what it answered; then it kills the
// process by its PID.
func coldStart(ctx context.Context, bin string, env []string, event []byte) (initMS, invokeMS float64, outcome string, err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, 0, "", fmt.Errorf("listen: %w", err)
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
		return 0, 0, "", fmt.Errorf("exec: %w", err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	timeout := time.NewTimer(15 * time.Second)
	defer timeout.Stop()
	var ready time.Time
	select {
	case ready = <-first:
	case r := <-result:
		return 0, 0, "", fmt.Errorf("%s before the first invocation: %s (stderr: %s)", r.kind, r.body, stderr.String())
	case <-timeout.C:
		return 0, 0, "", errors.New("no request for an invocation within 15 s (stderr: " + stderr.String() + ")")
	case <-ctx.Done():
		return 0, 0, "", ctx.Err()
	}
	handed := <-served
	select {
	case r := <-result:
		return ms(ready.Sub(t0)), ms(r.at.Sub(handed)), describe(r), nil
	case <-timeout.C:
		return 0, 0, "", errors.New("no response to the invocation within 15 s (stderr: " + stderr.String() + ")")
	case <-ctx.Done():
		return 0, 0, "", ctx.Err()
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
