package providers

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxErrorMessage is how many bytes of a provider's error message an
// Error keeps.
const MaxErrorMessage = 500

// Error is a failed model call: an HTTP error response or a network
// failure. Its text names the provider, the HTTP status, the provider's
// error type and message and the request id; it never holds an API key.
type Error struct {
	Provider string
	// Status is the HTTP status, or 0 when no response arrived.
	Status int
	// Code is the provider's error type or code (invalid_request_error,
	// ThrottlingException…), when the response named one.
	Code string
	// Message is the provider's error message, trimmed and scrubbed.
	Message   string
	RequestID string
	// Transient reports whether a retry may succeed (throttling, 5xx,
	// network failures, timeouts).
	Transient bool
	// RetryAfter is the delay the provider asked for, or 0.
	RetryAfter time.Duration
	// Err is the underlying failure of a request that got no response.
	Err error
	// MidStream reports an error the provider sent inside a streamed 2xx
	// response (an error event) rather than as the response's status.
	MidStream bool
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Provider)
	b.WriteString(": ")
	switch {
	case e.Status != 0:
		fmt.Fprintf(&b, "HTTP %d", e.Status)
		if e.Code != "" {
			fmt.Fprintf(&b, " (%s)", e.Code)
		}
		msg := e.Message
		if msg == "" {
			msg = "the response did not say why"
		}
		b.WriteString(": ")
		b.WriteString(msg)
		if e.Status == 401 || e.Status == 403 {
			b.WriteString(" (check the API key or credentials configured for this provider in the deployment)")
		}
	case e.Code != "":
		b.WriteString(e.Code)
		if e.Message != "" {
			b.WriteString(": ")
			b.WriteString(e.Message)
		}
	default:
		b.WriteString("request failed")
		if e.Message != "" {
			b.WriteString(": ")
			b.WriteString(e.Message)
		}
	}
	if e.MidStream {
		b.WriteString(" (sent in the response stream)")
	}
	if e.RequestID != "" {
		fmt.Fprintf(&b, " (request id %s)", e.RequestID)
	}
	return b.String()
}

// Unwrap returns the underlying network error, if any.
func (e *Error) Unwrap() error { return e.Err }

// TransientStatus reports whether an HTTP status is worth retrying: 408,
// 429 and every 5xx (Anthropic's 529 overloaded included).
func TransientStatus(status int) bool {
	return status == 408 || status == 429 || status >= 500
}

// permanentCodes are provider error codes that waiting cannot fix, even
// when they come with a status that is otherwise worth retrying: OpenAI
// answers 429 insufficient_quota when the account is out of credit or
// over its billing limit.
var permanentCodes = map[string]bool{
	"insufficient_quota": true,
}

// PermanentCode reports whether a provider error code means a retry
// cannot succeed, whatever the HTTP status.
func PermanentCode(code string) bool { return permanentCodes[code] }

// Transient reports whether a response with status and the provider's
// error code is worth retrying: a transient status (TransientStatus)
// whose code is not permanent (PermanentCode).
func Transient(status int, code string) bool {
	return TransientStatus(status) && !PermanentCode(code)
}

// ErrorFromBody reads the error type and message out of an error response
// body in the shapes providers use: {"error": {"type", "code",
// "message"}} (OpenAI, Anthropic), {"error": "text"} (Ollama),
// {"type", "message"} or {"message"} (vLLM, AWS). A body in none of these
// shapes is returned as text, whitespace collapsed. Both results are
// trimmed to MaxErrorMessage bytes.
func ErrorFromBody(body []byte) (code, message string) {
	var m map[string]any
	if err := json.Unmarshal(body, &m); err == nil && m != nil {
		str := func(o map[string]any, keys ...string) string {
			for _, k := range keys {
				if s, ok := o[k].(string); ok && strings.TrimSpace(s) != "" {
					return s
				}
			}
			return ""
		}
		switch e := m["error"].(type) {
		case map[string]any:
			code = str(e, "type", "code")
			message = str(e, "message")
		case string:
			message = e
		}
		if message == "" {
			message = str(m, "message", "Message", "detail")
		}
		if code == "" {
			code = str(m, "__type", "code")
			if t := str(m, "type"); code == "" && t != "error" {
				code = t
			}
		}
	}
	if message == "" {
		message = string(body)
	}
	return Trim(code, 100), Trim(message, MaxErrorMessage)
}

// Trim collapses whitespace and cuts s to at most n bytes on a rune
// boundary, marking the cut with an ellipsis.
func Trim(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Scrubber removes secrets from text that may reach an error or a log.
type Scrubber []string

// Scrub replaces every occurrence of a secret with "[redacted]".
func (s Scrubber) Scrub(text string) string {
	for _, sec := range s {
		if len(sec) >= 4 {
			text = strings.ReplaceAll(text, sec, "[redacted]")
		}
	}
	return text
}

// scrubbedError keeps an error's chain while scrubbing its text.
type scrubbedError struct {
	text string
	err  error
}

func (e scrubbedError) Error() string { return e.text }
func (e scrubbedError) Unwrap() error { return e.err }

// ScrubError returns err with every secret removed from its text; the
// chain (errors.Is, errors.As) is kept.
func (s Scrubber) ScrubError(err error) error {
	if err == nil {
		return nil
	}
	text := s.Scrub(err.Error())
	if text == err.Error() {
		return err
	}
	return scrubbedError{text: text, err: err}
}
