package memory

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/providers"
)

// noWait is a retry policy that does not sleep.
var noWait = providers.RetryPolicy{MaxAttempts: 3, Sleep: func(context.Context, time.Duration) error { return nil }}

func openAIEmbedder(t *testing.T, url string, spec agents.EmbedderSpec) Embedder {
	t.Helper()
	es := NewEmbedders(EmbedderConfig{
		OpenAI: providers.HTTPConfig{BaseURL: url, Key: providers.SecretRef{Var: "BATON_OPENAI_API_KEY", Value: "sk-secret-key"}},
		Retry:  noWait,
	})
	spec.Provider = agents.EmbedderOpenAI
	e, err := es.For(&spec)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestOpenAIRequestAndResponse(t *testing.T) {
	var got map[string]any
	var auth, path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, auth = r.URL.Path, r.Header.Get("Authorization")
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &got)
		// Out of order, as the index field allows; not unit length.
		io.WriteString(w, `{"object":"list","data":[{"index":1,"embedding":[0,2,0]},{"index":0,"embedding":[3,0,4]}],"usage":{"prompt_tokens":5}}`)
	}))
	defer srv.Close()
	e := openAIEmbedder(t, srv.URL+"/v1", agents.EmbedderSpec{Model: "text-embedding-3-large", Dimensions: 3})
	vecs, err := e.Embed(context.Background(), []string{"first", "second"})
	if err != nil {
		t.Fatal(err)
	}
	if path != "/v1/embeddings" || auth != "Bearer sk-secret-key" {
		t.Fatalf("path %q auth %q", path, auth)
	}
	if got["model"] != "text-embedding-3-large" || got["dimensions"] != float64(3) {
		t.Fatalf("body %v", got)
	}
	if in, _ := got["input"].([]any); len(in) != 2 || in[0] != "first" || in[1] != "second" {
		t.Fatalf("input %v", got["input"])
	}
	if vecs[0][0] != 0.6 || vecs[0][2] != 0.8 || vecs[1][1] != 1 {
		t.Fatalf("vectors should be in input order, unit length: %v", vecs)
	}
}

func TestOpenAIOmitsUnsetDimensions(t *testing.T) {
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewDecoder(r.Body).Decode(&got)
		io.WriteString(w, `{"data":[{"embedding":[1,0]}]}`)
	}))
	defer srv.Close()
	e := openAIEmbedder(t, srv.URL, agents.EmbedderSpec{})
	if _, err := e.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if _, has := got["dimensions"]; has || got["model"] != DefaultOpenAIModel || e.Name() != "openai:"+DefaultOpenAIModel {
		t.Fatalf("body %v name %s", got, e.Name())
	}
}

func TestOpenAIErrors(t *testing.T) {
	for _, tc := range []struct {
		name      string
		status    []int // per attempt
		body      string
		wantCalls int32
		wantText  string
		retryable bool
	}{
		{"bad request is not retried", []int{400}, `{"error":{"type":"invalid_request_error","message":"model not found for key KEY"}}`, 1, "model not found", false},
		{"429 then ok", []int{429, 200}, `{"data":[{"embedding":[1]}]}`, 2, "", false},
		{"5xx until the attempts run out", []int{503, 503, 503}, `{"error":{"message":"overloaded"}}`, 3, "overloaded", true},
		{"no quota is not retried", []int{429}, `{"error":{"type":"insufficient_quota","message":"no credit"}}`, 1, "no credit", false},
		{"bad vectors", []int{200}, `{"data":[{"embedding":[]}]}`, 1, "empty vector", false},
		{"too few vectors", []int{200}, `{"data":[]}`, 1, "0 vectors for 1 texts", false},
		{"not json", []int{200}, `<html>`, 1, "not an embeddings list", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := calls.Add(1)
				st := tc.status[min(int(n), len(tc.status))-1]
				w.WriteHeader(st)
				if st == 200 {
					io.WriteString(w, tc.body)
					return
				}
				io.WriteString(w, strings.ReplaceAll(tc.body, "KEY", "sk-secret-key"))
			}))
			defer srv.Close()
			e := openAIEmbedder(t, srv.URL, agents.EmbedderSpec{})
			_, err := e.Embed(context.Background(), []string{"x"})
			if calls.Load() != tc.wantCalls {
				t.Fatalf("%d calls, want %d (err %v)", calls.Load(), tc.wantCalls, err)
			}
			if tc.wantText == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantText) || !strings.Contains(err.Error(), "openai") {
				t.Fatalf("err %v, want it to say %q", err, tc.wantText)
			}
			if strings.Contains(err.Error(), "sk-secret-key") {
				t.Fatalf("the key leaked: %v", err)
			}
			if core.IsRetryable(err) != tc.retryable {
				t.Fatalf("retryable %v, want %v: %v", core.IsRetryable(err), tc.retryable, err)
			}
		})
	}
}

