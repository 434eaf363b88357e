package providers

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"

	"github.com/baton-agents/baton/core"
)

// Codec is how an HTTP provider encodes a model request and decodes the
// reply, buffered and streamed.
type Codec struct {
	// Build encodes req with the wire names of its tools. stream asks for
	// the streamed form, which differs from the buffered one only by the
	// provider's stream flags.
	Build func(req core.ModelRequest, names *ToolNames, stream bool) ([]byte, error)
	// Parse decodes a buffered response, given the requested model.
	Parse func(resp Response, model string, names *ToolNames) (core.ModelReply, error)
	// Stream, when not nil, returns the decoder of one attempt's streamed
	// response: resp holds its status, headers and request id, not its
	// body.
	Stream func(resp Response, model string, names *ToolNames) StreamDecoder
}

// StreamDecoder assembles one model reply from the server-sent events of
// a streamed response.
type StreamDecoder interface {
	// Event decodes one event, hands each text or reasoning delta it
	// holds to core.EmitToken at once, and reports whether the event ends
	// the stream. An error stops the stream: an *Error (MidStream) for an
	// error the provider sent, transient when a retry may succeed, and a
	// ReplyError for an event that does not decode.
	Event(ctx context.Context, ev Event) (done bool, err error)
	// Reply returns the reply of a stream that ended, the same a
	// buffered call would have returned for the same completion; the call
	// took attempts attempts.
	Reply(attempts int) (core.ModelReply, error)
}

// errStreamDone stops ReadSSE at a stream's end event.
var errStreamDone = errors.New("end of stream")

// Stream POSTs body, the streamed form of a request, to BaseURL+path with
// Accept: text/event-stream, and decodes each attempt's 2xx response
// event by event with a decoder from codec.Stream, which emits the deltas
// as they arrive. Attempts follow the retry policy, as PostJSON's do; a
// stream that fails fails its attempt: an error event (an *Error, retried
// when transient), a stream cut off before its end event or a read error
// (transient *Errors), an event that does not decode (a ReplyError, not
// retried). A retried attempt streams again from the start, so deltas
// already emitted are emitted again. A 2xx response whose content type
// is application/json (a compatible server that ignores the stream flag)
// is decoded by codec.Parse and its content emitted as one delta.
func (h *HTTP) Stream(ctx context.Context, path string, body []byte, model string, names *ToolNames, codec Codec) (core.ModelReply, error) {
	var dec StreamDecoder
	var whole Response
	attempts, err := h.post(ctx, path, body, "text/event-stream", func(ctx context.Context, resp *http.Response, reqID string) error {
		dec = nil
		meta := Response{Status: resp.StatusCode, Header: resp.Header, RequestID: reqID}
		if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/json" {
			data, err := h.readBody(resp, reqID)
			if err != nil {
				return err
			}
			whole = meta
			whole.Body = data
			return nil
		}
		d := codec.Stream(meta, model, names)
		if err := h.readEvents(ctx, resp.Body, reqID, d); err != nil {
			return err
		}
		// Let the connection be reused: the stream has ended.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		dec = d
		return nil
	})
	if err != nil {
		return core.ModelReply{}, err
	}
	if dec != nil {
		return dec.Reply(attempts)
	}
	whole.Attempts = attempts
	reply, err := codec.Parse(whole, model, names)
	if err != nil {
		return core.ModelReply{}, err
	}
	core.EmitToken(ctx, core.TokenDelta{Kind: core.DeltaToken, Text: reply.Content})
	return reply, nil
}

// readEvents hands the events of body to d until d sees the end event,
// and returns the attempt's error: d's own, a transient *Error when body
// fails or ends before the end event, a ReplyError when it is too large.
func (h *HTTP) readEvents(ctx context.Context, body io.Reader, reqID string, d StreamDecoder) error {
	var done bool
	var decErr error
	err := ReadSSE(body, func(ev Event) error {
		done, decErr = d.Event(ctx, ev)
		if decErr != nil {
			return decErr
		}
		if done {
			return errStreamDone
		}
		return nil
	})
	switch {
	case decErr != nil:
		var pe *Error
		if errors.As(decErr, &pe) {
			pe.Message = h.scrubber().Scrub(pe.Message)
		}
		return decErr
	case done:
		return nil
	case errors.Is(err, ErrStreamTooLarge):
		return ReplyError(h.Provider, reqID, "%v", err)
	case err != nil:
		return h.readError(reqID, "reading the response stream", err)
	}
	return TruncatedStream(h.Provider, reqID)
}

// TruncatedStream is the transient *Error of a streamed response that
// ended before its end event: the connection dropped, and a retry may
// get the whole reply.
func TruncatedStream(provider, reqID string) *Error {
	return &Error{Provider: provider, RequestID: reqID, Transient: true,
		Message: "the response stream ended before the reply was complete"}
}

// errorTypeStatus is the HTTP status each error type of the providers
// comes with when it is a response's status, for telling whether the
// same error sent inside a stream is transient.
var errorTypeStatus = map[string]int{
	// Anthropic, and OpenAI's invalid_request_error.
	"invalid_request_error": 400,
	"authentication_error":  401,
	"permission_error":      403,
	"not_found_error":       404,
	"request_too_large":     413,
	"rate_limit_error":      429,
	"api_error":             500,
	"timeout_error":         504,
	"overloaded_error":      529,
	// OpenAI.
	"server_error":        500,
	"rate_limit_exceeded": 429,
	"requests":            429,
	"tokens":              429,
	"insufficient_quota":  429,
}

// StreamError is the *Error of an error a provider sent inside a
// streamed 2xx response, in one of the shapes ErrorFromBody reads. With
// no response status to go by, it is transient when the status its error
// type stands for (or a numeric error code, as vLLM sends) is: Anthropic's
// overloaded_error, rate_limit_error and api_error, OpenAI's server_error
// and rate limits are; invalid requests, insufficient_quota and types
// Baton does not know are not.
func StreamError(provider, reqID string, data []byte) *Error {
	code, msg := ErrorFromBody(data)
	status := errorTypeStatus[code]
	if status == 0 {
		var body struct {
			Error struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if json.Unmarshal(data, &body) == nil && body.Error.Code >= 400 && body.Error.Code <= 599 {
			status = body.Error.Code
		}
	}
	return &Error{Provider: provider, Code: code, Message: msg, RequestID: reqID, MidStream: true, Transient: Transient(status, code)}
}
