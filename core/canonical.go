package core

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"sync"
	"unicode/utf8"
)

// The canonical encoder of generic JSON values. CanonicalJSON of a value
// made only of generic values (map[string]any, []any, string,
// json.Number, bool, nil) is what encoding/json writes for it without
// HTML escaping (keys sorted, no white space); appendCanonical writes the
// same bytes without reflection or intermediate copies, and can redact on
// the way (as CanonicalJSON of Redact's copy would read). Any other value,
// or a json.Number encoding/json would refuse, makes it report !ok, and
// the caller takes the encoding/json path, so its answer never differs.

// canonicalBufs recycles the buffers of hashes and size checks.
var canonicalBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// appendCanonical appends the canonical encoding of the generic value v
// to dst. With redact, the value of every sensitive key is written as
// RedactedValue, and redacted reports whether one was. ok is false when v
// holds a value that is not generic or a number encoding/json refuses.
func appendCanonical(dst []byte, v any, redact bool) (out []byte, redacted, ok bool) {
	switch t := v.(type) {
	case nil:
		return append(dst, "null"...), false, true
	case string:
		return appendJSONString(dst, t), false, true
	case bool:
		if t {
			return append(dst, "true"...), false, true
		}
		return append(dst, "false"...), false, true
	case json.Number:
		s := string(t)
		if s == "" {
			s = "0"
		}
		if !isValidJSONNumber(s) {
			return dst, false, false
		}
		return append(dst, s...), false, true
	case map[string]any:
		if t == nil && !redact {
			// Redact's copy of a nil map is an empty one.
			return append(dst, "null"...), false, true
		}
		var small [16]string
		keys := small[:0]
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, k)
			dst = append(dst, ':')
			if redact && IsSensitiveKey(k) {
				dst = appendJSONString(dst, RedactedValue)
				redacted = true
				continue
			}
			var r bool
			if dst, r, ok = appendCanonical(dst, t[k], redact); !ok {
				return dst, false, false
			}
			redacted = redacted || r
		}
		return append(dst, '}'), redacted, true
	case []any:
		if t == nil && !redact {
			return append(dst, "null"...), false, true
		}
		dst = append(dst, '[')
		for i, x := range t {
			if i > 0 {
				dst = append(dst, ',')
			}
			var r bool
			if dst, r, ok = appendCanonical(dst, x, redact); !ok {
				return dst, false, false
			}
			redacted = redacted || r
		}
		return append(dst, ']'), redacted, true
	}
	return dst, false, false
}

// withCanonical calls f with CanonicalJSON(v), or CanonicalJSON(Redact(v))
// with redact, and whether a value was redacted; f must not keep b, a
// pooled buffer. It fails only when v does not encode.
func withCanonical(v any, redact bool, f func(b []byte, redacted bool)) error {
	bp := canonicalBufs.Get().(*[]byte)
	defer canonicalBufs.Put(bp)
	b, redacted, ok := appendCanonical((*bp)[:0], v, redact)
	*bp = b[:0]
	if !ok {
		if redact {
			v, redacted = Redact(v)
		}
		var err error
		if b, err = CanonicalJSON(v); err != nil {
			return err
		}
	}
	f(b, redacted)
	return nil
}

// canonicalHash returns SHA256Tagged of CanonicalJSON(v), or of
// CanonicalJSON(Redact(v)) with redact, and whether anything was
// redacted.
func canonicalHash(v any, redact bool) (hash string, redacted bool) {
	_ = withCanonical(v, redact, func(b []byte, r bool) { hash, redacted = SHA256Tagged(b), r })
	return hash, redacted
}

// canonicalString returns CanonicalJSON(v), or CanonicalJSON(Redact(v))
// with redact, as a string, and whether a value was redacted.
func canonicalString(v any, redact bool) (s string, redacted bool) {
	_ = withCanonical(v, redact, func(b []byte, r bool) { s, redacted = string(b), r })
	return s, redacted
}

// canonicalSize returns len(CanonicalJSON(v)) and whether v encodes.
func canonicalSize(v any) (n int, ok bool) {
	err := withCanonical(v, false, func(b []byte, _ bool) { n = len(b) })
	return n, err == nil
}

// sha256TaggedString is SHA256Tagged of s.
func sha256TaggedString(s string) string {
	bp := canonicalBufs.Get().(*[]byte)
	defer canonicalBufs.Put(bp)
	b := append((*bp)[:0], s...)
	*bp = b[:0]
	return SHA256Tagged(b)
}

// SHA256Tagged returns "sha256:<hex>" of b.
func SHA256Tagged(b []byte) string {
	sum := sha256.Sum256(b)
	var out [7 + 2*sha256.Size]byte
	copy(out[:], "sha256:")
	hex.Encode(out[7:], sum[:])
	return string(out[:])
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as encoding/json writes a string without
// HTML escaping.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// isValidJSONNumber reports whether s is a JSON number literal, as
// encoding/json checks a json.Number before writing it.
func isValidJSONNumber(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == '-' {
		s = s[1:]
		if s == "" {
			return false
		}
	}
	switch {
	default:
		return false
	case s[0] == '0':
		s = s[1:]
	case '1' <= s[0] && s[0] <= '9':
		s = s[1:]
		for len(s) > 0 && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	}
	if len(s) >= 2 && s[0] == '.' && '0' <= s[1] && s[1] <= '9' {
		s = s[2:]
		for len(s) > 0 && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	}
	if len(s) >= 2 && (s[0] == 'e' || s[0] == 'E') {
		s = s[1:]
		if s[0] == '+' || s[0] == '-' {
			s = s[1:]
			if s == "" {
				return false
			}
		}
		for len(s) > 0 && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	}
	return s == ""
}