func TestOpenAIKeyFromSSMUnavailable(t *testing.T) {
	// A key in SSM with no AWS reachable: the first call fails with a
	// retryable error naming the source, never at construction.
	es := NewEmbedders(EmbedderConfig{OpenAI: providers.HTTPConfig{BaseURL: "http://127.0.0.1:1", Key: providers.SecretRef{Var: "BATON_OPENAI_API_KEY", Value: "a", SSMParameter: "/x"}}})
	e, err := es.For(&agents.EmbedderSpec{Provider: agents.EmbedderOpenAI})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Embed(context.Background(), []string{"x"})
	if err == nil || !core.IsRetryable(err) || !strings.Contains(err.Error(), "set only one of") {
		t.Fatalf("err %v", err)
	}
}

func TestTitanBodyAndResponse(t *testing.T) {
	var bodies []map[string]any
	var models []string
	invoke := func(_ context.Context, model string, body []byte) ([]byte, error) {
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			return nil, err
		}
		bodies, models = append(bodies, m), append(models, model)
		v := make([]float32, 512)
		v[len(bodies)] = 1
		return json.Marshal(map[string]any{"embedding": v, "inputTextTokenCount": 3})
	}
	es := NewEmbedders(EmbedderConfig{InvokeModel: invoke, Retry: noWait})
	e, err := es.For(&agents.EmbedderSpec{Provider: agents.EmbedderBedrock, Dimensions: 512})
	if err != nil {
		t.Fatal(err)
	}
	vecs, err := e.Embed(context.Background(), []string{"one", "two"})
	if err != nil {
		t.Fatal(err)
	}
	if len(bodies) != 2 || models[0] != TitanV2 || models[1] != TitanV2 {
		t.Fatalf("one call per text: %v %v", bodies, models)
	}
	want := map[string]any{"inputText": "two", "dimensions": float64(512), "normalize": true}
	if b, _ := json.Marshal(bodies[1]); string(b) != mustJSON(want) {
		t.Fatalf("body %s", b)
	}
	if len(vecs) != 2 || vecs[0][1] != 1 || vecs[1][2] != 1 || e.Name() != "bedrock:amazon.titan-embed-text-v2:0:512" {
		t.Fatalf("vectors %v name %s", len(vecs), e.Name())
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestTitanErrors(t *testing.T) {
	calls := 0
	throttled := &providers.Error{Provider: "bedrock", Status: 429, Code: "ThrottlingException", Message: "slow down", Transient: true}
	invoke := func(context.Context, string, []byte) ([]byte, error) {
		if calls++; calls == 1 {
			return nil, throttled
		}
		return []byte(`{"embedding":[1,0,0]}`), nil
	}
	e, _ := NewEmbedders(EmbedderConfig{InvokeModel: invoke, Retry: noWait}).For(&agents.EmbedderSpec{Provider: agents.EmbedderBedrock})
	_, err := e.Embed(context.Background(), []string{"x"})
	if calls != 2 || err == nil || !strings.Contains(err.Error(), "3 dimensions, not 256") {
		t.Fatalf("a throttled call should be retried and a short vector refused: calls %d err %v", calls, err)
	}
	denied := errors.New("AccessDeniedException: not authorized to invoke model")
	e, _ = NewEmbedders(EmbedderConfig{InvokeModel: func(context.Context, string, []byte) ([]byte, error) { calls++; return nil, denied }, Retry: noWait}).
		For(&agents.EmbedderSpec{Provider: agents.EmbedderBedrock})
	calls = 0
	if _, err := e.Embed(context.Background(), []string{"x"}); !errors.Is(err, denied) || calls != 1 || !strings.Contains(err.Error(), "embedder bedrock:") {
		t.Fatalf("a permanent error is returned at once, named: %v (%d calls)", err, calls)
	}
	e, _ = NewEmbedders(EmbedderConfig{InvokeModel: func(context.Context, string, []byte) ([]byte, error) { return []byte(`{"message":"x"`), nil }}).
		For(&agents.EmbedderSpec{Provider: agents.EmbedderBedrock})
	if _, err := e.Embed(context.Background(), []string{"x"}); err == nil || !strings.Contains(err.Error(), "not a Titan embedding") {
		t.Fatalf("bad body: %v", err)
	}
}
