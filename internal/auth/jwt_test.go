package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

const (
	issuer   = "https://idp.example.com/pool"
	audience = "baton-api"
)

// issuerKeys is a JWKS server the test controls.
type issuerKeys struct {
	mu      sync.Mutex
	keys    []map[string]any
	fetches int
	srv     *httptest.Server
}

func newIssuer(t *testing.T) *issuerKeys {
	ik := &issuerKeys{}
	ik.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ik.mu.Lock()
		defer ik.mu.Unlock()
		ik.fetches++
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": ik.keys})
	}))
	t.Cleanup(ik.srv.Close)
	return ik
}

func (ik *issuerKeys) publish(jwk map[string]any) {
	ik.mu.Lock()
	ik.keys = append(ik.keys, jwk)
	ik.mu.Unlock()
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func rsaJWK(t *testing.T, kid string) (*rsa.PrivateKey, map[string]any) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k, map[string]any{"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256", "n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes())}
}

func ecJWK(t *testing.T, kid string) (*ecdsa.PrivateKey, map[string]any) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pad := func(b []byte) []byte { return append(make([]byte, 32-len(b)), b...) }
	return k, map[string]any{"kty": "EC", "kid": kid, "use": "sig", "alg": "ES256", "crv": "P-256", "x": b64(pad(k.X.Bytes())), "y": b64(pad(k.Y.Bytes()))}
}

func claims(over map[string]any) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{"iss": issuer, "aud": audience, "sub": "user-1", "tenant": "acme", "scope": "runs:read runs:write",
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	for k, v := range over {
		if v == nil {
			delete(c, k)
			continue
		}
		c[k] = v
	}
	return c
}

func sign(t *testing.T, method jwt.SigningMethod, kid string, key any, c jwt.MapClaims) string {
	tok := jwt.NewWithClaims(method, c)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

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
	ik := newIssuer(t)
	key, jwk := rsaJWK(t, "k1")
	ik.publish(jwk)
	other, _ := rsaJWK(t, "k-unpublished")
	j := newVerifier(t, JWTConfig{Issuer: issuer, Audience: audience, JWKSURL: ik.srv.URL})
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
		{"expired", sign(t, jwt.SigningMethodRS256, "k1", key, claims(map[string]any{"exp": time.Now().Add(-hour).Unix(), "iat": time.Now().Add(-2 * hour).Unix()})), "expired"},
		{"not yet valid", sign(t, jwt.SigningMethodRS256, "k1", key, claims(map[string]any{"nbf": time.Now().Add(hour).Unix()})), "not valid yet"},
		{"issued in the future", sign(t, jwt.SigningMethodRS256, "k1", key, claims(map[string]any{"iat": time.Now().Add(hour).Unix()})), "not valid yet"},
		{"no expiry", sign(t, jwt.SigningMethodRS256, "k1", key, claims(map[string]any{"exp": nil})), "no expiry"},
		{"wrong audience", sign(t, jwt.SigningMethodRS256, "k1", key, claims(map[string]any{"aud": "someone-else"})), "audience"},
		{"no audience", sign(t, jwt.SigningMethodRS256, "k1", key, claims(map[string]any{"aud": nil})), "audience"},
		{"wrong issuer", sign(t, jwt.SigningMethodRS256, "k1", key, claims(map[string]any{"iss": "https://evil.example.com"})), "issuer"},
		{"alg none", unsigned(claims(nil)), "algorithm"},
		{"HS256 signed with the public key", sign(t, jwt.SigningMethodHS256, "k1", pubPEM, claims(nil)), "algorithm"},
		{"HS256 signed with the modulus", sign(t, jwt.SigningMethodHS256, "k1", key.N.Bytes(), claims(nil)), "algorithm"},
		{"unknown key", sign(t, jwt.SigningMethodRS256, "k-unpublished", other, claims(nil)), "key the issuer does not publish"},
		{"known kid, other key", sign(t, jwt.SigningMethodRS256, "k1", other, claims(nil)), "signature"},
		{"missing tenant", sign(t, jwt.SigningMethodRS256, "k1", key, claims(map[string]any{"tenant": nil})), "no tenant claim"},
		{"tenant not a string", sign(t, jwt.SigningMethodRS256, "k1", key, claims(map[string]any{"tenant": 7})), "no tenant claim"},
		{"crafted tenant", sign(t, jwt.SigningMethodRS256, "k1", key, claims(map[string]any{"tenant": "x/../acme"})), "not a valid tenant name"},
		{"key-separator tenant", sign(t, jwt.SigningMethodRS256, "k1", key, claims(map[string]any{"tenant": "acme#RUN#x"})), "not a valid tenant name"},
		{"malformed", "a.b.c", "malformed"},
		{"tampered", sign(t, jwt.SigningMethodRS256, "k1", key, claims(nil))[:40] + "x" + sign(t, jwt.SigningMethodRS256, "k1", key, claims(nil))[41:], ""},
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
	ik := newIssuer(t)
	rk, rjwk := rsaJWK(t, "r1")
	ek, ejwk := ecJWK(t, "e1")
	ik.publish(rjwk)
	ik.publish(ejwk)
	j := newVerifier(t, JWTConfig{Issuer: issuer, Audience: audience, JWKSURL: ik.srv.URL, TenantClaim: "custom:tenant",
		ScopeMap: map[string][]string{"baton/user": {"runs:read", "runs:write", "results:submit"}}})
	id, err := j.Verify(context.Background(), sign(t, jwt.SigningMethodRS256, "r1", rk, claims(map[string]any{"custom:tenant": "acme", "scope": "openid baton/user", "jti": "t-1"})))
	if err != nil {
		t.Fatal(err)
	}
	if id.Tenant != "acme" || id.Subject != "user-1" || id.TokenID != "jti:t-1" || !slices.Equal(id.Scopes, []string{"openid", "runs:read", "runs:write", "results:submit"}) {
		t.Fatalf("%+v", id)
	}
	// ES256, aud as a list, scp as a list (Entra, Okta).
	id, err = j.Verify(context.Background(), sign(t, jwt.SigningMethodES256, "e1", ek, claims(map[string]any{"custom:tenant": "globex", "aud": []string{"x", audience}, "scope": nil, "scp": []string{"runs:read"}})))
	if err != nil || id.Tenant != "globex" || !slices.Equal(id.Scopes, []string{"runs:read"}) || !strings.HasPrefix(id.TokenID, "sig:") {
		t.Fatalf("%+v %v", id, err)
	}
	// A Cognito access token: no aud, client_id is the app client.
	id, err = j.Verify(context.Background(), sign(t, jwt.SigningMethodRS256, "r1", rk, claims(map[string]any{"custom:tenant": "acme", "aud": nil, "token_use": "access", "client_id": audience})))
	if err != nil || id.Tenant != "acme" {
		t.Fatalf("%+v %v", id, err)
	}
	// A key whose alg says RS256 does not verify a PS256 token.
	if _, err := j.Verify(context.Background(), sign(t, jwt.SigningMethodPS256, "r1", rk, claims(map[string]any{"custom:tenant": "acme"}))); err == nil {
		t.Fatal("PS256 with an RS256 key accepted")
	}
}

