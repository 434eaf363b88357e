package events_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// truthCase is a request body of one route and whether it is valid.
type truthCase struct {
	schema, method, path string // path's {run} is a live run
	body                 string
	valid                bool
}

const startOK = `{"agent":"demo","messages":[{"role":"user","content":"x"}]`

// truthCases are bodies at the edges of each route's rules: each one the
// schema, the OpenAPI document and the handler must all accept or all
// refuse.
func truthCases() []truthCase {
	start := func(extra string, valid bool) truthCase {
		return truthCase{"start-run", "POST", "/v1/runs", startOK + extra + "}", valid}
	}
	msg := func(m string, valid bool) truthCase {
		return truthCase{"start-run", "POST", "/v1/runs", `{"agent":"demo","messages":[` + m + `]}`, valid}
	}
	post := func(schema, path, body string, valid bool) truthCase {
		return truthCase{schema, "POST", path, body, valid}
	}
	e64, e65 := strings.Repeat("é", 64), strings.Repeat("é", 65)
	return []truthCase{
		start(`,"max_turns":2`, true), start(`,"max_turns":2.0`, true), start(`,"max_turns":1e1`, true),
		start(`,"max_turns":2.5`, false), start(`,"max_turns":"2"`, false), start(`,"max_turns":0`, false), start(`,"max_turns":1001`, false),
		start(`,"context_budget":1000.0`, true), start(`,"context_budget":-1`, false), start(`,"context_budget":0.5`, false),
		start(`,"colour":"red"`, false), start(`,"session_id":"a b"`, false), start(`,"session_id":"s-1"`, true),
		start(`,"budgets":{"turns":3}`, true), start(`,"budgets":{"dollars":5}`, false), start(`,"budgets":{"turns":0}`, false),
		start(`,"callback":{"url":"ftp://x"}`, false),
		msg(`{"role":"user","content":"x"}`, true), msg(`{"role":" User ","content":"x"}`, true), msg(`{"role":"HUMAN","content":"x"}`, true),
		msg(`{"role":"wizard","content":"x"}`, false), msg(`{"role":5,"content":"x"}`, false), msg(`{"content":"x"}`, false),
		msg(`{"role":"user","content":5}`, false), msg(`{"role":"user","content":null}`, true),
		msg(`{"role":"user","content":[{"type":"text","text":"a"},"b"]}`, true), msg(`{"role":"user","content":[{"value":"a"}]}`, true),
		msg(`{"role":"user","content":[{"type":"image","text":"a"}]}`, false), msg(`{"role":"user","content":[{"type":"text"}]}`, false),
		msg(`{"role":"user","content":"x","metadata":"m"}`, false), msg(`{"role":"user","content":"x","metadata":{"k":1}}`, true),
		msg(`{"role":"user","content":"x","tool_calls":[]}`, false),
		msg(`{"role":"tool","content":"r"}`, false), msg(`{"role":"tool","content":"r","tool_call_id":"  "}`, false),
		msg(`{"role":"tool","content":"r","tool_call_id":5}`, false),
		msg(`{"role":"tool","content":"r","tool_call_id":"c1"}`, true), msg(`{"role":"function","content":"r","metadata":{"tool_call_id":"c1"}}`, true),
		msg(`{"role":"tool","content":"r","tool_call_id":"c1","metadata":{"tool_call_id":""}}`, false),
		msg(`{"role":"tool_call","content":"","tool_call_id":"c1"}`, false),
		msg(`{"role":"tool_call","content":"","tool_call_id":"c1","name":"client/x"}`, true),
		msg(`{"role":"tool_use","content":"","metadata":{"tool_call_id":"c1","tool_name":"client/x"}}`, true),
		msg(`{"role":"tool_call","content":"","tool_call_id":"c1","tool_name":" ","name":"client/x"}`, false),
		msg(`{"role":"user","content":"x"},{"role":"tool_result","content":"r"}`, false),

		post("steer", "/v1/runs/{run}/messages", `{"content":"go on"}`, true),
		post("steer", "/v1/runs/{run}/messages", `{"content":"  go on  "}`, true),
		post("steer", "/v1/runs/{run}/messages", `{"content":""}`, false),
		post("steer", "/v1/runs/{run}/messages", `{"content":"   "}`, false),
		post("steer", "/v1/runs/{run}/messages", `{"content":"\n\t"}`, false),
		post("steer", "/v1/runs/{run}/messages", `{"content":5}`, false),
		post("steer", "/v1/runs/{run}/messages", `{}`, false),
		post("steer", "/v1/runs/{run}/messages", `{"content":"x","extra":1}`, false),

		post("tool-result", "/v1/runs/{run}/tool-results", `{"request_id":"treq_1","success":true,"result":{"a":1}}`, true),
		post("tool-result", "/v1/runs/{run}/tool-results", `{"request_id":"treq_1","success":false,"error":"boom"}`, true),
		post("tool-result", "/v1/runs/{run}/tool-results", `{"request_id":"treq_1","success":true,"error":""}`, true),
		post("tool-result", "/v1/runs/{run}/tool-results", `{"request_id":"treq_1","success":false,"result":null}`, true),
		post("tool-result", "/v1/runs/{run}/tool-results", `{"request_id":"treq_1","success":true,"error":"boom"}`, false),
		post("tool-result", "/v1/runs/{run}/tool-results", `{"request_id":"treq_1","success":false,"result":{"a":1}}`, false),
		post("tool-result", "/v1/runs/{run}/tool-results", `{"request_id":"treq_1"}`, false),
		post("tool-result", "/v1/runs/{run}/tool-results", `{"request_id":"","success":true}`, false),
		post("tool-result", "/v1/runs/{run}/tool-results", `{"request_id":"treq_1","success":"yes"}`, false),

		post("approval", "/v1/runs/{run}/approvals/act_1", `{"decision":"accept"}`, true),
		post("approval", "/v1/runs/{run}/approvals/act_1", `{"decision":"reject","reason":"no"}`, true),
		post("approval", "/v1/runs/{run}/approvals/act_1", `{"decision":"maybe"}`, false),
		post("approval", "/v1/runs/{run}/approvals/act_1", `{}`, false),

		post("interrupt", "/v1/runs/{run}/interrupt", `{"action":"`+e64+`"}`, true),
		post("interrupt", "/v1/runs/{run}/interrupt", `{"action":"`+e65+`"}`, false),
		post("interrupt", "/v1/runs/{run}/interrupt", `{"action":"a\nb"}`, false),
		post("interrupt", "/v1/runs/{run}/interrupt", `{"metadata":[]}`, false),

		post("cancel", "/v1/runs/{run}/cancel", `{"reason":"enough"}`, true),
		post("cancel", "/v1/runs/{run}/cancel", `{"reason":5}`, false),
	}
}

