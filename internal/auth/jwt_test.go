package auth

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/baton-agents/baton/internal/auth/authtest"
)

const (
	issuer   = "https://idp.example.com/pool"
	audience = "baton-api"
)

func newVerifier(t *testing.T, cfg JWTConfig) *JWT {
	t.Helper()
	j, err := NewJWT(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(j.Close)
	return j
}

func TestJWTRefusesEveryBadToken(t *testing.T) {
	ik := authtest.NewIssuer(t, issuer, audience)
	key, _ := ik.RSAKey(t, "k1", true)
	other, _ := ik.RSAKey(t, "k-unpublished", false)
	j := newVerifier(t, JWTConfig{Issuer: issuer, Audience: audience, JWKSURL: ik.URL})
	pubDER, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	unsigned := func(c jwt.MapClaims) string {
		s, err := jwt.NewWithClaims(jwt.SigningMethodNone, c).SignedString(jwt.UnsafeAllowNoneSignatureType)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	hour := time.Hour
	cases := []struct{ name, token, want string }{
		{"expired", ik.Token(t, jwt.SigningMethodRS256, "k1", key, map[string]any{"exp": time.Now().Add(-hour).Unix(), "iat": time.Now().Add(-2 * hour).Unix()}), "expired"},
		{"not yet valid", ik.Token(t, jwt.SigningMethodRS256, "k1", key, map[string]any{"nbf": time.Now().Add(hour).Unix()}), "not valid yet"},
		{"issued in the future", ik.Token(t, jwt.SigningMethodRS256, "k1", key, map[string]any{"iat": time.Now().Add(hour).Unix()}), "not valid yet"},
		{"no expiry", ik.Token(t, jwt.SigningMethodRS256, "k1", key, map[string]any{"exp": nil}), "no expiry"},
		{"wrong audience", ik.Token(t, jwt.SigningMethodRS256, "k1", key, map[string]any{"aud": "someone-else"}), "audience"},
		{"no audience", ik.Token(t, jwt.SigningMethodRS256, "k1", key, map[string]any{"aud": nil}), "audience"},
		{"wrong issuer", ik.Token(t, jwt.SigningMethodRS256, "k1", key, map[string]any{"iss": "https://evil.example.com"}), "issuer"},
		{"alg none", unsigned(ik.Claims(nil)), "algorithm"},
		{"HS256 signed with the public key", ik.Token(t, jwt.SigningMethodHS256, "k1", pubPEM, nil), "algorithm"},
		{"HS256 signed with the modulus", ik.Token(t, jwt.SigningMethodHS256, "k1", key.N.Bytes(), nil), "algorithm"},
		{"unknown key", ik.Token(t, jwt.SigningMethodRS256, "k-unpublished", other, nil), "key the issuer does not publish"},
		{"known kid, other key", ik.Token(t, jwt.SigningMethodRS256, "k1", other, nil), "signature"},
		{"missing tenant", ik.Token(t, jwt.SigningMethodRS256, "k1", key, map[string]any{"tenant": nil}), "no tenant claim"},
		{"tenant not a string", ik.Token(t, jwt.SigningMethodRS256, "k1", key, map[string]any{"tenant": 7}), "no tenant claim"},
		{"crafted tenant", ik.Token(t, jwt.SigningMethodRS256, "k1", key, map[string]any{"tenant": "x/../acme"}), "not a valid tenant name"},
		{"key-separator tenant", ik.Token(t, jwt.SigningMethodRS256, "k1", key, map[string]any{"tenant": "acme#RUN#x"}), "not a valid tenant name"},
		{"malformed", "a.b.c", "malformed"},
		{"tampered", ik.Token(t, jwt.SigningMethodRS256, "k1", key, nil)[:40] + "x" + ik.Token(t, jwt.SigningMethodRS256, "k1", key, nil)[41:], ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := j.Verify(context.Background(), tc.token)
			var e *Error
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want a refusal mentioning %q", err, tc.want)
			}
			if !asError(err, &e) {
				t.Fatalf("%T is not an *Error", err)
			}
		})
	}
}

