package auth

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
}