// TestJWTKeyRotation: a key the issuer publishes later is fetched on its
// first token, without a new verifier; unknown keys refresh the JWKS a
// bounded number of times.
func TestJWTKeyRotation(t *testing.T) {
	ik := newIssuer(t)
	k1, jwk1 := rsaJWK(t, "k1")
	ik.publish(jwk1)
	j := newVerifier(t, JWTConfig{Issuer: issuer, Audience: audience, JWKSURL: ik.srv.URL})
	if _, err := j.Verify(context.Background(), sign(t, jwt.SigningMethodRS256, "k1", k1, claims(nil))); err != nil {
		t.Fatal(err)
	}
	k2, jwk2 := rsaJWK(t, "k2")
	ik.publish(jwk2)
	if _, err := j.Verify(context.Background(), sign(t, jwt.SigningMethodRS256, "k2", k2, claims(nil))); err != nil {
		t.Fatalf("rotated key: %v", err)
	}
	ik.mu.Lock()
	before := ik.fetches
	ik.mu.Unlock()
	stray, _ := rsaJWK(t, "stray")
	for range 20 {
		if _, err := j.Verify(context.Background(), sign(t, jwt.SigningMethodRS256, "stray", stray, claims(nil))); err == nil {
			t.Fatal("unknown key accepted")
		}
	}
	ik.mu.Lock()
	defer ik.mu.Unlock()
	if n := ik.fetches - before; n > 3 {
		t.Fatalf("20 unknown key ids fetched the JWKS %d times", n)
	}
}

func TestJWTFromAFileAndConfigErrors(t *testing.T) {
	key, jwk := rsaJWK(t, "f1")
	path := filepath.Join(t.TempDir(), "jwks.json")
	b, _ := json.Marshal(map[string]any{"keys": []any{jwk}})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	j := newVerifier(t, JWTConfig{Issuer: issuer, Audience: audience, JWKSFile: path})
	if _, err := j.Verify(context.Background(), sign(t, jwt.SigningMethodRS256, "f1", key, claims(nil))); err != nil {
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
}
