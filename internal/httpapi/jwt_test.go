package httpapi_test

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/baton-agents/baton/internal/auth"
)

// TestJWTCallerIsThePrincipal: with a JWT verifier, a JWT's caller is the
// principal that decides an approval (its subject, auth source jwt and
// jti; never the token), its scopes are enforced, and Baton tokens keep
// working beside it.
func TestJWTCallerIsThePrincipal(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	jwks, _ := json.Marshal(map[string]any{"keys": []any{map[string]any{"kty": "RSA", "kid": "k1", "alg": "RS256", "n": enc(key.N.Bytes()), "e": enc(big.NewInt(int64(key.E)).Bytes())}}})
	path := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(path, jwks, 0o600); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	if e.api.JWT, err = auth.NewJWT(auth.JWTConfig{Issuer: "https://idp.test", Audience: "baton", JWKSFile: path}); err != nil {
		t.Fatal(err)
	}
	mint := func(scope string) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"iss": "https://idp.test", "aud": "baton", "sub": "user-9", "tenant": "acme",
			"scope": scope, "jti": "abc", "exp": time.Now().Add(time.Hour).Unix()})
		tok.Header["kid"] = "k1"
		s, err := tok.SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	body := `{"agent":"demo","messages":[{"role":"user","content":"mail ann"}],"model":{"provider":"scripted","turns":[
	    {"tool_calls":[{"id":"c1","name":"ability/send_email","parameters":{"to":"ann"}}]},{"content":"Done."}]}}`
	if st, v, _ := e.do(t, "POST", "/v1/runs", mint("runs:read"), body, nil); st != 403 || fmt.Sprint(v["error"]) != "map[code:forbidden message:the JWT lacks the runs:write scope]" {
		t.Fatalf("read-only JWT: %d %v", st, v)
	}
	st, v, _ := e.do(t, "POST", "/v1/runs", mint("runs:write runs:read approvals:decide"), body, nil)
	if st != 202 {
		t.Fatalf("start: %d %v", st, v)
	}
	runID := v["run_id"].(string)
	e.pump(t)
	_, v, _ = e.do(t, "GET", "/v1/runs/"+runID, "tok-acme-123", "", nil)
	actID := v["pending"].(map[string]any)["actions"].([]any)[0].(map[string]any)["action_id"].(string)
	if st, b, _ := e.do(t, "POST", "/v1/runs/"+runID+"/approvals/"+actID, mint("approvals:decide"), `{"decision":"accept"}`, nil); st != 202 {
		t.Fatalf("decide: %d %v", st, b)
	}
	e.pump(t)
	_, v, _ = e.do(t, "GET", "/v1/runs/"+runID, "tok-acme-123", "", nil)
	approval := v["result"].(map[string]any)["tool_audit_events"].([]any)[0].(map[string]any)["approval"].(map[string]any)
	want := map[string]any{"tenant": "acme", "actor_id": "user-9", "auth_source": "jwt", "request_context": "rest", "token_id": "jti:abc"}
	if fmt.Sprint(approval["resolver"]) != fmt.Sprint(want) {
		t.Fatalf("resolver %v, want %v", approval["resolver"], want)
	}
	if st, v, _ := e.do(t, "GET", "/v1/runs/"+runID, "a.b.c", "", nil); st != 401 || fmt.Sprint(v["error"]) != "map[code:unauthorized message:the JWT is malformed]" {
		t.Fatalf("malformed JWT: %d %v", st, v)
	}
}