func asError(err error, target **Error) bool {
	e, ok := err.(*Error)
	*target = e
	return ok
}

func TestJWTAcceptsAndReadsTheCaller(t *testing.T) {
	ik := authtest.NewIssuer(t, issuer, audience)
	rk, _ := ik.RSAKey(t, "r1", true)
	ek, _ := ik.ECKey(t, "e1", true)
	j := newVerifier(t, JWTConfig{Issuer: issuer, Audience: audience, JWKSURL: ik.URL, TenantClaim: "custom:tenant",
		ScopeMap: map[string][]string{"baton/user": {"runs:read", "runs:write", "results:submit"}}})
	id, err := j.Verify(context.Background(), ik.Token(t, jwt.SigningMethodRS256, "r1", rk, map[string]any{"custom:tenant": "acme", "scope": "openid baton/user", "jti": "t-1"}))
	if err != nil {
		t.Fatal(err)
	}
	if id.Tenant != "acme" || id.Subject != "user-1" || id.TokenID != "jti:t-1" || !slices.Equal(id.Scopes, []string{"openid", "runs:read", "runs:write", "results:submit"}) {
		t.Fatalf("%+v", id)
	}
	// ES256, aud as a list, scp as a list (Entra, Okta).
	id, err = j.Verify(context.Background(), ik.Token(t, jwt.SigningMethodES256, "e1", ek, map[string]any{"custom:tenant": "globex", "aud": []string{"x", audience}, "scope": nil, "scp": []string{"runs:read"}}))
	if err != nil || id.Tenant != "globex" || !slices.Equal(id.Scopes, []string{"runs:read"}) || !strings.HasPrefix(id.TokenID, "sig:") {
		t.Fatalf("%+v %v", id, err)
	}
	// A Cognito access token: no aud, client_id is the app client.
	id, err = j.Verify(context.Background(), ik.Token(t, jwt.SigningMethodRS256, "r1", rk, map[string]any{"custom:tenant": "acme", "aud": nil, "token_use": "access", "client_id": audience}))
	if err != nil || id.Tenant != "acme" {
		t.Fatalf("%+v %v", id, err)
	}
	// A key whose alg says RS256 does not verify a PS256 token.
	if _, err := j.Verify(context.Background(), ik.Token(t, jwt.SigningMethodPS256, "r1", rk, map[string]any{"custom:tenant": "acme"})); err == nil {
		t.Fatal("PS256 with an RS256 key accepted")
	}
}

// TestJWTKeyRotation: a key the issuer publishes later is fetched on its
// first token, without a new verifier; unknown keys refresh the JWKS a
// bounded number of times.
func TestJWTKeyRotation(t *testing.T) {
	ik := authtest.NewIssuer(t, issuer, audience)
	k1, _ := ik.RSAKey(t, "k1", true)
	j := newVerifier(t, JWTConfig{Issuer: issuer, Audience: audience, JWKSURL: ik.URL})
	if _, err := j.Verify(context.Background(), ik.Token(t, jwt.SigningMethodRS256, "k1", k1, nil)); err != nil {
		t.Fatal(err)
	}
	k2, _ := ik.RSAKey(t, "k2", true)
	if _, err := j.Verify(context.Background(), ik.Token(t, jwt.SigningMethodRS256, "k2", k2, nil)); err != nil {
		t.Fatalf("rotated key: %v", err)
	}
	before := ik.Fetches()
	stray, _ := ik.RSAKey(t, "stray", false)
	for range 20 {
		if _, err := j.Verify(context.Background(), ik.Token(t, jwt.SigningMethodRS256, "stray", stray, nil)); err == nil {
			t.Fatal("unknown key accepted")
		}
	}
	if n := ik.Fetches() - before; n > 3 {
		t.Fatalf("20 unknown key ids fetched the JWKS %d times", n)
	}
}

