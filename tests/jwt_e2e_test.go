//go:build e2e

package tests

import (
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/baton-agents/baton/internal/auth/authtest"
)

// TestJWTEndToEnd: baton dev accepting the JWTs of an issuer whose JWKS
// the test serves: a valid token starts and reads runs; every bad token
// is a 401 saying why; a rotated key is accepted without a restart; two
// tenants by claim see only their own runs and streams; scopes come from
// the token; Baton's own tokens still work beside.
func TestJWTEndToEnd(t *testing.T) { eachStore(t, jwtEndToEnd) }

func jwtEndToEnd(t *testing.T, args []string) {
	ti := authtest.NewIssuer(t, "https://idp.e2e.test/pool", "baton-e2e")
	k1, _ := ti.RSAKey(t, "k1", true)
	d := startDev(t, append(args, "--jwt-issuer", ti.Iss, "--jwt-audience", "baton-e2e", "--jwks-url", ti.URL))
	acme := ti.Token(t, jwt.SigningMethodRS256, "k1", k1, nil)
	body := `{"agent":"e2e","messages":[{"role":"user","content":"hi"}],"model":{"provider":"scripted","turns":[{"content":"Hello."}]}}`

	r := d.call(t, "POST", "/v1/runs", acme, body)
	if r.status != 202 {
		t.Fatalf("valid JWT: %d %v", r.status, r.body)
	}
	acmeRun := r.body["run_id"].(string)
	if v := d.call(t, "GET", "/v1/runs/"+acmeRun+"?wait=10", acme, ""); v.status != 200 {
		t.Fatalf("read with the JWT: %d %v", v.status, v.body)
	}

	other, _ := ti.RSAKey(t, "k-unpublished", false)
	pubDER, _ := x509.MarshalPKIXPublicKey(&k1.PublicKey)
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	none, err := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"iss": ti.Iss, "aud": "baton-e2e", "tenant": "acme", "exp": time.Now().Add(time.Hour).Unix()}).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	hour := time.Hour
	for _, tc := range []struct{ name, token, want string }{
		{"expired", ti.Token(t, jwt.SigningMethodRS256, "k1", k1, map[string]any{"exp": time.Now().Add(-hour).Unix(), "iat": time.Now().Add(-2 * hour).Unix()}), "expired"},
		{"not yet valid", ti.Token(t, jwt.SigningMethodRS256, "k1", k1, map[string]any{"nbf": time.Now().Add(hour).Unix()}), "not valid yet"},
		{"wrong audience", ti.Token(t, jwt.SigningMethodRS256, "k1", k1, map[string]any{"aud": "another-api"}), "audience"},
		{"wrong issuer", ti.Token(t, jwt.SigningMethodRS256, "k1", k1, map[string]any{"iss": "https://evil.e2e.test"}), "issuer"},
		{"alg none", none, "algorithm"},
		{"HS256 signed with the public key", ti.Token(t, jwt.SigningMethodHS256, "k1", pubPEM, nil), "algorithm"},
		{"unknown kid", ti.Token(t, jwt.SigningMethodRS256, "k-unpublished", other, nil), "key the issuer does not publish"},
		{"missing tenant claim", ti.Token(t, jwt.SigningMethodRS256, "k1", k1, map[string]any{"tenant": nil}), "tenant"},
		{"crafted tenant", ti.Token(t, jwt.SigningMethodRS256, "k1", k1, map[string]any{"tenant": "x/../acme"}), "not a valid tenant name"},
	} {
		r := d.call(t, "POST", "/v1/runs", tc.token, body)
		msg, _ := r.body["error"].(map[string]any)["message"].(string)
		if r.status != 401 || errCode(r) != "unauthorized" || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %d %v, want 401 unauthorized mentioning %q", tc.name, r.status, r.body, tc.want)
		}
	}

	// The issuer rotates: a key it publishes now works at once.
	k2, _ := ti.RSAKey(t, "k2", true)
	if r := d.call(t, "GET", "/v1/runs/"+acmeRun, ti.Token(t, jwt.SigningMethodRS256, "k2", k2, nil), ""); r.status != 200 {
		t.Fatalf("rotated key: %d %v", r.status, r.body)
	}

	// Tenants by claim: globex sees none of acme's runs.
	globex := ti.Token(t, jwt.SigningMethodRS256, "k1", k1, map[string]any{"tenant": "globex", "sub": "user-2"})
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
	reader := ti.Token(t, jwt.SigningMethodRS256, "k1", k1, map[string]any{"scope": "runs:read"})
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
