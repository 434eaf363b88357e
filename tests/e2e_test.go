//go:build e2e

package tests

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/baton-agents/baton/events"
	"github.com/baton-agents/baton/internal/openapitest"
)

const (
	tokAcme   = "tok-acme-e2e-000"
	tokGlobex = "tok-globex-e2e-0"
	// tokAcmeCRM is a second acme token that also holds the extra scope
	// crm:write.
	tokAcmeCRM = "tok-acme-crm-e2e"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "baton-e2e")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "baton")
	build := exec.Command("go", "build", "-o", binary, "../cmd/baton")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build baton:", err)
		os.Exit(1)
	}
	checkAPI, err = openapitest.New(events.OpenAPI)
	if err != nil {
		fmt.Fprintln(os.Stderr, "the OpenAPI document:", err)
		os.Exit(1)
	}
	// Every exchange of the suite with Baton's API goes through the
	// checker (http.DefaultTransport, which every client here uses).
	http.DefaultTransport = checkAPI.Transport(http.DefaultTransport, func(r *http.Request) bool {
		p := strings.TrimPrefix(r.URL.Path, "/iam")
		return r.URL.Hostname() == "127.0.0.1" && (strings.HasPrefix(p, "/v1/") || strings.HasPrefix(p, "/a2a/"))
	})
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		code = reportOpenAPI()
	}
	os.Exit(code)
}

// checkAPI checks the suite's traffic against the OpenAPI document.
var checkAPI *openapitest.Checker

// reportOpenAPI fails the run on an exchange the document does not
// describe and, when the whole suite ran, on an operation no test
// reached; it prints the statuses each operation answered.
func reportOpenAPI() int {
	code := 0
	for _, p := range checkAPI.Problems() {
		fmt.Fprintln(os.Stderr, "OpenAPI:", p)
		code = 1
	}
	if f := flag.Lookup("test.run"); f != nil && f.Value.String() == "" && os.Getenv("BATON_E2E_BASE_URL") == "" {
		for _, op := range checkAPI.Unseen() {
			fmt.Fprintln(os.Stderr, "OpenAPI: no test reached", op)
			code = 1
		}
	}
	if testing.Verbose() {
		for op, st := range checkAPI.Seen() {
			fmt.Fprintln(os.Stderr, "OpenAPI covered:", op, st)
		}
	}
	return code
}

// dev is a running `baton dev`.
type dev struct {
	cmd  *exec.Cmd
	base string
	out  *syncBuffer
	args []string
	// stdout holds baton dev's start-up lines (its hint among them).
	stdout *syncBuffer
}

func randomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// devArgs points baton dev at the emulators when they are configured.
func devArgs(t *testing.T) []string {
	args := []string{"dev", "--addr", "127.0.0.1:0", "--agents", "testdata/agents.json", "--visibility-timeout", "5s"}
	ddb, sqs := os.Getenv("BATON_TEST_DYNAMODB_ENDPOINT"), os.Getenv("BATON_TEST_SQS_ENDPOINT")
	if ddb != "" && sqs != "" {
		name := "baton-e2e-" + randomSuffix()
		args = append(args, "--dynamodb-endpoint", ddb, "--sqs-endpoint", sqs, "--create-resources", "--table", name, "--queue", name)
		t.Logf("baton dev on DynamoDB Local (%s) and fauxqs (%s)", ddb, sqs)
	} else {
		t.Log("baton dev on embedded stores (set BATON_TEST_DYNAMODB_ENDPOINT and BATON_TEST_SQS_ENDPOINT for the emulators)")
	}
	return args
}

var servingRe = regexp.MustCompile(`on (http://127\.0\.0\.1:\d+)`)

func startDev(t *testing.T, args []string) *dev {
	t.Helper()
	if base := os.Getenv("BATON_E2E_BASE_URL"); base != "" {
		// A deployed stack (make e2e-localstack): nothing to start.
		return &dev{base: strings.TrimRight(base, "/"), out: &syncBuffer{}}
	}
	return launchDev(t, args, "BATON_DEV_TOKENS=acme="+tokAcme+",globex="+tokGlobex+",acme="+tokAcmeCRM+"+crm:write,acme="+tokAdmin+"+agents:manage", "AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local")
}