func TestJWTFromAFileAndConfigErrors(t *testing.T) {
	ik := authtest.NewIssuer(t, issuer, audience)
	key, jwk := ik.RSAKey(t, "f1", false)
	path := filepath.Join(t.TempDir(), "jwks.json")
	b, _ := json.Marshal(map[string]any{"keys": []any{jwk}})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	j := newVerifier(t, JWTConfig{Issuer: issuer, Audience: audience, JWKSFile: path})
	if _, err := j.Verify(context.Background(), ik.Token(t, jwt.SigningMethodRS256, "f1", key, nil)); err != nil {
		t.Fatal(err)
	}
	for cfg, want := range map[*JWTConfig]string{
		{Audience: audience}: "issuer",
		{Issuer: issuer}:     "audience",
		{Issuer: issuer, Audience: audience, JWKSFile: "/nonexistent"}:                                          "jwks file",
		{Issuer: issuer, Audience: audience, JWKSURL: "ftp://x"}:                                                "not an http(s) URL",
		{Issuer: issuer, Audience: audience, JWKSURL: "https://x", JWKSFile: path}:                              "not both",
		{Issuer: issuer, Audience: audience, JWKSFile: path, ScopeMap: map[string][]string{"a": {"bad scope"}}}: "scope map",
	} {
		if _, err := NewJWT(*cfg); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: got %v, want %q", *cfg, err, want)
		}
	}
	if !LooksLikeJWT("a.b.c") || LooksLikeJWT("bt_0123456789") {
		t.Fatal("LooksLikeJWT")
	}
	if !(JWTConfig{Issuer: issuer}).Enabled() || (JWTConfig{Audience: audience}).Enabled() {
		t.Fatal("Enabled")
	}
}

// TestJWTAudience: aud must name the API; only a Cognito access token
// (token_use "access" and no aud) may name it in client_id instead.
func TestJWTAudience(t *testing.T) {
	ik := authtest.NewIssuer(t, issuer, audience)
	key, _ := ik.RSAKey(t, "k1", true)
	j := newVerifier(t, JWTConfig{Issuer: issuer, Audience: audience, JWKSURL: ik.URL})
	cases := []struct {
		name   string
		claims map[string]any
		accept bool
	}{
		{"aud is the API", nil, true},
		{"aud lists the API", map[string]any{"aud": []string{"other", audience}}, true},
		{"aud names someone else", map[string]any{"aud": "someone-else"}, false},
		{"aud lists others only", map[string]any{"aud": []string{"a", "b"}}, false},
		{"no aud", map[string]any{"aud": nil}, false},
		{"access token: no aud, client_id is the API", map[string]any{"aud": nil, "token_use": "access", "client_id": audience}, true},
		{"access token whose aud names someone else, client_id the API", map[string]any{"aud": "someone-else", "token_use": "access", "client_id": audience}, false},
		{"no aud, client_id the API, no token_use", map[string]any{"aud": nil, "client_id": audience}, false},
		{"no aud, client_id the API, an ID token", map[string]any{"aud": nil, "token_use": "id", "client_id": audience}, false},
		{"access token: no aud, client_id someone else", map[string]any{"aud": nil, "token_use": "access", "client_id": "someone-else"}, false},
		{"access token: no aud, no client_id", map[string]any{"aud": nil, "token_use": "access"}, false},
		{"access token: no aud, client_id not a string", map[string]any{"aud": nil, "token_use": "access", "client_id": 7}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := j.Verify(context.Background(), ik.Token(t, jwt.SigningMethodRS256, "k1", key, tc.claims))
			switch {
			case tc.accept && err != nil:
				t.Fatalf("refused: %v", err)
			case !tc.accept && (err == nil || !strings.Contains(err.Error(), "audience is not "+audience)):
				t.Fatalf("got %v, want a refusal for the audience", err)
			}
		})
	}
}

