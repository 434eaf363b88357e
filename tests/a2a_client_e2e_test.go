//go:build e2e

package tests

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// remoteA2A is tests/a2a/remote-agent.mjs running: two remote agents
// served by the official A2A JavaScript SDK (slow, ask) at base.
type remoteA2A struct {
	base string
	cmd  *exec.Cmd
}

// startRemoteA2A starts the remote agents, the slow one working workMs
// before it answers; they are stopped when the test ends.
func startRemoteA2A(t *testing.T, workMs int) *remoteA2A {
	t.Helper()
	node := nodeWith(t, "a2a", "@a2a-js/sdk")
	cmd := exec.Command(node, "a2a/remote-agent.mjs")
	cmd.Env = append(os.Environ(), fmt.Sprintf("WORK_MS=%d", workMs))
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	var hello struct {
		URL string `json:"url"`
	}
	if err != nil || json.Unmarshal([]byte(line), &hello) != nil || hello.URL == "" {
		t.Fatalf("remote-agent.mjs did not print its URL: %q %v", line, err)
	}
	return &remoteA2A{base: hello.URL, cmd: cmd}
}

// card is the agent card URL of one of the remote agents.
func (r *remoteA2A) card(agent string) string {
	return r.base + "/" + agent + "/.well-known/agent-card.json"
}

// counts are the SendMessage requests the remote agents received by
// messageId, and the executions they started.
func (r *remoteA2A) counts(t *testing.T) (received, executed map[string]int) {
	t.Helper()
	c := r.allCounts(t)
	return c.Received, c.Executed
}

// a2aCounts are what tests/a2a/remote-agent.mjs counted.
type a2aCounts struct {
	Received  map[string]int `json:"received"`
	Executed  map[string]int `json:"executed"`
	Cancelled map[string]int `json:"cancelled"`
}