// TestOneSchemaTruth: for every case, the route's JSON Schema, the
// OpenAPI document and the handler agree on whether the body is valid
// (the handler answers 400 exactly to the invalid ones).
func TestOneSchemaTruth(t *testing.T) {
	api, _ := newAPI(t)
	doc := checker(t)
	call := func(method, path, body string) events.APIGatewayProxyResponse {
		resp, _ := api.Handle(context.Background(), events.APIGatewayProxyRequest{HTTPMethod: method, Path: path, Body: body,
			Headers: map[string]string{"Authorization": "Bearer sample-token-0000001"}})
		return resp
	}
	for _, tc := range truthCases() {
		path := tc.path
		if strings.Contains(path, "{run}") {
			resp := call("POST", "/v1/runs", startOK+"}")
			var v map[string]any
			_ = json.Unmarshal([]byte(resp.Body), &v)
			id, _ := v["run_id"].(string)
			if id == "" {
				t.Fatalf("start: %d %s", resp.StatusCode, resp.Body)
			}
			path = strings.Replace(path, "{run}", id, 1)
		}
		err := schema(t, tc.schema).Validate(decode(t, []byte(tc.body)))
		if (err == nil) != tc.valid {
			t.Errorf("%s %s: the %s schema says valid=%v, want %v (%v)", tc.method, tc.body, tc.schema, err == nil, tc.valid, err)
		}
		req, _ := http.NewRequest(tc.method, "http://baton.test"+path, strings.NewReader(tc.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer sample-token-0000001")
		if err := doc.Request(req, []byte(tc.body)); (err == nil) != tc.valid {
			t.Errorf("%s %s: the OpenAPI document says valid=%v, want %v (%v)", tc.method, tc.body, err == nil, tc.valid, err)
		}
		resp := call(tc.method, path, tc.body)
		if (resp.StatusCode != http.StatusBadRequest) != tc.valid {
			t.Errorf("%s %s: the handler answers %d %s, want valid=%v", tc.method, tc.body, resp.StatusCode, resp.Body, tc.valid)
		}
	}
}