// TestJWTLeeway: the clock skew allowed on exp is 30s by default, none
// when negative, else as configured.
func TestJWTLeeway(t *testing.T) {
	ik := authtest.NewIssuer(t, issuer, audience)
	key, _ := ik.RSAKey(t, "k1", true)
	cases := []struct {
		leeway, expiredAgo time.Duration
		accept             bool
	}{
		{0, 10 * time.Second, true},
		{0, 90 * time.Second, false},
		{-1, 10 * time.Second, false},
		{2 * time.Minute, 90 * time.Second, true},
		{2 * time.Minute, 5 * time.Minute, false},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("leeway %v, expired %v ago", tc.leeway, tc.expiredAgo), func(t *testing.T) {
			j := newVerifier(t, JWTConfig{Issuer: issuer, Audience: audience, JWKSURL: ik.URL, Leeway: tc.leeway})
			now := time.Now()
			tok := ik.Token(t, jwt.SigningMethodRS256, "k1", key, map[string]any{"iat": now.Add(-time.Hour).Unix(), "exp": now.Add(-tc.expiredAgo).Unix()})
			_, err := j.Verify(context.Background(), tok)
			if tc.accept && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tc.accept && (err == nil || !strings.Contains(err.Error(), "expired")) {
				t.Fatalf("got %v, want a refusal for expiry", err)
			}
		})
	}
}

// TestJWTTokenID: a token is named by its jti when it has one of at most
// 128 characters, else by the first 16 characters of its signature.
func TestJWTTokenID(t *testing.T) {
	ik := authtest.NewIssuer(t, issuer, audience)
	key, _ := ik.RSAKey(t, "k1", true)
	j := newVerifier(t, JWTConfig{Issuer: issuer, Audience: audience, JWKSURL: ik.URL})
	long := strings.Repeat("j", 128)
	cases := []struct {
		name string
		jti  any
		byID bool
	}{
		{"a jti", "t-1", true},
		{"a jti of 128 characters", long, true},
		{"a jti of 129 characters", long + "j", false},
		{"no jti", nil, false},
		{"an empty jti", "", false},
		{"a jti not a string", 7, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw := ik.Token(t, jwt.SigningMethodRS256, "k1", key, map[string]any{"jti": tc.jti})
			id, err := j.Verify(context.Background(), raw)
			if err != nil {
				t.Fatal(err)
			}
			want := "sig:" + raw[strings.LastIndex(raw, ".")+1:][:16]
			if tc.byID {
				want = "jti:" + tc.jti.(string)
			}
			if id.TokenID != want {
				t.Fatalf("TokenID %q, want %q", id.TokenID, want)
			}
		})
	}
}

