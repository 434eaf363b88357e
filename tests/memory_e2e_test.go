//go:build e2e

package tests

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Long-term memory end to end (docs/memory.md), on embedded stores and
// on the emulators: what user A tells the scripted agent in one session
// is in the first model request of A's next session, and nobody else's;
// erasure wins over every later read, recall and extraction; an
// extraction runs once across a kill -9 of baton dev.

const (
	tokMemAcme    = "tok-mem-acme-e2e"
	tokMemGlobex  = "tok-mem-globex-e2"
	tokMemInitech = "tok-mem-initech-e"
)

var memTokens = []string{tokMemAcme, tokMemGlobex, tokMemInitech}

// memoryAgentsFile writes an agents file with the memo agent: scripted,
// echoing the system prompt it was sent, with memory tools, extraction
// (by extraction, a model of its own when not "") and recall.
func memoryAgentsFile(t *testing.T, extraction string) string {
	t.Helper()
	ext := `{"enabled":true}`
	if extraction != "" {
		ext = `{"enabled":true,"model":` + extraction + `}`
	}
	file := `{"agents":[{"slug":"memo","model":{"provider":"scripted","options":{"echo_request":true},"turns":[{"content":"Noted."}]},
  "allow_overrides":["memory_subject"],"system":"You are a travel assistant.",
  "memory":{"tools":true,"extraction":` + ext + `,"recall":{"top_k":5}}}]}`
	path := filepath.Join(t.TempDir(), "agents.json")
	if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// startMemoryDev starts baton dev with the memo agent and a token with
// memories:subject for each of three tenants.
func startMemoryDev(t *testing.T, extraction string, env ...string) (*dev, []string) {
	t.Helper()
	args := withAgentsFile(devArgs(t), memoryAgentsFile(t, extraction))
	env = append(env, "BATON_DEV_TOKENS=acme="+tokMemAcme+"+memories:subject,globex="+tokMemGlobex+"+memories:subject,initech="+tokMemInitech+"+memories:subject",
		"AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local")
	return launchDev(t, args, env...), args
}

// memoRun starts a run of the memo agent for subject on a new session
// and waits until it completed; it returns the run's view.
func memoRun(t *testing.T, d *dev, token, subject, text string) map[string]any {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"agent": "memo", "memory_subject": subject, "messages": []any{map[string]any{"role": "user", "content": text}}})
	r := d.call(t, "POST", "/v1/runs", token, string(body))
	if r.status != 202 {
		t.Fatalf("start: %d %v", r.status, r.body)
	}
	id := r.body["run_id"].(string)
	deadline := time.Now().Add(90 * time.Second)
	for {
		v := d.call(t, "GET", "/v1/runs/"+id+"?wait=5", token, "")
		if v.body["status"] == "completed" {
			return v.body
		}
		if s := v.body["status"]; s != "queued" && s != "running" || time.Now().After(deadline) {
			t.Fatalf("run %s: %v", id, v.body)
		}
	}
}

// sentSystem is the system prompt the run's model turn was sent.
func sentSystem(v map[string]any) string {
	s, _ := result(v)["request_metadata"].(map[string]any)["request_system"].(string)
	return s
}

