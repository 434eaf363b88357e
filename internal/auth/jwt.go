// Package auth verifies the credentials of callers that are not Baton's
// own hashed tokens: JSON Web Tokens from an OIDC issuer (Cognito, Auth0,
// Okta, Entra, any issuer that publishes a JWKS).
//
// It is built on github.com/golang-jwt/jwt/v5 with
// github.com/MicahParks/keyfunc/v3 (and its jwkset): the parser takes an
// allow-list of algorithms, so "none" and an HMAC token signed with the
// issuer's public key are refused before any key is looked up, checks
// issuer, audience, expiry and not-before itself, and keyfunc keeps the
// issuer's JWKS cached, refreshes it in the background and on an unknown
// key id (rate-limited), and refuses a key whose "alg" disagrees with the
// token's.
package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/time/rate"

	"github.com/baton-agents/baton/core"
)

// JWTConfig configures JWT verification.
type JWTConfig struct {
	// Issuer is the exact "iss" the tokens carry (a Cognito user pool's
	// is https://cognito-idp.REGION.amazonaws.com/POOL_ID).
	Issuer string
	// Audience is an "aud" the tokens must carry. A Cognito ID token's
	// aud is the app client id; a Cognito access token has no aud but
	// a client_id claim, which is accepted for it.
	Audience string
	// JWKSURL is where the issuer's keys are (default: Issuer +
	// "/.well-known/jwks.json", Cognito's and most issuers' place).
	JWKSURL string
	// JWKSFile, instead, reads the keys once from a file (a test's, or
	// an offline deployment's).
	JWKSFile string
	// TenantClaim names the claim holding the caller's tenant (default
	// "tenant"; Cognito's custom attributes are "custom:tenant").
	TenantClaim string
	// ScopeClaim names the claim holding the caller's scopes (default:
	// "scope", a space-separated string, then "scp", a list or string).
	ScopeClaim string
	// ScopeMap maps an issuer's scope to Baton scopes; an issuer scope
	// not in the map counts as itself.
	ScopeMap map[string][]string
	// Leeway is the clock skew allowed on exp, nbf and iat (default 30s;
	// negative for none).
	Leeway time.Duration
	// Client fetches the JWKS (default http.DefaultClient with a 10 s
	// timeout).
	Client *http.Client
	// Log receives refresh failures.
	Log *slog.Logger
}

// Enabled reports whether JWT verification is configured.
func (c JWTConfig) Enabled() bool { return c.Issuer != "" }

// Identity is what a verified token says about its caller.
type Identity struct {
	Tenant  string
	Subject string
	Scopes  []string
	// TokenID names the token without being it: its jti, or a hash
	// prefix of its signature.
	TokenID string
}

// Algorithms are the signature algorithms accepted: asymmetric only.
var Algorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// unknownKIDRefresh bounds the JWKS refreshes an unknown key id causes:
// three at once, then one a minute; a request never waits for one (the
// limiter refuses at once a wait past refreshWaitMax, and a minute is).
var unknownKIDRefresh = func() *rate.Limiter { return rate.NewLimiter(rate.Every(time.Minute), 3) }

// refreshWaitMax is the deadline of the limiter's answer. It is not a
// wait (see unknownKIDRefresh): a deadline of a millisecond could pass
// on a busy machine before the limiter is asked, refusing a refresh it
// has a token for.
const refreshWaitMax = time.Second

// JWT verifies tokens of one issuer.
type JWT struct {
	cfg    JWTConfig
	keys   keyfunc.Keyfunc
	parser *jwt.Parser
	cancel context.CancelFunc
}

