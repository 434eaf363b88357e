package a2aserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/baton-agents/baton/internal/a2aserver"
)

// TestResponse: a Response's status is the first one written, 200 when
// the body comes first; the body goes to its writer.
func TestResponse(t *testing.T) {
	var buf bytes.Buffer
	flushed := 0
	r := a2aserver.NewResponse(&buf, func() { flushed++ })
	r.Header().Set("Content-Type", "text/event-stream")
	r.WriteHeader(http.StatusAccepted)
	r.WriteHeader(http.StatusInternalServerError)
	_, _ = r.Write([]byte("data"))
	r.Flush()
	if r.Status != http.StatusAccepted || buf.String() != "data" || flushed != 1 || r.Headers()["Content-Type"] != "text/event-stream" {
		t.Fatalf("status %d, body %q, %d flushes, headers %v", r.Status, buf.String(), flushed, r.Headers())
	}
	r.Header()["X-Empty"] = []string{} // a header without a value is left out
	if _, ok := r.Headers()["X-Empty"]; ok {
		t.Fatalf("headers %v", r.Headers())
	}
	r = a2aserver.NewResponse(&buf, func() {})
	_, _ = r.Write([]byte("x"))
	r.WriteHeader(http.StatusNotFound)
	if r.Status != http.StatusOK {
		t.Fatalf("status %d after a body, want 200", r.Status)
	}
}

// TestServeEdges: an empty or blank body is a parse error (-32700), not a
// batch; the id of a 0.3 call is echoed up to 256 bytes, null past it; an
// unknown task id of 64 bytes is quoted whole, of 65 cut short; GetTask
// with historyLength 0 answers with no history.
func TestServeEdges(t *testing.T) {
	_, srv := server(t)
	post := func(body string) map[string]any {
		t.Helper()
		out := map[string]any{}
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/demo", strings.NewReader(body))
		req.Header.Set("X-Tenant", "acme")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%.80s: %v", body, err)
		}
		defer resp.Body.Close()
		_ = jsonDecode(resp, &out)
		return out
	}
	code := func(out map[string]any) any { e, _ := out["error"].(map[string]any); return e["code"] }
	for _, body := range []string{"", "  \n"} {
		if out := post(body); code(out) != float64(-32700) {
			t.Fatalf("body %q: %v, want a parse error", body, out)
		}
	}
	for n, want := range map[int]bool{254: true, 255: false} { // the id's JSON is n+2 bytes
		id := `"` + strings.Repeat("i", n) + `"`
		out := post(`{"jsonrpc":"2.0","id":` + id + `,"method":"tasks/get","params":{"id":"r-x"}}`)
		if got := out["id"] == strings.Repeat("i", n); got != want || code(out) != float64(-32009) {
			t.Fatalf("an id of %d bytes: %v", n+2, out)
		}
	}
	c := client(t, srv, "demo", "acme")
	for n, whole := range map[int]bool{64: true, 65: false} {
		id := strings.Repeat("t", n)
		_, err := c.GetTask(context.Background(), &a2a.GetTaskRequest{ID: a2a.TaskID(id)})
		if !errors.Is(err, a2a.ErrTaskNotFound) || strings.Contains(err.Error(), id) != whole || strings.Contains(err.Error(), "bytes)") == whole {
			t.Fatalf("a task id of %d bytes: %v", n, err)
		}
	}
	res, err := c.SendMessage(context.Background(), message("s-1", "Hi.", map[string]any{"content": "Hello."}))
	if err != nil {
		t.Fatal(err)
	}
	zero := 0
	got, err := c.GetTask(context.Background(), &a2a.GetTaskRequest{ID: res.(*a2a.Task).ID, HistoryLength: &zero})
	if err != nil || len(got.History) != 0 {
		t.Fatalf("GetTask with historyLength 0: %+v, %v", got, err)
	}
}

func jsonDecode(resp *http.Response, v any) error { return json.NewDecoder(resp.Body).Decode(v) }