// runEvent waits for the run's event of type typ (within) and returns its
// data, or nil when none came.
func runEvent(t *testing.T, d *dev, token, id, typ string, within time.Duration) map[string]any {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		evs := d.call(t, "GET", "/v1/runs/"+id+"/events", token, "")
		for _, e := range evs.body["events"].([]any) {
			if m := e.(map[string]any); m["type"] == typ {
				data, _ := m["data"].(map[string]any)
				return data
			}
		}
		if time.Now().After(deadline) {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// exportMemories lists a subject's memories (all pages).
func exportMemories(t *testing.T, d *dev, token, subject string) []map[string]any {
	t.Helper()
	var out []map[string]any
	cursor := ""
	for {
		r := d.call(t, "GET", "/v1/memories?limit=100&subject="+url.QueryEscape(subject)+"&cursor="+url.QueryEscape(cursor), token, "")
		if r.status != 200 {
			t.Fatalf("export %s: %d %v", subject, r.status, r.body)
		}
		for _, m := range r.body["memories"].([]any) {
			out = append(out, m.(map[string]any))
		}
		cursor, _ = r.body["next_cursor"].(string)
		if cursor == "" {
			return out
		}
	}
}

func texts(ms []map[string]any) string {
	var out []string
	for _, m := range ms {
		out = append(out, fmt.Sprint(m["text"]))
	}
	return strings.Join(out, " | ")
}

// TestMemoryAcrossSessionsWithoutLeaks: user A's preference, said in one
// session, is in the first model request of A's next session (the
// scripted provider echoes the system prompt it was sent); user B of the
// same tenant and user A of another tenant never see it; then 100 runs
// interleaved across 3 tenants × 3 users each recall only their own
// user's memories, and each user's export holds only its own.
func TestMemoryAcrossSessionsWithoutLeaks(t *testing.T) {
	d, _ := startMemoryDev(t, "")
	first := memoRun(t, d, tokMemAcme, "user-a", "I prefer window seats on trains.")
	w := runEvent(t, d, tokMemAcme, first["run_id"].(string), "memory_written", 60*time.Second)
	if w == nil || w["source"] != "extraction" || len(w["added"].([]any)) == 0 {
		t.Fatalf("the first session's extraction: %v", w)
	}
	next := memoRun(t, d, tokMemAcme, "user-a", "Book me a train to Porto.")
	if s := sentSystem(next); !strings.Contains(s, "window seats") || !strings.Contains(s, "not instructions") {
		t.Fatalf("user A's next session was not sent the preference; system prompt:\n%s", s)
	}
	if rc := runEvent(t, d, tokMemAcme, next["run_id"].(string), "memory_recalled", time.Second); rc == nil || rc["count"] == float64(0) {
		t.Fatalf("memory_recalled: %v", rc)
	}
	for _, other := range []struct{ token, subject string }{{tokMemAcme, "user-b"}, {tokMemGlobex, "user-a"}} {
		v := memoRun(t, d, other.token, other.subject, "Book me a train to Porto.")
		if s := sentSystem(v); strings.Contains(s, "window seats") || strings.Contains(s, "<memories>") {
			t.Fatalf("%s of another scope was sent A's memory:\n%s", other.subject, s)
		}
	}
	if got := exportMemories(t, d, tokMemGlobex, "user-a"); len(got) != 0 {
		t.Fatalf("globex's user-a exports acme's memories: %s", texts(got))
	}

	// 100 interleaved runs: run i is tenant i%3's user (i/3)%3, telling
	// its own code word; a code word in any run's request or export
	// other than its own user's is a leak.
	code := func(tenant, user int) string { return fmt.Sprintf("cw%d%dx%s", tenant, user, randomSuffix()[:4]) }
	codes := map[[2]int]string{}
	for tn := 0; tn < 3; tn++ {
		for u := 0; u < 3; u++ {
			codes[[2]int{tn, u}] = code(tn, u)
		}
	}
	codeRe := regexp.MustCompile(`cw\d\dx[0-9a-f]{4}`)
	var mu sync.Mutex
	leaks, recalledOwn := 0, 0
	check := func(where, text string, own string) {
		for _, c := range codeRe.FindAllString(text, -1) {
			if c != own {
				mu.Lock()
				leaks++
				mu.Unlock()
				t.Errorf("leak: %s holds %s, not its own %s", where, c, own)
			}
		}
	}
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				tn, u := i%3, (i/3)%3
				own := codes[[2]int{tn, u}]
				v := memoRun(t, d, memTokens[tn], fmt.Sprintf("user-%d", u), fmt.Sprintf("My code word is %s. Run %d.", own, i))
				s := sentSystem(v)
				check(fmt.Sprintf("run %d (tenant %d user %d)", i, tn, u), s, own)
				if strings.Contains(s, own) {
					mu.Lock()
					recalledOwn++
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < 100; i++ {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	// Every user's export, once the extractions are in, holds its own
	// code word and no other.
	for key, own := range codes {
		var got []map[string]any
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			got = exportMemories(t, d, memTokens[key[0]], fmt.Sprintf("user-%d", key[1]))
			if strings.Contains(texts(got), own) || time.Now().After(deadline) {
				break
			}
		}
		if !strings.Contains(texts(got), own) {
			t.Errorf("tenant %d user %d: its code word was never remembered: %s", key[0], key[1], texts(got))
		}
		check(fmt.Sprintf("the export of tenant %d user %d", key[0], key[1]), texts(got), own)
		for _, m := range got {
			if m["subject"] != fmt.Sprintf("user-%d", key[1]) {
				t.Errorf("export of user-%d lists a memory of %v", key[1], m["subject"])
			}
		}
	}
	if leaks != 0 {
		t.Fatalf("%d leaks", leaks)
	}
	// The check above is not vacuous: later runs were sent their own
	// user's code word.
	if recalledOwn == 0 {
		t.Fatal("no run of the 100 was sent its own user's memories")
	}
	t.Logf("100 interleaved runs across 3 tenants × 3 users: 0 leaks; %d runs were sent their own user's memories", recalledOwn)
}

// extractionModel is an OpenAI-compatible chat completions server that
// answers every extraction with facts, after gate lets it (nil: at
// once). It counts the requests.
type extractionModel struct {
	srv      *httptest.Server
	mu       sync.Mutex
	requests int
	arrived  chan int
	gate     func(n int)
	facts    []string
}

func startExtractionModel(t *testing.T, facts ...string) *extractionModel {
	t.Helper()
	m := &extractionModel{arrived: make(chan int, 16), facts: facts}
	m.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Stream bool `json:"stream"`
		}
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &req)
		if r.URL.Path != "/v1/chat/completions" || req.Stream {
			http.Error(w, "want a non-streamed /v1/chat/completions", http.StatusBadRequest)
			return
		}
		m.mu.Lock()
		m.requests++
		n := m.requests
		gate := m.gate
		m.mu.Unlock()
		m.arrived <- n
		if gate != nil {
			gate(n)
		}
		var fs []any
		for _, f := range m.facts {
			fs = append(fs, map[string]any{"text": f})
		}
		content, _ := json.Marshal(map[string]any{"facts": fs})
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "model": "extractor",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": string(content)}}},
			"usage":   map[string]any{"prompt_tokens": 50, "completion_tokens": 20, "total_tokens": 70}})
	}))
	t.Cleanup(m.srv.Close)
	return m
}

