package core

import (
	"bytes"
	"encoding/json"
	"testing"
)

// canonicalCases are generic values whose encoding has edge cases:
// escapes, invalid UTF-8 (a lone continuation byte 0x80 among them),
// U+2028/U+2029, HTML characters, nil maps and slices, numbers as written
// (fractions and exponents with each end of the digit range) and the
// empty json.Number.
func canonicalCases() []any {
	return []any{
		nil, true, false, "", "plain", "<a&b>", "quote\" back\\slash", "ctl\x00\x01\x08\x0c\n\r\t\x1f\x7f",
		"bad\xffutf8\xc3", "cont\x80", "line\u2028para\u2029", "héllo 世界 🎉",
		json.Number("0"), json.Number("-1.5e+10"), json.Number("123456789012345678901234567890"), json.Number(""),
		json.Number("9"), json.Number("1.0"), json.Number("1.9"), json.Number("0.25"), json.Number("1.50"), json.Number("1.59"), json.Number("1E5"), json.Number("1e9"), json.Number("2e-0"),
		map[string]any(nil), []any(nil), map[string]any{}, []any{},
		map[string]any{"b": json.Number("2"), "a": []any{"x", nil, map[string]any{"z": true, "Z": false, "é": "é", "a\u2028": "k"}}},
		map[string]any{"api_key": "s3cret", "nested": map[string]any{"Password": "p", "list": []any{map[string]any{"session-id": json.Number("1")}}}, "ok": "v"},
	}
}

// TestAppendCanonicalMatchesEncodingJSON checks the canonical encoder
// against encoding/json (the definition of CanonicalJSON), with and
// without redaction, and that values it does not handle are refused.
func TestAppendCanonicalMatchesEncodingJSON(t *testing.T) {
	for _, v := range canonicalCases() {
		want, err := marshalNoEscape(v)
		if err != nil {
			t.Fatal(err)
		}
		got, red, ok := appendCanonical(nil, v, false)
		if !ok || red || !bytes.Equal(got, want) {
			t.Errorf("%#v: got %s (ok %v, redacted %v), want %s", v, got, ok, red, want)
		}
		rv, wantRed := Redact(v)
		wantR, _ := marshalNoEscape(rv)
		gotR, red, ok := appendCanonical(nil, v, true)
		if !ok || red != wantRed || !bytes.Equal(gotR, wantR) {
			t.Errorf("%#v redacted: got %s (ok %v, redacted %v), want %s (redacted %v)", v, gotR, ok, red, wantR, wantRed)
		}
		if h, r := canonicalHash(v, true); h != SHA256Tagged(wantR) || r != wantRed {
			t.Errorf("%#v: canonicalHash = %s, %v", v, h, r)
		}
		if s, _ := canonicalString(v, true); s != string(wantR) {
			t.Errorf("%#v: canonicalString = %s", v, s)
		}
		if n, ok := canonicalSize(v); !ok || n != len(want) {
			t.Errorf("%#v: canonicalSize = %d, %v", v, n, ok)
		}
	}
	for _, v := range []any{json.Number("1x"), json.Number("01"), json.Number("1x5"), json.Number("1."), json.Number("1e"), json.Number("1e+"), 3, 1.5, map[string]any{"a": []string{"x"}}, []any{struct{}{}}} {
		if b, _, ok := appendCanonical(nil, v, false); ok {
			t.Errorf("%#v: accepted as %s", v, b)
		}
	}
	// Values the encoder refuses still get CanonicalJSON's answer.
	v := map[string]any{"n": 3, "token": "t"}
	want, _ := CanonicalJSON(map[string]any{"n": json.Number("3"), "token": RedactedValue})
	if s, _ := canonicalString(v, true); s != string(want) {
		t.Errorf("fallback: %s, want %s", s, want)
	}
}

// FuzzCanonicalJSON compares the canonical encoder with encoding/json on
// decoded JSON documents.
func FuzzCanonicalJSON(f *testing.F) {
	f.Add([]byte(`{"b":[1,"x\u2028",null,true],"a":{"api-key":"k","c":-0.5e3}}`))
	f.Add([]byte(`"\ud800 <&>"`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		if err := decodeJSON(data, &v); err != nil {
			return
		}
		want, err := marshalNoEscape(v)
		if err != nil {
			t.Fatal(err)
		}
		got, _, ok := appendCanonical(nil, v, false)
		if !ok || !bytes.Equal(got, want) {
			t.Fatalf("got %s (ok %v), want %s", got, ok, want)
		}
		rv, wantRed := Redact(v)
		wantR, _ := marshalNoEscape(rv)
		if gotR, red, ok := appendCanonical(nil, v, true); !ok || red != wantRed || !bytes.Equal(gotR, wantR) {
			t.Fatalf("redacted: got %s, want %s", gotR, wantR)
		}
	})
}