type countingTransport struct{ n atomic.Int32 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

// TestJWTFetchesTheIssuersKeys: without a JWKS URL the keys are at the
// issuer's /.well-known/jwks.json, fetched with the configured client; a
// failed fetch is logged and tried again when a token needs the keys.
func TestJWTFetchesTheIssuersKeys(t *testing.T) {
	var (
		mu    sync.Mutex
		paths []string
		jwks  []byte // nil: the issuer fails
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		paths = append(paths, r.URL.Path)
		if jwks == nil {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write(jwks)
	}))
	t.Cleanup(srv.Close)
	iss := srv.URL + "/pool/"
	ik := authtest.NewIssuer(t, iss, audience)
	key, jwk := ik.RSAKey(t, "k1", false)
	var logs bytes.Buffer
	transport := &countingTransport{}
	j := newVerifier(t, JWTConfig{Issuer: iss, Audience: audience, Client: &http.Client{Transport: transport},
		Log: slog.New(slog.NewTextHandler(&logs, nil))})
	if !strings.Contains(logs.String(), "could not fetch the issuer's keys") {
		t.Fatalf("the failed fetch is not logged: %q", logs.String())
	}
	mu.Lock()
	jwks, _ = json.Marshal(map[string]any{"keys": []any{jwk}})
	mu.Unlock()
	if _, err := j.Verify(context.Background(), ik.Token(t, jwt.SigningMethodRS256, "k1", key, nil)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(paths) < 2 || slices.ContainsFunc(paths, func(p string) bool { return p != "/pool/.well-known/jwks.json" }) {
		t.Fatalf("fetched %v", paths)
	}
	if int(transport.n.Load()) != len(paths) {
		t.Fatalf("%d fetches through the configured client, %d in all", transport.n.Load(), len(paths))
	}
}

// TestJWTScopes: the scope claim (a string or a list) mapped through the
// scope map, without duplicates, dropping what is not a valid scope name.
func TestJWTScopes(t *testing.T) {
	ik := authtest.NewIssuer(t, issuer, audience)
	key, _ := ik.RSAKey(t, "k1", true)
	j := newVerifier(t, JWTConfig{Issuer: issuer, Audience: audience, JWKSURL: ik.URL,
		ScopeMap: map[string][]string{"baton/user": {"runs:read", "runs:write"}, "baton/none": {}}})
	cases := []struct {
		name   string
		claims map[string]any
		want   []string
	}{
		{"a string", map[string]any{"scope": "runs:read results:submit"}, []string{"runs:read", "results:submit"}},
		{"a list in scp", map[string]any{"scope": nil, "scp": []string{"runs:read"}}, []string{"runs:read"}},
		{"mapped", map[string]any{"scope": "baton/user"}, []string{"runs:read", "runs:write"}},
		{"mapped to nothing", map[string]any{"scope": "baton/none runs:read"}, []string{"runs:read"}},
		{"duplicates once", map[string]any{"scope": "runs:read baton/user runs:read"}, []string{"runs:read", "runs:write"}},
		{"invalid names dropped", map[string]any{"scope": nil, "scp": []any{"runs:read", "not a scope", "", 7}}, []string{"runs:read"}},
		{"none", map[string]any{"scope": nil}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id, err := j.Verify(context.Background(), ik.Token(t, jwt.SigningMethodRS256, "k1", key, tc.claims))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(id.Scopes, tc.want) {
				t.Fatalf("scopes %q, want %q", id.Scopes, tc.want)
			}
		})
	}
}

// deadlineTransport records how far off each request's deadline is.
type deadlineTransport struct {
	mu   sync.Mutex
	left []time.Duration // -1: no deadline
}

func (d *deadlineTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	left := time.Duration(-1)
	if dl, ok := r.Context().Deadline(); ok {
		left = time.Until(dl)
	}
	d.mu.Lock()
	d.left = append(d.left, left)
	d.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

// TestJWTFetchIsBounded: a JWKS fetch, even with a client of no timeout,
// gives up after 10 seconds (a hanging issuer does not hold requests).
func TestJWTFetchIsBounded(t *testing.T) {
	ik := authtest.NewIssuer(t, issuer, audience)
	key, _ := ik.RSAKey(t, "k1", true)
	dt := &deadlineTransport{}
	j := newVerifier(t, JWTConfig{Issuer: issuer, Audience: audience, JWKSURL: ik.URL, Client: &http.Client{Transport: dt}})
	if _, err := j.Verify(context.Background(), ik.Token(t, jwt.SigningMethodRS256, "k1", key, nil)); err != nil {
		t.Fatal(err)
	}
	dt.mu.Lock()
	defer dt.mu.Unlock()
	if len(dt.left) == 0 {
		t.Fatal("no fetch through the client")
	}
	for _, left := range dt.left {
		if left <= 0 || left > 10*time.Second {
			t.Fatalf("a fetch's deadline is %v away, want at most 10s", left)
		}
	}
}