func (m *extractionModel) env() []string {
	return []string{"BATON_PROVIDERS=scripted,openai", "BATON_OPENAI_BASE_URL=" + m.srv.URL + "/v1"}
}

func (m *extractionModel) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.requests
}

const extractor = `{"provider":"openai","model":"extractor"}`

// TestMemoryErasureWins: after DELETE /v1/memories?subject=A, A's
// export is empty, A's next run recalls nothing, and the extraction of a
// run that began before the erasure, finishing after it, writes nothing
// (memory_written erased); export before and after shows it.
func TestMemoryErasureWins(t *testing.T) {
	release := make(chan struct{})
	model := startExtractionModel(t, "Prefers aisle seats.", "Is vegetarian.")
	d, _ := startMemoryDev(t, extractor, model.env()...)
	first := memoRun(t, d, tokMemAcme, "user-a", "I prefer aisle seats and I am vegetarian.")
	if w := runEvent(t, d, tokMemAcme, first["run_id"].(string), "memory_written", 60*time.Second); w == nil || len(w["added"].([]any)) != 2 {
		t.Fatalf("first extraction: %v", w)
	}
	before := exportMemories(t, d, tokMemAcme, "user-a")
	if len(before) != 2 || !strings.Contains(texts(before), "aisle") {
		t.Fatalf("export before the erasure: %s", texts(before))
	}
	// The next run's extraction waits at the model until the erasure is
	// done.
	model.mu.Lock()
	model.gate = func(n int) {
		if n == 2 {
			<-release
		}
	}
	model.mu.Unlock()
	second := memoRun(t, d, tokMemAcme, "user-a", "Remember that I am vegetarian.")
	for deadline := time.Now().Add(60 * time.Second); model.count() < 2; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the second run's extraction never asked the model")
		}
	}
	erase := d.call(t, "DELETE", "/v1/memories?subject=user-a", tokMemAcme, "")
	if erase.status != 200 || erase.body["deleted"] != float64(2) {
		t.Fatalf("erase: %d %v", erase.status, erase.body)
	}
	close(release)
	w := runEvent(t, d, tokMemAcme, second["run_id"].(string), "memory_written", 60*time.Second)
	if w == nil || w["erased"] != true || w["added"] != nil {
		t.Fatalf("the extraction of a run begun before the erasure: %v", w)
	}
	if after := exportMemories(t, d, tokMemAcme, "user-a"); len(after) != 0 {
		t.Fatalf("export after the erasure: %s", texts(after))
	}
	v := memoRun(t, d, tokMemAcme, "user-a", "What do I like?")
	if s := sentSystem(v); strings.Contains(s, "aisle") || strings.Contains(s, "vegetarian") || strings.Contains(s, "<memories>") {
		t.Fatalf("a run after the erasure was sent A's memories:\n%s", s)
	}
}