// NewJWT checks cfg and loads the issuer's keys (a JWKS that cannot be
// fetched yet is fetched again when a token needs it).
func NewJWT(cfg JWTConfig) (*JWT, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if cfg.TenantClaim == "" {
		cfg.TenantClaim = "tenant"
	}
	if cfg.Leeway == 0 {
		cfg.Leeway = 30 * time.Second
	}
	if cfg.Leeway < 0 {
		cfg.Leeway = 0
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	j := &JWT{cfg: cfg, cancel: func() {}}
	var err error
	if cfg.JWKSFile != "" {
		raw, rerr := os.ReadFile(cfg.JWKSFile)
		if rerr != nil {
			return nil, fmt.Errorf("jwks file: %w", rerr)
		}
		if j.keys, err = keyfunc.NewJWKSetJSON(raw); err != nil {
			return nil, fmt.Errorf("jwks file %s: not a JWK Set: %w", cfg.JWKSFile, err)
		}
	} else {
		url := cfg.JWKSURL
		if url == "" {
			url = strings.TrimSuffix(cfg.Issuer, "/") + "/.well-known/jwks.json"
		}
		client := cfg.Client
		if client == nil {
			client = &http.Client{Timeout: 10 * time.Second}
		}
		var ctx context.Context
		ctx, j.cancel = context.WithCancel(context.Background())
		log := cfg.Log
		j.keys, err = keyfunc.NewDefaultOverrideCtx(ctx, []string{url}, keyfunc.Override{
			Client: client, HTTPTimeout: 10 * time.Second, RefreshInterval: time.Hour,
			RefreshUnknownKID: unknownKIDRefresh(), RateLimitWaitMax: refreshWaitMax,
			RefreshErrorHandlerFunc: func(u string) func(context.Context, error) {
				return func(ctx context.Context, err error) {
					log.WarnContext(ctx, "jwt: could not fetch the issuer's keys", "url", u, "error", err)
				}
			},
		})
		if err != nil {
			j.cancel()
			return nil, fmt.Errorf("jwks url %s: %w", url, err)
		}
	}
	opts := []jwt.ParserOption{jwt.WithValidMethods(Algorithms), jwt.WithIssuer(cfg.Issuer), jwt.WithExpirationRequired(),
		jwt.WithLeeway(cfg.Leeway), jwt.WithIssuedAt()}
	j.parser = jwt.NewParser(opts...)
	return j, nil
}

func (c JWTConfig) check() error {
	switch {
	case c.Issuer == "":
		return errors.New("jwt: an issuer is required")
	case c.Audience == "":
		return errors.New("jwt: an audience is required (the app client id, or the API identifier the issuer puts in aud)")
	case c.JWKSURL != "" && c.JWKSFile != "":
		return errors.New("jwt: set a JWKS URL or a JWKS file, not both")
	case c.JWKSURL != "" && !strings.HasPrefix(c.JWKSURL, "https://") && !strings.HasPrefix(c.JWKSURL, "http://"):
		return fmt.Errorf("jwt: JWKS URL %q is not an http(s) URL", c.JWKSURL)
	}
	for from, to := range c.ScopeMap {
		for _, s := range to {
			if !core.ValidScope(s) {
				return fmt.Errorf("jwt: scope map %s: %q is not a valid scope name", from, s)
			}
		}
	}
	return nil
}

// Close stops the background refresh of the issuer's keys.
func (j *JWT) Close() { j.cancel() }

// Issuer is the issuer the tokens must come from.
func (j *JWT) Issuer() string { return j.cfg.Issuer }

// Error is a refused token; its message says why, without the token.
type Error struct{ Reason string }

func (e *Error) Error() string { return e.Reason }

func refuse(format string, args ...any) error { return &Error{Reason: fmt.Sprintf(format, args...)} }

// LooksLikeJWT reports whether a bearer credential has a JWT's shape
// (three dot-separated parts); Baton's own tokens never do.
func LooksLikeJWT(token string) bool { return strings.Count(token, ".") == 2 }

// Verify checks a token's signature, algorithm, issuer, audience, expiry
// and not-before, and reads its tenant and scopes.
func (j *JWT) Verify(ctx context.Context, raw string) (Identity, error) {
	claims := jwt.MapClaims{}
	tok, err := j.parser.ParseWithClaims(raw, claims, j.keys.KeyfuncCtx(ctx))
	if err != nil {
		return Identity{}, j.reason(err)
	}
	if !tok.Valid {
		return Identity{}, refuse("the JWT is not valid")
	}
	if !j.audienceOK(claims) {
		return Identity{}, refuse("the JWT is not for this API (its audience is not %s)", j.cfg.Audience)
	}
	tenant, _ := claims[j.cfg.TenantClaim].(string)
	if tenant == "" {
		return Identity{}, refuse("the JWT has no %s claim naming the tenant", j.cfg.TenantClaim)
	}
	if !core.ValidTenant(tenant) {
		return Identity{}, refuse("the JWT's %s claim is not a valid tenant name (%s)", j.cfg.TenantClaim, core.TenantPattern)
	}
	sub, _ := claims["sub"].(string)
	id := Identity{Tenant: tenant, Subject: sub, Scopes: j.scopes(claims)}
	if jti, _ := claims["jti"].(string); jti != "" && len(jti) <= 128 {
		id.TokenID = "jti:" + jti
	} else {
		sig := raw[strings.LastIndex(raw, ".")+1:]
		id.TokenID = "sig:" + sig[:min(len(sig), 16)]
	}
	return id, nil
}

// audienceOK: aud holds the audience, or, for a Cognito access token
// (token_use "access", no aud), client_id is it.
func (j *JWT) audienceOK(claims jwt.MapClaims) bool {
	aud, _ := claims.GetAudience()
	if slices.Contains(aud, j.cfg.Audience) {
		return true
	}
	if len(aud) == 0 && claims["token_use"] == "access" {
		cid, _ := claims["client_id"].(string)
		return cid == j.cfg.Audience
	}
	return false
}

// scopes reads the scope claim (a space-separated string or a list) and
// maps each scope.
func (j *JWT) scopes(claims jwt.MapClaims) []string {
	names := []string{j.cfg.ScopeClaim}
	if j.cfg.ScopeClaim == "" {
		names = []string{"scope", "scp"}
	}
	var raw []string
	for _, n := range names {
		switch v := claims[n].(type) {
		case string:
			raw = append(raw, strings.Fields(v)...)
		case []any:
			for _, s := range v {
				if s, ok := s.(string); ok {
					raw = append(raw, s)
				}
			}
		}
	}
	var out []string
	for _, s := range raw {
		mapped, ok := j.cfg.ScopeMap[s]
		if !ok {
			mapped = []string{s}
		}
		for _, m := range mapped {
			if core.ValidScope(m) && !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	return out
}

// reason turns the parser's error into what the caller is told.
func (j *JWT) reason(err error) error {
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		return refuse("the JWT is malformed")
	case errors.Is(err, jwt.ErrTokenSignatureInvalid) && strings.Contains(err.Error(), "signing method"):
		return refuse("the JWT's algorithm is not accepted (accepted: %s)", strings.Join(Algorithms, ", "))
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		if errors.Is(err, keyfunc.ErrKeyfunc) {
			return refuse("the JWT is signed with a key the issuer does not publish")
		}
		return refuse("the JWT cannot be verified")
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return refuse("the JWT's signature is not valid")
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return refuse("the JWT has no expiry (exp)")
	case errors.Is(err, jwt.ErrTokenExpired):
		return refuse("the JWT has expired")
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return refuse("the JWT is not valid yet")
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return refuse("the JWT is not from the issuer this API trusts (%s)", j.cfg.Issuer)
	}
	return refuse("the JWT is not valid")
}
