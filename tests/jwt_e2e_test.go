//go:build e2e

package tests

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// testIssuer is an OIDC issuer the test runs: its JWKS on 127.0.0.1, its
// keys the test's.
type testIssuer struct {
	mu   sync.Mutex
	keys []map[string]any
	srv  *httptest.Server
	iss  string
}

func newTestIssuer(t *testing.T) *testIssuer {
	ti := &testIssuer{iss: "https://idp.e2e.test/pool"}
	ti.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ti.mu.Lock()
		defer ti.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": ti.keys})
	}))
	t.Cleanup(ti.srv.Close)
	return ti
}

// newKey makes an RSA key; publish adds it to the JWKS.
func (ti *testIssuer) newKey(t *testing.T, kid string, publish bool) *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	if publish {
		enc := base64.RawURLEncoding.EncodeToString
		ti.mu.Lock()
		ti.keys = append(ti.keys, map[string]any{"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256", "n": enc(k.N.Bytes()), "e": enc(big.NewInt(int64(k.E)).Bytes())})
		ti.mu.Unlock()
	}
	return k
}

func (ti *testIssuer) token(t *testing.T, method jwt.SigningMethod, kid string, key any, over map[string]any) string {
	now := time.Now()
	c := jwt.MapClaims{"iss": ti.iss, "aud": "baton-e2e", "sub": "user-1", "tenant": "acme", "scope": "runs:read runs:write",
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	for k, v := range over {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	tok := jwt.NewWithClaims(method, c)
	tok.Header["kid"] = kid
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestJWTEndToEnd: baton dev accepting the JWTs of an issuer whose JWKS
// the test serves: a valid token starts and reads runs; every bad token
// is a 401 saying why; a rotated key is accepted without a restart; two
// tenants by claim see only their own runs and streams; scopes come from
// the token; Baton's own tokens still work beside.
func TestJWTEndToEnd(t *testing.T) { eachStore(t, jwtEndToEnd) }

func jwtEndToEnd(t *testing.T, args []string) {
	ti := newTestIssuer(t)
	k1 := ti.newKey(t, "k1", true)
	d := startDev(t, append(args, "--jwt-issuer", ti.iss, "--jwt-audience", "baton-e2e", "--jwks-url", ti.srv.URL))
	acme := ti.token(t, jwt.SigningMethodRS256, "k1", k1, nil)
	body := `{"agent":"e2e","messages":[{"role":"user","content":"hi"}],"model":{"provider":"scripted","turns":[{"content":"Hello."}]}}`

	r := d.call(t, "POST", "/v1/runs", acme, body)
	if r.status != 202 {
		t.Fatalf("valid JWT: %d %v", r.status, r.body)
	}
	acmeRun := r.body["run_id"].(string)
	if v := d.call(t, "GET", "/v1/runs/"+acmeRun+"?wait=10", acme, ""); v.status != 200 {
		t.Fatalf("read with the JWT: %d %v", v.status, v.body)
	}

	other := ti.newKey(t, "k-unpublished", false)
	pubDER, _ := x509.MarshalPKIXPublicKey(&k1.PublicKey)
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	none, err := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"iss": ti.iss, "aud": "baton-e2e", "tenant": "acme", "exp": time.Now().Add(time.Hour).Unix()}).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	hour := time.Hour
	for _, tc := range []struct{ name, token, want string }{
		{"expired", ti.token(t, jwt.SigningMethodRS256, "k1", k1, map[string]any{"exp": time.Now().Add(-hour).Unix(), "iat": time.Now().Add(-2 * hour).Unix()}), "expired"},
		{"not yet valid", ti.token(t, jwt.SigningMethodRS256, "k1", k1, map[string]any{"nbf": time.Now().Add(hour).Unix()}), "not valid yet"},
		{"wrong audience", ti.token(t, jwt.SigningMethodRS256, "k1", k1, map[string]any{"aud": "another-api"}), "audience"},
		{"wrong issuer", ti.token(t, jwt.SigningMethodRS256, "k1", k1, map[string]any{"iss": "https://evil.e2e.test"}), "issuer"},
		{"alg none", none, "algorithm"},
		{"HS256 signed with the public key", ti.token(t, jwt.SigningMethodHS256, "k1", pubPEM, nil), "algorithm"},
		{"unknown kid", ti.token(t, jwt.SigningMethodRS256, "k-unpublished", other, nil), "key the issuer does not publish"},
		{"missing tenant claim", ti.token(t, jwt.SigningMethodRS256, "k1", k1, map[string]any{"tenant": nil}), "tenant"},
		{"crafted tenant", ti.token(t, jwt.SigningMethodRS256, "k1", k1, map[string]any{"tenant": "x/../acme"}), "not a valid tenant name"},
	} {
		r := d.call(t, "POST", "/v1/runs", tc.token, body)
		msg, _ := r.body["error"].(map[string]any)["message"].(string)
		if r.status != 401 || errCode(r) != "unauthorized" || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %d %v, want 401 unauthorized mentioning %q", tc.name, r.status, r.body, tc.want)
		}
	}

	// The issuer rotates: a key it publishes now works at once.
	k2 := ti.newKey(t, "k2", true)
	if r := d.call(t, "GET", "/v1/runs/"+acmeRun, ti.token(t, jwt.SigningMethodRS256, "k2", k2, nil), ""); r.status != 200 {
		t.Fatalf("rotated key: %d %v", r.status, r.body)
	}

	// Tenants by claim: globex sees none of acme's runs.
	globex := ti.token(t, jwt.SigningMethodRS256, "k1", k1, map[string]any{"tenant": "globex", "sub": "user-2"})
	if r := d.call(t, "GET", "/v1/runs/"+acmeRun, globex, ""); r.status != 404 {
		t.Fatalf("globex reading acme's run: %d %v", r.status, r.body)
	}
	if r := d.call(t, "GET", "/v1/runs", globex, ""); r.status != 200 || len(r.body["runs"].([]any)) != 0 {
		t.Fatalf("globex's list: %d %v", r.status, r.body)
	}
	req, _ := http.NewRequest("GET", d.base+"/v1/runs/"+acmeRun+"/stream", nil)
	req.Header.Set("Authorization", "Bearer "+globex)
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 404 {
		t.Fatalf("globex streaming acme's run: %v %v", res, err)
	} else {
		res.Body.Close()
	}
	if r := d.call(t, "GET", "/v1/runs", acme, ""); r.status != 200 || len(r.body["runs"].([]any)) == 0 {
		t.Fatalf("acme's list: %d %v", r.status, r.body)
	}

	// Scopes are the token's.
	reader := ti.token(t, jwt.SigningMethodRS256, "k1", k1, map[string]any{"scope": "runs:read"})
	if r := d.call(t, "POST", "/v1/runs", reader, body); r.status != 403 || errCode(r) != "forbidden" {
		t.Fatalf("a read-only JWT starting a run: %d %v", r.status, r.body)
	}
	// The CLI logs in with a JWT and uses it.
	env := cliEnv(t, d, "")
	if r := runCLI(t, env, "", "login", "--url", d.base, "--token", acme); r.code != 0 || !strings.Contains(r.stdout, "the token is a JWT: it expires at") {
		t.Fatalf("login with a JWT: %+v", r)
	}
	if r := runCLI(t, env, "", "runs", "ls"); r.code != 0 || !strings.Contains(r.stdout, acmeRun) {
		t.Fatalf("runs ls with the saved JWT: %+v", r)
	}
	// Baton's own tokens still work.
	if r := d.call(t, "GET", "/v1/runs/"+acmeRun, tokAcme, ""); r.status != 200 {
		t.Fatalf("a Baton token beside JWTs: %d %v", r.status, r.body)
	}
}