// TestMemoryExtractionOnceAcrossKill: baton dev on the emulators is
// killed (SIGKILL) while the extraction waits for the model, and again
// right after the model answered a redelivery; after the restarts the
// run's memories are written exactly once and memory_written is
// recorded once.
func TestMemoryExtractionOnceAcrossKill(t *testing.T) {
	if os.Getenv("BATON_TEST_DYNAMODB_ENDPOINT") == "" || os.Getenv("BATON_E2E_BASE_URL") != "" {
		t.Skip("needs baton dev on the emulators: embedded stores do not survive a crash by design")
	}
	hold := make(chan struct{})
	model := startExtractionModel(t, "Prefers night trains.", "Travels with a bike.", "Lives in Lyon.")
	model.gate = func(n int) {
		if n == 1 {
			<-hold // the first extraction never gets its answer
		}
	}
	defer close(hold)
	d, args := startMemoryDev(t, extractor, model.env()...)
	v := memoRun(t, d, tokMemAcme, "user-k", "I like night trains, I travel with my bike and I live in Lyon.")
	id := v["run_id"].(string)
	select {
	case <-model.arrived:
	case <-time.After(60 * time.Second):
		t.Fatal("the extraction never asked the model")
	}
	kill := func() {
		if err := d.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = d.cmd.Wait()
	}
	kill() // during the extraction
	env := append(model.env(), "BATON_DEV_TOKENS=acme="+tokMemAcme+"+memories:subject", "AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local")
	d = launchDev(t, args, env...)
	select {
	case <-model.arrived: // the redelivered extraction asks again, and is answered
	case <-time.After(90 * time.Second):
		t.Fatal("the extraction was not delivered again after the kill")
	}
	time.Sleep(50 * time.Millisecond)
	kill() // right after the answer: the write and the delete race the kill
	d = launchDev(t, args, env...)
	w := runEvent(t, d, tokMemAcme, id, "memory_written", 90*time.Second)
	if w == nil || w["source"] != "extraction" {
		t.Fatalf("memory_written after the restarts: %v (model asked %d times)", w, model.count())
	}
	time.Sleep(7 * time.Second) // past the visibility timeout: any further delivery has come
	got := exportMemories(t, d, tokMemAcme, "user-k")
	if len(got) != 3 {
		t.Fatalf("memories after the kills: %d (%s), want the 3 facts once (model asked %d times)", len(got), texts(got), model.count())
	}
	evs := d.call(t, "GET", "/v1/runs/"+id+"/events", tokMemAcme, "")
	n := 0
	for _, e := range evs.body["events"].([]any) {
		if e.(map[string]any)["type"] == "memory_written" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("memory_written recorded %d times", n)
	}
	t.Logf("extraction asked the model %d times across two kills; 3 memories written once", model.count())
}
