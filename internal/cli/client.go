package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// APIError is an error response of the API: its status and the code and
// message of its error body.
type APIError struct {
	Status  int
	Code    string
	Message string
	// Details is the error's details object, when it has one.
	Details map[string]any
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s: %s (HTTP %d)", e.Code, e.Message, e.Status)
}

// client calls the public HTTP API.
type client struct {
	base  string
	token string
	http  *http.Client
}

// request sends one API request; in (when not nil) is the JSON body and
// out (when not nil) receives the JSON response.
func (c *client) request(ctx context.Context, method, path string, query url.Values, in, out any) error {
	resp, err := c.send(ctx, method, path, query, in, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	dec := json.NewDecoder(resp.Body)
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("%s %s: the response is not the JSON expected: %w", method, path, err)
	}
	return nil
}

// send sends a request and returns a 2xx response, or the API's error.
func (c *client) send(ctx context.Context, method, path string, query url.Values, in any, hdr http.Header) (*http.Response, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, fmt.Errorf("bad URL %q: %w", u, err)
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil, err
		}
		return nil, &reachError{base: c.base, err: unwrapURL(err)}
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var e struct {
		Error struct {
			Code    string         `json:"code"`
			Message string         `json:"message"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	ae := &APIError{Status: resp.StatusCode}
	if json.Unmarshal(raw, &e) == nil && e.Error.Code != "" {
		ae.Code, ae.Message, ae.Details = e.Error.Code, e.Error.Message, e.Error.Details
	} else {
		ae.Code = "http_" + fmt.Sprint(resp.StatusCode)
		ae.Message = strings.TrimSpace(string(raw))
		if ae.Message == "" {
			ae.Message = http.StatusText(resp.StatusCode)
		}
	}
	return nil, ae
}

// reachError is a request that got no answer from the API.
type reachError struct {
	base string
	err  error
}

func (e *reachError) Error() string { return fmt.Sprintf("cannot reach %s: %v", e.base, e.err) }
func (e *reachError) Unwrap() error { return e.err }

func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// runPath is the path of a run's route; ids are escaped.
func runPath(runID string, rest ...string) string {
	p := "/v1/runs/" + url.PathEscape(runID)
	for _, r := range rest {
		p += "/" + url.PathEscape(r)
	}
	return p
}
