package events_test

import (
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	batonevents "github.com/baton-agents/baton/events"
	"github.com/baton-agents/baton/internal/httpapi"
	"github.com/baton-agents/baton/internal/openapitest"
)

var update = flag.Bool("update", false, "rewrite openapi.json's component schemas from schemas/")

// componentFiles are the document's component schemas kept equal to the
// files of schemas/ (without their $schema).
var componentFiles = map[string]string{
	"StartRun": "start-run", "Steer": "steer", "ToolResult": "tool-result", "Approval": "approval", "Cancel": "cancel",
	"Interrupt": "interrupt", "Error": "error", "RunView": "run-view", "LifecycleEvent": "stream-event", "ForkRun": "fork", "EvalRun": "eval-run", "EvalCase": "eval-case",
}

// pathParam is a path parameter of the document ({run_id}); a route
// writes each as {}.
var pathParam = regexp.MustCompile(`\{[a-z_]+\}`)

func checker(t *testing.T) *openapitest.Checker {
	t.Helper()
	c, err := openapitest.New(batonevents.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestOpenAPIDocument: the document is valid OpenAPI 3.1; its component
// schemas are the JSON Schemas of schemas/ (go test -update rewrites
// them); it has an operation for every route of the handler and none
// other; the API serves it, without a credential, at /v1/openapi.json.
func TestOpenAPIDocument(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(batonevents.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	comps := doc["components"].(map[string]any)["schemas"].(map[string]any)
	stale := false
	for name, file := range componentFiles {
		b, err := os.ReadFile(filepath.Join("schemas", file+".schema.json"))
		if err != nil {
			t.Fatal(err)
		}
		var want map[string]any
		_ = json.Unmarshal(b, &want)
		delete(want, "$schema")
		if !reflect.DeepEqual(comps[name], want) {
			stale = true
			comps[name] = want
			if !*update {
				t.Errorf("components.schemas.%s differs from schemas/%s.schema.json (go test ./events -run TestOpenAPIDocument -update)", name, file)
			}
		}
	}
	if stale && *update {
		b, _ := json.MarshalIndent(doc, "", "  ")
		if err := os.WriteFile("openapi.json", append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := checker(t)
	var documented []string
	for _, op := range c.Operations() {
		method, path, _ := strings.Cut(op, " ")
		documented = append(documented, method+" "+pathParam.ReplaceAllString(path, "{}"))
	}
	routes := httpapi.Routes()
	slices.Sort(documented)
	slices.Sort(routes)
	if !slices.Equal(documented, routes) {
		t.Fatalf("the document's operations %v, the handler's routes %v", documented, routes)
	}
	api, _ := newAPI(t)
	resp, _ := api.Handle(context.Background(), events.APIGatewayProxyRequest{HTTPMethod: "GET", Path: "/v1/openapi.json"})
	if resp.StatusCode != http.StatusOK || resp.Body != string(batonevents.OpenAPI) || resp.Headers["Content-Type"] != "application/json" {
		t.Fatalf("GET /v1/openapi.json: %d %v %.100s", resp.StatusCode, resp.Headers, resp.Body)
	}
}

// TestOpenAPICatchesDrift: the checker the e2e suite runs flags an answer
// with an undocumented status, an undocumented field and a request the
// document refuses that was accepted; a documented exchange passes.
func TestOpenAPICatchesDrift(t *testing.T) {
	api, _ := newAPI(t)
	resp, _ := api.Handle(context.Background(), events.APIGatewayProxyRequest{HTTPMethod: "POST", Path: "/v1/runs", Body: startOK + "}",
		Headers: map[string]string{"Authorization": "Bearer sample-token-0000001"}})
	if resp.StatusCode != 202 {
		t.Fatalf("start: %d", resp.StatusCode)
	}
	exchange := func(c *openapitest.Checker, method, path, reqBody string, status int, body string) []string {
		req, _ := http.NewRequest(method, "http://127.0.0.1:8080"+path, strings.NewReader(reqBody))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer sample-token-0000001")
		r := &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}}, Request: req}
		c.Exchange(req, []byte(reqBody), r, []byte(body))
		return c.Problems()
	}
	if p := exchange(checker(t), "POST", "/v1/runs", startOK+"}", 202, resp.Body); len(p) > 0 {
		t.Fatalf("a documented exchange: %v", p)
	}
	var view map[string]any
	_ = json.Unmarshal([]byte(resp.Body), &view)
	view["surprise"] = true
	extra, _ := json.Marshal(view)
	for name, tc := range map[string]struct {
		method, path, req string
		status            int
		body              string
	}{
		"undocumented status":    {"POST", "/v1/runs", startOK + "}", 418, `{"error":{"code":"teapot","message":"no"}}`},
		"undocumented field":     {"POST", "/v1/runs", startOK + "}", 202, string(extra)},
		"refused request, 2xx":   {"POST", "/v1/runs", `{"agent":"demo","messages":[]}`, 202, resp.Body},
		"error of another shape": {"GET", "/v1/runs/r-1", "", 404, `{"message":"no"}`},
	} {
		if p := exchange(checker(t), tc.method, tc.path, tc.req, tc.status, tc.body); len(p) == 0 {
			t.Errorf("%s: not flagged", name)
		}
	}
}