func (r *remoteA2A) allCounts(t *testing.T) a2aCounts {
	t.Helper()
	res, err := http.Get(r.base + "/counts")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var c a2aCounts
	if err := json.NewDecoder(res.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	return c
}

// a2aAgentsFile declares a caller agent whose tools are the two remote
// agents, each followed for at most timeout within a step.
func a2aAgentsFile(t *testing.T, r *remoteA2A, timeout string) string {
	t.Helper()
	return writeAgentsFile(t, map[string]any{"agents": []any{
		map[string]any{"slug": "caller", "model": map[string]any{"provider": "scripted"}, "allow_overrides": []any{"model"},
			"tools": []any{
				map[string]any{"name": "a2a/researcher", "description": "Research a topic (a remote agent).",
					"executor": map[string]any{"type": "a2a", "card_url": r.card("slow"), "timeout": timeout}},
				map[string]any{"name": "a2a/weather", "description": "Tell the weather (a remote agent; it asks for the city).",
					"executor": map[string]any{"type": "a2a", "card_url": r.card("ask"), "timeout": timeout}},
			}},
	}})
}

// callRemote starts a run of the caller whose model calls tool with
// message, then says "Done.".
func callRemote(t *testing.T, d *dev, tool, message string) string {
	t.Helper()
	return start(t, d, `{"agent":"caller","messages":[{"role":"user","content":"Go."}],
		"model":{"provider":"scripted","turns":[{"tool_calls":[{"id":"c1","name":"`+tool+`","parameters":{"message":"`+message+`"}}]},{"content":"Done."}]}}`)
}

// waitRun long-polls until the run's status is one of want (or the
// deadline passes) and returns its view.
func waitRun(t *testing.T, d *dev, id string, within time.Duration, want ...string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(within)
	var v map[string]any
	for {
		v = d.call(t, "GET", "/v1/runs/"+id+"?wait=2", tokAcme, "").body
		for _, w := range want {
			if v["status"] == w {
				return v
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s is %v, want %v: %v", id, v["status"], want, v)
		}
	}
}

// toolResultOf is the result of the run's one tool call.
func toolResultOf(t *testing.T, v map[string]any) map[string]any {
	t.Helper()
	rs, _ := result(v)["tool_execution_results"].([]any)
	if len(rs) != 1 {
		t.Fatalf("want one tool result, got %v", result(v)["tool_execution_results"])
	}
	return rs[0].(map[string]any)["result"].(map[string]any)
}

// TestA2AClientEndToEnd: an agent of baton dev calls two remote A2A
// agents served by the official JavaScript SDK. The researcher works
// ~3 s, longer than a step follows it (1 s): the call waits for the
// task without a step (the sweeper follows it) and completes with its
// artifact. The weather agent asks for a city: the run pauses with a
// client-tool request carrying the question; the answer is sent to the
// remote task and the call completes with its reply. Every message
// reaches its agent once. Runs on the embedded stores, and on the
// emulators when they are configured.
func TestA2AClientEndToEnd(t *testing.T) {
	r := startRemoteA2A(t, 3000)
	d := startDev(t, withAgentsFile(devArgs(t), a2aAgentsFile(t, r, "1s")))

	slow := callRemote(t, d, "a2a/researcher", "alpha")
	v := waitRun(t, d, slow, 60*time.Second, "completed", "failed")
	if res := toolResultOf(t, v); res["success"] != true || res["result"] != "Researched: alpha" {
		t.Fatalf("researcher result: %v", res)
	}
	if result(v)["final_content"] != "Done." {
		t.Fatalf("final content: %v", result(v)["final_content"])
	}

	ask := callRemote(t, d, "a2a/weather", "What is the weather?")
	v = waitRun(t, d, ask, 60*time.Second, "runtime_tool_pending", "failed", "completed")
	reqs := v["pending"].(map[string]any)["tool_requests"].([]any)
	if v["status"] != "runtime_tool_pending" || len(reqs) != 1 {
		t.Fatalf("weather run: %v", v)
	}
	req := reqs[0].(map[string]any)
	params := req["parameters"].(map[string]any)
	if req["tool_name"] != "a2a/weather" || params["question"] != "Which city?" || params["task_id"] == "" || params["task_id"] == nil ||
		!strings.Contains(fmt.Sprint(params["data"]), "Paris") {
		t.Fatalf("pending request: %v", req)
	}
	if res := d.call(t, "POST", "/v1/runs/"+ask+"/tool-results", tokAcme, `{"request_id":"`+req["request_id"].(string)+`","success":true,"result":"Paris"}`); res.status != 202 && res.status != 200 {
		t.Fatalf("tool result: %d %v", res.status, res.body)
	}
	v = waitRun(t, d, ask, 60*time.Second, "completed", "failed")
	if res := toolResultOf(t, v); res["success"] != true || res["result"] != "Sunny in Paris" {
		t.Fatalf("weather result: %v", res)
	}

	received, executed := r.counts(t)
	if len(received) != 3 || len(executed) != 3 {
		t.Fatalf("the agents received %v and executed %v, want three messages (the researcher's, the weather's and the answer)", received, executed)
	}
	for id, n := range received {
		if n != 1 || executed[id] != 1 {
			t.Fatalf("message %s received %d times, executed %d times, want once: %v %v", id, n, executed[id], received, executed)
		}
	}
	if received[slow+":c1"] != 1 || received[ask+":c1"] != 1 {
		t.Fatalf("the calls' messages are not keyed <run_id>:<tool_call_id>: %v", received)
	}
}

// TestA2AClientSurvivesCrash: baton dev (on the emulators) is killed
// (SIGKILL) while its step follows the remote task; after a restart the
// call follows the task it recorded, the remote agent received the
// message exactly once, and the run completes.
func TestA2AClientSurvivesCrash(t *testing.T) {
	if os.Getenv("BATON_TEST_DYNAMODB_ENDPOINT") == "" || os.Getenv("BATON_E2E_BASE_URL") != "" {
		t.Skip("needs baton dev on the emulators: embedded stores do not survive a crash by design")
	}
	r := startRemoteA2A(t, 4000)
	args := withAgentsFile(devArgs(t), a2aAgentsFile(t, r, "20s"))
	d := startDev(t, args)
	id := callRemote(t, d, "a2a/researcher", "beta")
	deadline := time.Now().Add(30 * time.Second)
	for {
		if received, _ := r.counts(t); received[id+":c1"] > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the remote agent never received the call's message")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The agent answers the send at once (returnImmediately) and the
	// step records the task then, milliseconds later; a kill before that
	// would leave the call in doubt (never sent again: the rule for any
	// tool not retry_safe). A second later the step is following the
	// task, which works 4 s.
	time.Sleep(time.Second)
	if err := d.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = d.cmd.Wait()
	d = startDev(t, args)
	v := waitRun(t, d, id, 3*time.Minute, "completed", "failed")
	if res := toolResultOf(t, v); res["success"] != true || res["result"] != "Researched: beta" {
		t.Fatalf("result after the crash: %v", res)
	}
	if received, executed := r.counts(t); received[id+":c1"] != 1 || executed[id+":c1"] != 1 || len(received) != 1 {
		t.Fatalf("the remote agent received %v (executed %v), want the call's message exactly once", received, executed)
	}
}

// TestA2AClientCancelsTheRemoteTask: a run cancelled while its call waits
// for a remote task (the slow agent works 30 s) has the remote agent
// cancel the task, once; the task's own end never reaches the run.
func TestA2AClientCancelsTheRemoteTask(t *testing.T) {
	r := startRemoteA2A(t, 30000)
	d := startDev(t, withAgentsFile(devArgs(t), a2aAgentsFile(t, r, "1s")))
	id := callRemote(t, d, "a2a/researcher", "gamma")
	deadline := time.Now().Add(30 * time.Second)
	for {
		if received, _ := r.counts(t); received[id+":c1"] == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the call's message never reached the remote agent")
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(1500 * time.Millisecond) // past the step's 1 s: the call waits for the task
	if res := d.call(t, "POST", "/v1/runs/"+id+"/cancel", tokAcme, `{"reason":"not needed any more"}`); res.status != 200 && res.status != 202 {
		t.Fatalf("cancel: %d %v", res.status, res.body)
	}
	if v := waitRun(t, d, id, 30*time.Second, "cancelled"); v["status"] != "cancelled" {
		t.Fatalf("run: %v", v)
	}
	var c a2aCounts
	for deadline = time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if c = r.allCounts(t); len(c.Cancelled) > 0 {
			break
		}
	}
	time.Sleep(500 * time.Millisecond)
	c = r.allCounts(t)
	if len(c.Cancelled) != 1 || c.Received[id+":c1"] != 1 {
		t.Fatalf("the remote agent cancelled %v and received %v, want the call's one task cancelled once", c.Cancelled, c.Received)
	}
	for task, n := range c.Cancelled {
		if n != 1 {
			t.Fatalf("task %s cancelled %d times, want once", task, n)
		}
	}
}
