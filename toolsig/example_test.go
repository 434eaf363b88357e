package toolsig_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/baton-agents/baton/toolsig"
)

// A tool endpoint verifies each request before acting on it: the
// signature (with the secret the operator configured as secret_env,
// secret_ssm or secret_arn) over the raw body, and the five-minute
// window. It deduplicates on the Idempotency-Key header before any side
// effect.
func ExampleVerify() {
	secret := []byte("example-secret") // in a real tool: []byte(os.Getenv("SEND_EMAIL_SECRET"))
	handler := func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "read body", http.StatusBadRequest)
			return
		}
		if err := toolsig.Verify(secret, r.Header.Get(toolsig.HeaderTimestamp), r.Header.Get(toolsig.HeaderSignature), body, time.Now()); err != nil {
			http.Error(w, `{"success":false,"error":"invalid signature"}`, http.StatusUnauthorized)
			return
		}
		var call struct {
			ToolName   string         `json:"tool_name"`
			ToolCallID string         `json:"tool_call_id"`
			RunID      string         `json:"run_id"`
			SessionID  string         `json:"session_id"`
			Parameters map[string]any `json:"parameters"`
		}
		if err := json.Unmarshal(body, &call); err != nil {
			http.Error(w, `{"success":false,"error":"bad JSON"}`, http.StatusBadRequest)
			return
		}
		// Look up r.Header.Get(toolsig.HeaderIdempotencyKey) here and return
		// the stored response when the call was already executed.
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"success":true,"result":{"sent_to":%q}}`, call.Parameters["to"])
	}

	// What Baton's http executor sends.
	body := []byte(`{"tool_name":"ability/send_email","tool_call_id":"call_1","run_id":"r-1","session_id":"s-1","parameters":{"to":"ann@example.com"}}`)
	req := httptest.NewRequest(http.MethodPost, "/send_email", strings.NewReader(string(body)))
	req.Header.Set(toolsig.HeaderIdempotencyKey, "r-1:call_1")
	toolsig.SignRequest(req.Header, secret, time.Now(), body)
	rec := httptest.NewRecorder()
	handler(rec, req)
	fmt.Println(rec.Code, rec.Body.String())

	// The same request replayed six minutes later is refused.
	err := toolsig.Verify(secret, req.Header.Get(toolsig.HeaderTimestamp), req.Header.Get(toolsig.HeaderSignature), body, time.Now().Add(6*time.Minute))
	fmt.Println(errors.Is(err, toolsig.ErrExpired))
	// Output:
	// 200 {"success":true,"result":{"sent_to":"ann@example.com"}}
	// true
}

// Handler puts verification in front of an existing handler: requests
// without a valid, fresh signature get 401 and never reach it.
func ExampleHandler() {
	secret := []byte("example-secret")
	tool := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body) // the verified body, restored for the handler
		fmt.Fprintf(w, `{"success":true,"result":{"bytes":%d}}`, len(body))
	})
	h := toolsig.Handler(secret, tool)

	body := []byte(`{"parameters":{}}`)
	signed := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(string(body)))
	toolsig.SignRequest(signed.Header, secret, time.Now(), body)
	unsigned := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(string(body)))
	for _, r := range []*http.Request{signed, unsigned} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		fmt.Println(rec.Code, strings.TrimSpace(rec.Body.String()))
	}
	// Output:
	// 200 {"success":true,"result":{"bytes":17}}
	// 401 {"success":false,"error":"invalid Baton signature","error_type":"unauthorized"}
}