// launchDev starts baton with args and extra environment and waits until
// it is ready; it is stopped when the test ends.
func launchDev(t *testing.T, args []string, env ...string) *dev {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d := &dev{cmd: cmd, out: logs, args: args, stdout: &syncBuffer{}}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		base := ""
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(d.stdout, line)
			if m := servingRe.FindStringSubmatch(line); m != nil && base == "" {
				base = m[1]
			}
			if strings.Contains(line, "baton dev: ready") {
				ready <- base
			}
		}
	}()
	select {
	case d.base = <-ready:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("baton dev did not start; logs:\n%s", logs.String())
	}
	t.Cleanup(func() { d.stop(t) })
	return d
}

func (d *dev) stop(t *testing.T) {
	if d.cmd == nil || d.cmd.ProcessState != nil {
		return
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- d.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = d.cmd.Process.Kill()
		<-done
		t.Errorf("baton dev did not stop on SIGTERM")
	}
	if t.Failed() {
		t.Logf("baton dev logs:\n%s", d.out.String())
	}
}

type resp struct {
	status int
	body   map[string]any
	header http.Header
}

func (d *dev) call(t *testing.T, method, path, token, body string, hdr ...string) resp {
	t.Helper()
	req, err := http.NewRequest(method, d.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	res, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var m map[string]any
	if len(b) == 0 && res.StatusCode == http.StatusNoContent {
		return resp{res.StatusCode, nil, res.Header}
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s %s: %d, body not JSON: %s", method, path, res.StatusCode, b)
	}
	return resp{res.StatusCode, m, res.Header}
}

func errCode(r resp) string {
	e, _ := r.body["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

// waitStatus long-polls until the run leaves queued/running.
func (d *dev) waitStatus(t *testing.T, runID string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		r := d.call(t, "GET", "/v1/runs/"+runID+"?wait=5", tokAcme, "")
		if r.status != 200 {
			t.Fatalf("get run: %d %v", r.status, r.body)
		}
		if s := r.body["status"]; s != "queued" && s != "running" {
			return r.body
		}
	}
	t.Fatalf("run %s did not settle", runID)
	return nil
}

func start(t *testing.T, d *dev, body string) string {
	t.Helper()
	r := d.call(t, "POST", "/v1/runs", tokAcme, body)
	if r.status != 202 {
		t.Fatalf("start: %d %v", r.status, r.body)
	}
	return r.body["run_id"].(string)
}

func pending(v map[string]any, kind, idKey string) string {
	list := v["pending"].(map[string]any)[kind].([]any)
	if len(list) == 0 {
		return ""
	}
	return list[0].(map[string]any)[idKey].(string)
}

func result(v map[string]any) map[string]any { return v["result"].(map[string]any) }

const clientTools = `"tools":[{"name":"client/get_calendar","description":"Read the calendar.","parameters":{"type":"object","required":["day"],"properties":{"day":{"type":"string"}}}}]`

func TestEndToEnd(t *testing.T) {
	d := startDev(t, devArgs(t))

	t.Run("run completes", func(t *testing.T) {
		id := start(t, d, `{"agent":"e2e","messages":[{"role":"user","content":"hi"}],"model":{"provider":"scripted","turns":[
			{"tool_calls":[{"id":"c1","name":"ability/echo","parameters":{"text":"ping"}}]},{"content":"pong"}]}}`)
		v := d.waitStatus(t, id)
		if v["status"] != "completed" || result(v)["final_content"] != "pong" || result(v)["turn_count"].(float64) != 2 {
			t.Fatalf("%v", v)
		}
	})

	t.Run("client tool pause, submit, complete", func(t *testing.T) {
		id := start(t, d, `{"agent":"e2e","messages":[{"role":"user","content":"plan"}],`+clientTools+`,"model":{"provider":"scripted","turns":[
			{"tool_calls":[{"id":"c1","name":"client/get_calendar","parameters":{"day":"monday"}}]},{"content":"Monday is free."}]}}`)
		v := d.waitStatus(t, id)
		if v["status"] != "runtime_tool_pending" {
			t.Fatalf("%v", v)
		}
		req := pending(v, "tool_requests", "request_id")
		r := d.call(t, "POST", "/v1/runs/"+id+"/tool-results", tokAcme, `{"request_id":"`+req+`","success":true,"result":{"events":[]}}`)
		if r.status != 202 || (r.body["status"] != "queued" && r.body["status"] != "running" && r.body["status"] != "completed") {
			t.Fatalf("submit: %d %v", r.status, r.body)
		}
		second := d.call(t, "POST", "/v1/runs/"+id+"/tool-results", tokAcme, `{"request_id":"`+req+`","success":true,"result":{}}`)
		if second.status != 409 {
			t.Fatalf("second submit: %d %v", second.status, second.body)
		}
		v = d.waitStatus(t, id)
		if v["status"] != "completed" || result(v)["final_content"] != "Monday is free." {
			t.Fatalf("%v", v)
		}
	})

	for _, decision := range []string{"accept", "reject"} {
		t.Run("approval "+decision, func(t *testing.T) {
			id := start(t, d, `{"agent":"e2e","messages":[{"role":"user","content":"mail ann"}],"model":{"provider":"scripted","turns":[
				{"tool_calls":[{"id":"c1","name":"ability/send_email","parameters":{"to":"ann@example.com"}}]},{"content":"Done."}]}}`)
			v := d.waitStatus(t, id)
			if v["status"] != "approval_required" {
				t.Fatalf("%v", v)
			}
			act := pending(v, "actions", "action_id")
			r := d.call(t, "POST", "/v1/runs/"+id+"/approvals/"+act, tokAcme, `{"decision":"`+decision+`","reason":"checked"}`)
			if r.status != 202 {
				t.Fatalf("decide: %d %v", r.status, r.body)
			}
			again := d.call(t, "POST", "/v1/runs/"+id+"/approvals/"+act, tokAcme, `{"decision":"accept"}`)
			if again.status != 409 {
				t.Fatalf("second decision: %d %v", again.status, again.body)
			}
			v = d.waitStatus(t, id)
			res := result(v)["tool_execution_results"].([]any)[0].(map[string]any)["result"].(map[string]any)
			if v["status"] != "completed" || (decision == "accept") != res["success"].(bool) {
				t.Fatalf("%s: %v", decision, v)
			}
			if decision == "reject" && res["error_type"] != "rejected" {
				t.Fatalf("reject: %v", res)
			}
		})
	}

	t.Run("budget trips", func(t *testing.T) {
		id := start(t, d, `{"agent":"e2e","messages":[{"role":"user","content":"x"}],"budgets":{"tool_calls":1},"model":{"provider":"scripted","turns":[
			{"tool_calls":[{"id":"c1","name":"ability/echo","parameters":{"text":"a"}},{"id":"c2","name":"ability/echo","parameters":{"text":"b"}}]},{"content":"never"}]}}`)
		v := d.waitStatus(t, id)
		if v["status"] != "budget_exceeded" || result(v)["budget"] != "tool_calls" || result(v)["completed"] != false {
			t.Fatalf("%v", v)
		}
	})

	t.Run("cancel and steering", func(t *testing.T) {
		id := start(t, d, `{"agent":"e2e","messages":[{"role":"user","content":"plan"}],`+clientTools+`,"model":{"provider":"scripted","turns":[
			{"tool_calls":[{"id":"c1","name":"client/get_calendar","parameters":{"day":"monday"}}]},{"content":"unused"}]}}`)
		d.waitStatus(t, id)
		r := d.call(t, "POST", "/v1/runs/"+id+"/messages", tokAcme, `{"content":"Also Tuesday."}`)
		if r.status != 202 || r.body["status"] != "runtime_tool_pending" {
			t.Fatalf("steer: %d %v", r.status, r.body)
		}
		r = d.call(t, "POST", "/v1/runs/"+id+"/cancel", tokAcme, `{"reason":"user left"}`)
		if r.status != 202 || r.body["status"] != "cancelled" {
			t.Fatalf("cancel: %d %v", r.status, r.body)
		}
		msgs := result(r.body)["messages"].([]any)
		last := msgs[len(msgs)-1].(map[string]any)
		if last["role"] != "tool_result" || last["metadata"].(map[string]any)["error_type"] != "cancelled" {
			t.Fatalf("cancel left the call open: %v", last)
		}

		// Steering drained before the next model turn.
		id = start(t, d, `{"agent":"e2e","messages":[{"role":"user","content":"plan"}],`+clientTools+`,"model":{"provider":"scripted","turns":[
			{"tool_calls":[{"id":"c1","name":"client/get_calendar","parameters":{"day":"monday"}}]},{"content":"Both days are free."}]}}`)
		v := d.waitStatus(t, id)
		d.call(t, "POST", "/v1/runs/"+id+"/messages", tokAcme, `{"content":"Also Tuesday."}`)
		d.call(t, "POST", "/v1/runs/"+id+"/tool-results", tokAcme, `{"request_id":"`+pending(v, "tool_requests", "request_id")+`","success":true,"result":"free"}`)
		v = d.waitStatus(t, id)
		roles := []string{}
		for _, m := range result(v)["messages"].([]any) {
			mm := m.(map[string]any)
			roles = append(roles, mm["role"].(string)+":"+mm["content"].(string))
		}
		want := `[user:plan tool_call: tool_result:free user:Also Tuesday. assistant:Both days are free.]`
		if fmt.Sprint(roles) != want {
			t.Fatalf("transcript %v, want %s", roles, want)
		}
	})

	t.Run("tenancy, strict JSON, idempotency", func(t *testing.T) {
		id := start(t, d, `{"agent":"e2e","messages":[{"role":"user","content":"hi"}],"model":{"provider":"scripted","turns":[{"content":"ok"}]}}`)
		if r := d.call(t, "GET", "/v1/runs/"+id, tokGlobex, ""); r.status != 404 || errCode(r) != "not_found" {
			t.Fatalf("other tenant: %d %v", r.status, r.body)
		}
		if r := d.call(t, "POST", "/v1/runs", tokAcme, `{"agent":"e2e","messages":[{"role":"user","content":"hi"}],"surprise":true}`); r.status != 400 || errCode(r) != "unknown_field" {
			t.Fatalf("unknown field: %d %v", r.status, r.body)
		}
		body := `{"agent":"e2e","messages":[{"role":"user","content":"once"}],"model":{"provider":"scripted","turns":[{"content":"ok"}]}}`
		key := "idem-" + randomSuffix()
		first := d.call(t, "POST", "/v1/runs", tokAcme, body, "Idempotency-Key", key)
		replay := d.call(t, "POST", "/v1/runs", tokAcme, body, "Idempotency-Key", key)
		if first.status != 202 || replay.status != 202 || first.body["run_id"] != replay.body["run_id"] || replay.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: %v / %v", first.body, replay.body)
		}
		if r := d.call(t, "POST", "/v1/runs", tokAcme, strings.Replace(body, "once", "twice", 1), "Idempotency-Key", key); r.status != 422 {
			t.Fatalf("reused key: %d %v", r.status, r.body)
		}
		if r := d.call(t, "GET", "/v1/runs/"+id+"/events?after=0&limit=2", tokAcme, ""); r.status != 200 || len(r.body["events"].([]any)) != 2 {
			t.Fatalf("events: %d %v", r.status, r.body)
		}
	})
}

// TestStateSurvivesRestart pauses a run, restarts baton dev on the same
// external stores, and finishes the run.
func TestStateSurvivesRestart(t *testing.T) {
	if os.Getenv("BATON_TEST_DYNAMODB_ENDPOINT") == "" || os.Getenv("BATON_E2E_BASE_URL") != "" {
		t.Skip("needs baton dev on the emulators: embedded stores do not survive a restart by design")
	}
	args := devArgs(t)
	d := startDev(t, args)
	id := start(t, d, `{"agent":"e2e","messages":[{"role":"user","content":"plan"}],`+clientTools+`,"model":{"provider":"scripted","turns":[
		{"tool_calls":[{"id":"c1","name":"client/get_calendar","parameters":{"day":"monday"}}]},{"content":"Resumed after a restart."}]}}`)
	v := d.waitStatus(t, id)
	req := pending(v, "tool_requests", "request_id")
	d.stop(t)
	d2 := startDev(t, args)
	r := d2.call(t, "POST", "/v1/runs/"+id+"/tool-results", tokAcme, `{"request_id":"`+req+`","success":true,"result":"free"}`)
	if r.status != 202 {
		t.Fatalf("submit after restart: %d %v", r.status, r.body)
	}
	v = d2.waitStatus(t, id)
	if v["status"] != "completed" || result(v)["final_content"] != "Resumed after a restart." {
		t.Fatalf("%v", v)
	}
}

// syncBuffer collects baton dev's log output; tests may read it while
// the process writes it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
