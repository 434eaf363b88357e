//go:build e2e

package tests

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-agents/baton/toolsig"
)

// fakeAWSTools emulates the two AWS APIs behind lambda tools and SSM-held
// signing secrets: Lambda Invoke (POST /2015-03-31/functions/{name}/invocations)
// and SSM GetParameter (AWS JSON 1.1, X-Amz-Target AmazonSSM.GetParameter).
type fakeAWSTools struct {
	srv         *httptest.Server
	mu          sync.Mutex
	invocations map[string]int // by idempotency_key
	events      []map[string]any
	ssmReads    int
}

func newFakeAWSTools(t *testing.T, ssmSecret string) *fakeAWSTools {
	f := &fakeAWSTools{invocations: map[string]int{}}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		f.mu.Lock()
		defer f.mu.Unlock()
		if r.Header.Get("X-Amz-Target") == "AmazonSSM.GetParameter" {
			f.ssmReads++
			if m["Name"] != "/baton/e2e/inventory-secret" || m["WithDecryption"] != true {
				w.WriteHeader(http.StatusBadRequest)
				io.WriteString(w, `{"__type":"ParameterNotFound","message":"no such parameter"}`)
				return
			}
			fmt.Fprintf(w, `{"Parameter":{"Name":"/baton/e2e/inventory-secret","Type":"SecureString","Value":%q,"Version":1}}`, ssmSecret)
			return
		}
		if !strings.HasPrefix(r.URL.Path, "/2015-03-31/functions/") || !strings.HasSuffix(r.URL.Path, "/invocations") {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"message":"unknown operation"}`)
			return
		}
		key, _ := m["idempotency_key"].(string)
		f.invocations[key]++
		f.events = append(f.events, m)
		params, _ := m["parameters"].(map[string]any)
		if params["sku"] == "BROKEN" {
			w.Header().Set("X-Amz-Function-Error", "Unhandled")
			io.WriteString(w, `{"errorMessage":"sku table missing","errorType":"KeyError"}`)
			return
		}
		fmt.Fprintf(w, `{"sku":%q,"warehouse":"north","function":%q}`, params["sku"], strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/2015-03-31/functions/"), "/invocations"))
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// TestAWSToolsEndToEnd drives baton dev with a lambda tool and an http
// tool whose secret is an SSM SecureString, both served by local fakes
// reached through the SDK's AWS_ENDPOINT_URL_<SERVICE> variables.
func TestAWSToolsEndToEnd(t *testing.T) {
	secret := "ssm-held-secret-" + randomSuffix() + randomSuffix()
	fake := newFakeAWSTools(t, secret)
	t.Setenv("AWS_ENDPOINT_URL_LAMBDA", fake.srv.URL)
	t.Setenv("AWS_ENDPOINT_URL_SSM", fake.srv.URL)
	t.Setenv("AWS_REGION", "us-east-1")

	var mu sync.Mutex
	var verified []error
	tool := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		err := toolsig.Verify([]byte(secret), r.Header.Get(toolsig.HeaderTimestamp), r.Header.Get(toolsig.HeaderSignature), b, time.Now())
		mu.Lock()
		verified = append(verified, err)
		mu.Unlock()
		io.WriteString(w, `{"reserved":true}`)
	}))
	defer tool.Close()

	const fn = "arn:aws:lambda:us-east-1:123456789012:function:check-stock:live"
	agentsJSON := `{"agents":[{"slug":"e2e-aws","model":{"provider":"scripted"},"allow_overrides":["model"],"tools":[
	  {"name":"inventory/check_stock","source":"inventory","description":"Check stock.",
	   "parameters":{"type":"object","required":["sku"],"properties":{"sku":{"type":"string"}}},
	   "executor":{"type":"lambda","function":"` + fn + `","timeout":"10s"}},
	  {"name":"inventory/reserve","source":"inventory","description":"Reserve stock.",
	   "parameters":{"type":"object","required":["sku"],"properties":{"sku":{"type":"string"}}},
	   "executor":{"type":"http","url":"` + tool.URL + `/reserve","secret_ssm":"/baton/e2e/inventory-secret"}}]}]}`
	path := filepath.Join(t.TempDir(), "agents.json")
	if err := os.WriteFile(path, []byte(agentsJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDev(t, withAgentsFile(devArgs(t), path))

	id := start(t, d, `{"agent":"e2e-aws","messages":[{"role":"user","content":"reserve A-1"}],"model":{"provider":"scripted","turns":[
		{"tool_calls":[{"id":"call_s","name":"inventory/check_stock","parameters":{"sku":"A-1"}}]},
		{"tool_calls":[{"id":"call_r","name":"inventory/reserve","parameters":{"sku":"A-1"}},{"id":"call_b","name":"inventory/check_stock","parameters":{"sku":"BROKEN"}}]},
		{"content":"Reserved."}]}}`)
	v := d.waitStatus(t, id)
	if v["status"] != "completed" {
		t.Fatalf("%v", v)
	}
	results := result(v)["tool_execution_results"].([]any)
	byID := map[string]map[string]any{}
	for _, r := range results {
		rr := r.(map[string]any)
		byID[rr["tool_call_id"].(string)] = rr["result"].(map[string]any)
	}
	if out, _ := byID["call_s"]["result"].(map[string]any); byID["call_s"]["success"] != true || out["warehouse"] != "north" || out["function"] != fn {
		t.Errorf("lambda result %v", byID["call_s"])
	}
	if out, _ := byID["call_r"]["result"].(map[string]any); byID["call_r"]["success"] != true || out["reserved"] != true {
		t.Errorf("http result %v", byID["call_r"])
	}
	if b := byID["call_b"]; b["success"] != false || b["error_type"] != "function_error" || !strings.Contains(fmt.Sprint(b["error"]), "KeyError: sku table missing") {
		t.Errorf("function error result %v", b)
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if fake.invocations[id+":call_s"] != 1 || fake.invocations[id+":call_b"] != 1 || len(fake.events) != 2 {
		t.Errorf("invocations %v", fake.invocations)
	}
	if fake.ssmReads != 1 {
		t.Errorf("the SSM secret was read %d times, want once at start", fake.ssmReads)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(verified) != 1 || verified[0] != nil {
		t.Errorf("http tool signatures: %v", verified)
	}
	if strings.Contains(d.out.String(), secret) {
		t.Error("the secret appears in baton dev's logs")
	}
}
