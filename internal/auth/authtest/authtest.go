// Package authtest is an OIDC issuer for tests: its JWKS served on
// 127.0.0.1, its keys made by the test, and tokens signed with them.
package authtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Issuer is a test's OIDC issuer: Iss and Audience go into its tokens,
// URL serves its JWKS.
type Issuer struct {
	Iss, Audience, URL string

	mu      sync.Mutex
	keys    []map[string]any
	fetches int
}

// NewIssuer starts the issuer's JWKS server, stopped when the test ends.
func NewIssuer(t testing.TB, iss, audience string) *Issuer {
	i := &Issuer{Iss: iss, Audience: audience}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i.mu.Lock()
		defer i.mu.Unlock()
		i.fetches++
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": i.keys})
	}))
	t.Cleanup(srv.Close)
	i.URL = srv.URL
	return i
}

// Fetches counts the JWKS requests so far.
func (i *Issuer) Fetches() int {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.fetches
}

func (i *Issuer) add(publish bool, jwk map[string]any) {
	if publish {
		i.mu.Lock()
		i.keys = append(i.keys, jwk)
		i.mu.Unlock()
	}
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// RSAKey makes an RS256 key and its JWK, published in the JWKS when
// publish is set.
func (i *Issuer) RSAKey(t testing.TB, kid string, publish bool) (*rsa.PrivateKey, map[string]any) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	jwk := map[string]any{"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256", "n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes())}
	i.add(publish, jwk)
	return k, jwk
}

// ECKey makes an ES256 key and its JWK, published when publish is set.
func (i *Issuer) ECKey(t testing.TB, kid string, publish bool) (*ecdsa.PrivateKey, map[string]any) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pad := func(b []byte) []byte { return append(make([]byte, 32-len(b)), b...) }
	jwk := map[string]any{"kty": "EC", "kid": kid, "use": "sig", "alg": "ES256", "crv": "P-256", "x": b64(pad(k.X.Bytes())), "y": b64(pad(k.Y.Bytes()))}
	i.add(publish, jwk)
	return k, jwk
}

// Claims are a valid token's claims for tenant acme (iss, aud, sub,
// scope, iat, exp an hour on), changed by over: a nil value removes a
// claim.
func (i *Issuer) Claims(over map[string]any) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{"iss": i.Iss, "aud": i.Audience, "sub": "user-1", "tenant": "acme", "scope": "runs:read runs:write",
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

// Token signs Claims(over) with key under kid.
func (i *Issuer) Token(t testing.TB, method jwt.SigningMethod, kid string, key any, over map[string]any) string {
	return Sign(t, method, kid, key, i.Claims(over))
}

// Sign signs c with key, naming kid in the header when it is set.
func Sign(t testing.TB, method jwt.SigningMethod, kid string, key any, c jwt.MapClaims) string {
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
