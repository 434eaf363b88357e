package toolsig

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Header names of a signed tool request.
const (
	HeaderTimestamp      = "X-Baton-Timestamp"
	HeaderSignature      = "X-Baton-Signature"
	HeaderIdempotencyKey = "Idempotency-Key"
)

// Scheme is the signature scheme prefix of the signature header.
const Scheme = "v1"

// Tolerance is the replay window: Verify rejects a timestamp more than
// Tolerance older or newer than its clock.
const Tolerance = 5 * time.Minute

// Errors returned by Verify; match them with errors.Is.
var (
	// ErrMalformed: a header is missing or not in the documented format.
	ErrMalformed = errors.New("toolsig: malformed signature header")
	// ErrMismatch: no signature matches the body and secret.
	ErrMismatch = errors.New("toolsig: signature does not match")
	// ErrExpired: the timestamp is outside the replay window (a stale or
	// replayed request, or a clock too far ahead).
	ErrExpired = errors.New("toolsig: timestamp outside the replay window")
)

// Sign returns the X-Baton-Signature header value for body signed at
// timestamp (unix seconds): "v1=" and the hex HMAC-SHA256 of
// "<timestamp>.<body>" under secret.
func Sign(secret []byte, timestamp int64, body []byte) string {
	return Scheme + "=" + hex.EncodeToString(mac(secret, strconv.FormatInt(timestamp, 10), body))
}

// SignRequest sets the timestamp and signature headers of a request whose
// body is body, signed at now.
func SignRequest(h http.Header, secret []byte, now time.Time, body []byte) {
	ts := now.Unix()
	h.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	h.Set(HeaderSignature, Sign(secret, ts, body))
}

func mac(secret []byte, timestamp string, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(timestamp))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// Verify checks a request's X-Baton-Timestamp and X-Baton-Signature header
// values against its raw body, with the five-minute Tolerance around now.
// It returns nil, or an error matching ErrMalformed, ErrMismatch or
// ErrExpired.
func Verify(secret []byte, timestamp, signature string, body []byte, now time.Time) error {
	return Verifier{Secrets: [][]byte{secret}}.Verify(timestamp, signature, body, now)
}

// Verifier verifies signatures against one or more secrets (to rotate a
// secret, list the new one and the old one).
type Verifier struct {
	Secrets [][]byte
	// Tolerance is the replay window; zero means the five-minute
	// Tolerance.
	Tolerance time.Duration
}

// Verify is the package-level Verify with the verifier's secrets and
// window.
func (v Verifier) Verify(timestamp, signature string, body []byte, now time.Time) error {
	ts, err := parseTimestamp(timestamp)
	if err != nil {
		return err
	}
	sigs, err := parseSignatures(signature)
	if err != nil {
		return err
	}
	// Check the signature before the window so a forged request learns
	// nothing about the clock, then reject a stale or future timestamp.
	matched := false
	for _, secret := range v.Secrets {
		if len(secret) == 0 {
			continue
		}
		want := mac(secret, timestamp, body)
		for _, got := range sigs {
			if hmac.Equal(want, got) {
				matched = true
			}
		}
	}
	if !matched {
		return ErrMismatch
	}
	tol := v.Tolerance
	if tol <= 0 {
		tol = Tolerance
	}
	age := now.Sub(time.Unix(ts, 0))
	if age > tol || age < -tol {
		return fmt.Errorf("%w: signed at %d, %s from now (window ±%s)", ErrExpired, ts, age.Round(time.Second), tol)
	}
	return nil
}

// parseTimestamp accepts only a plain base-10 unix-seconds value.
func parseTimestamp(s string) (int64, error) {
	if s == "" {
		return 0, fmt.Errorf("%w: %s is missing", ErrMalformed, HeaderTimestamp)
	}
	if len(s) > 18 {
		return 0, fmt.Errorf("%w: %s is not unix seconds", ErrMalformed, HeaderTimestamp)
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%w: %s is not unix seconds", ErrMalformed, HeaderTimestamp)
		}
	}
	ts, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %s is not unix seconds", ErrMalformed, HeaderTimestamp)
	}
	return ts, nil
}

// parseSignatures reads "v1=<64 hex>[,v1=<64 hex>…]". Entries of another
// scheme are skipped (a later scheme may be sent beside v1); at least one
// v1 entry is required.
func parseSignatures(s string) ([][]byte, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("%w: %s is missing", ErrMalformed, HeaderSignature)
	}
	var out [][]byte
	for _, part := range strings.Split(s, ",") {
		scheme, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return nil, fmt.Errorf("%w: %s entries look like v1=<hex>", ErrMalformed, HeaderSignature)
		}
		if scheme != Scheme {
			continue
		}
		b, err := hex.DecodeString(value)
		if err != nil || len(b) != sha256.Size {
			return nil, fmt.Errorf("%w: %s v1 value must be %d hex characters", ErrMalformed, HeaderSignature, 2*sha256.Size)
		}
		out = append(out, b)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %s has no v1 signature", ErrMalformed, HeaderSignature)
	}
	return out, nil
}

// DefaultMaxBody is the largest body Middleware reads (the http executor
// sends tool parameters, well under this).
const DefaultMaxBody = 5 << 20

// Middleware verifies each request before passing it to next. The body is
// read (up to MaxBody bytes; larger is 413) and restored, so next reads it
// as usual. A request that fails verification gets 401 with a JSON body
// {"success": false, "error": "...", "error_type": "unauthorized"} and never
// reaches next.
type Middleware struct {
	Verifier Verifier
	// MaxBody caps the body read; zero means DefaultMaxBody.
	MaxBody int64
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Wrap returns next behind signature verification.
func (m Middleware) Wrap(next http.Handler) http.Handler {
	limit := m.MaxBody
	if limit <= 0 {
		limit = DefaultMaxBody
	}
	now := m.Now
	if now == nil {
		now = time.Now
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
		if err != nil {
			reject(w, http.StatusBadRequest, "could not read the request body")
			return
		}
		if int64(len(body)) > limit {
			reject(w, http.StatusRequestEntityTooLarge, "request body too large")
			return
		}
		if err := m.Verifier.Verify(r.Header.Get(HeaderTimestamp), r.Header.Get(HeaderSignature), body, now()); err != nil {
			reject(w, http.StatusUnauthorized, "invalid Baton signature")
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
}

// Handler is Middleware{Verifier: Verifier{Secrets: [][]byte{secret}}}.Wrap(next).
func Handler(secret []byte, next http.Handler) http.Handler {
	return Middleware{Verifier: Verifier{Secrets: [][]byte{secret}}}.Wrap(next)
}

func reject(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"success":false,"error":%q,"error_type":"unauthorized"}`+"\n", msg)
}
