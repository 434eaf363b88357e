package toolsig

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

var (
	secret = []byte("s3cret-for-tests")
	body   = []byte(`{"tool_name":"ability/x","tool_call_id":"c1","run_id":"r1","session_id":"s1","parameters":{"q":"a"}}`)
	t0     = time.Unix(1_750_000_000, 0)
)

func TestSignKnownVector(t *testing.T) {
	// Computed independently: printf '1.{}' | openssl dgst -sha256 -hmac key
	want := "v1=1ba6b8171186efc613e8bcc0cbdab2748f24984d7c5a84faa2637afa0e40d224"
	if got := Sign([]byte("key"), 1, []byte("{}")); got != want {
		t.Fatalf("Sign = %q, want %q", got, want)
	}
}

func TestVerify(t *testing.T) {
	ts := strconv.FormatInt(t0.Unix(), 10)
	sig := Sign(secret, t0.Unix(), body)
	old := t0.Add(-Tolerance - time.Second)
	future := t0.Add(Tolerance + time.Second)
	cases := []struct {
		name      string
		secret    []byte
		ts, sig   string
		body      []byte
		now       time.Time
		want      error
		wantMatch string
	}{
		{"valid", secret, ts, sig, body, t0, nil, ""},
		{"valid at the edge of the window (old)", secret, ts, sig, body, t0.Add(Tolerance), nil, ""},
		{"valid at the edge of the window (future)", secret, ts, sig, body, t0.Add(-Tolerance), nil, ""},
		{"valid among several signatures", secret, ts, "v1=" + strings.Repeat("0", 64) + ", " + sig, body, t0, nil, ""},
		{"unknown scheme skipped", secret, ts, "v0=zz," + sig, body, t0, nil, ""},
		{"tampered body", secret, ts, sig, []byte(strings.Replace(string(body), `"a"`, `"b"`, 1)), t0, ErrMismatch, ""},
		{"wrong secret", []byte("another-secret"), ts, sig, body, t0, ErrMismatch, ""},
		{"empty secret", nil, ts, sig, body, t0, ErrMismatch, ""},
		{"timestamp changed", secret, strconv.FormatInt(t0.Unix()+1, 10), sig, body, t0, ErrMismatch, ""},
		{"stale (older than 5 minutes)", secret, ts, sig, body, future, ErrExpired, "window"},
		{"future (newer than 5 minutes)", secret, ts, sig, body, old, ErrExpired, "window"},
		{"missing timestamp", secret, "", sig, body, t0, ErrMalformed, "missing"},
		{"timestamp not a number", secret, "12a", sig, body, t0, ErrMalformed, "unix seconds"},
		{"signed timestamp", secret, "+" + ts, sig, body, t0, ErrMalformed, ""},
		{"timestamp with spaces", secret, " " + ts, sig, body, t0, ErrMalformed, ""},
		{"huge timestamp", secret, strings.Repeat("9", 30), sig, body, t0, ErrMalformed, ""},
		{"missing signature", secret, ts, "", body, t0, ErrMalformed, "missing"},
		{"no scheme", secret, ts, strings.TrimPrefix(sig, "v1="), body, t0, ErrMalformed, ""},
		{"not hex", secret, ts, "v1=" + strings.Repeat("z", 64), body, t0, ErrMalformed, "hex"},
		{"short", secret, ts, sig[:20], body, t0, ErrMalformed, "hex"},
		{"only another scheme", secret, ts, "v2=" + strings.Repeat("a", 64), body, t0, ErrMalformed, "no v1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Verify(c.secret, c.ts, c.sig, c.body, c.now)
			if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
				t.Fatalf("Verify = %v, want %v", err, c.want)
			}
			if c.wantMatch != "" && !strings.Contains(err.Error(), c.wantMatch) {
				t.Fatalf("error %q does not mention %q", err, c.wantMatch)
			}
			if err != nil && strings.Contains(err.Error(), string(secret)) {
				t.Fatalf("error leaks the secret: %v", err)
			}
		})
	}
}

func TestVerifierRotationAndTolerance(t *testing.T) {
	ts := strconv.FormatInt(t0.Unix(), 10)
	sig := Sign([]byte("old-secret"), t0.Unix(), body)
	v := Verifier{Secrets: [][]byte{[]byte("new-secret"), []byte("old-secret")}}
	if err := v.Verify(ts, sig, body, t0); err != nil {
		t.Fatalf("old secret during rotation: %v", err)
	}
	v.Tolerance = time.Minute
	if err := v.Verify(ts, sig, body, t0.Add(2*time.Minute)); !errors.Is(err, ErrExpired) {
		t.Fatalf("custom tolerance: %v", err)
	}
}

func TestSignRequestRoundTrip(t *testing.T) {
	h := http.Header{}
	SignRequest(h, secret, t0, body)
	if h.Get(HeaderTimestamp) != strconv.FormatInt(t0.Unix(), 10) {
		t.Fatalf("timestamp header %q", h.Get(HeaderTimestamp))
	}
	if err := Verify(secret, h.Get(HeaderTimestamp), h.Get(HeaderSignature), body, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
}

func TestMiddleware(t *testing.T) {
	var reached []string
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		reached = append(reached, string(b))
		w.WriteHeader(http.StatusNoContent)
	})
	h := Middleware{Verifier: Verifier{Secrets: [][]byte{secret}}, MaxBody: 1024, Now: func() time.Time { return t0 }}.Wrap(next)
	send := func(b []byte, mutate func(http.Header)) int {
		req := httptest.NewRequest(http.MethodPost, "/tool", strings.NewReader(string(b)))
		SignRequest(req.Header, secret, t0, b)
		if mutate != nil {
			mutate(req.Header)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusNoContent && !strings.Contains(rec.Body.String(), `"error_type":"unauthorized"`) {
			t.Errorf("rejection body %q", rec.Body.String())
		}
		return rec.Code
	}
	if c := send(body, nil); c != http.StatusNoContent {
		t.Fatalf("valid request: %d", c)
	}
	if len(reached) != 1 || reached[0] != string(body) {
		t.Fatalf("next did not see the body: %q", reached)
	}
	if c := send(body, func(h http.Header) { h.Set(HeaderSignature, Sign([]byte("nope"), t0.Unix(), body)) }); c != http.StatusUnauthorized {
		t.Fatalf("bad signature: %d", c)
	}
	if c := send(body, func(h http.Header) { h.Del(HeaderTimestamp) }); c != http.StatusUnauthorized {
		t.Fatalf("missing timestamp: %d", c)
	}
	if c := send([]byte(strings.Repeat("x", 2048)), nil); c != http.StatusRequestEntityTooLarge {
		t.Fatalf("large body: %d", c)
	}
	if len(reached) != 1 {
		t.Fatalf("a rejected request reached the handler: %d", len(reached))
	}
	if c := Handler(secret, next); c == nil {
		t.Fatal("Handler returned nil")
	}
}
