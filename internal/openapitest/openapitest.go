// Package openapitest checks HTTP traffic against Baton's OpenAPI
// document (events/openapi.json) with libopenapi-validator: requests and
// responses of the e2e suite, and the bodies of the schema-agreement
// test. It records which operations and statuses the traffic covered.
package openapitest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
)

// Checker validates exchanges against one document.
type Checker struct {
	v   validator.Validator
	ops map[string]*regexp.Regexp // "METHOD /path/{x}" → its path pattern

	mu       sync.Mutex
	seen     map[string]map[int]bool // operation → statuses answered
	problems []string
}

// New parses the document and builds its validator.
func New(doc []byte) (*Checker, error) {
	d, err := libopenapi.NewDocument(doc)
	if err != nil {
		return nil, err
	}
	v, errs := validator.NewValidator(d)
	if len(errs) > 0 {
		return nil, fmt.Errorf("validator: %v", errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		return nil, fmt.Errorf("the document is not valid OpenAPI: %s", describe(verrs))
	}
	m, err := d.BuildV3Model()
	if err != nil || m == nil {
		return nil, fmt.Errorf("model: %v", err)
	}
	c := &Checker{v: v, ops: map[string]*regexp.Regexp{}, seen: map[string]map[int]bool{}}
	for path, item := range m.Model.Paths.PathItems.FromOldest() {
		re := regexp.MustCompile("^" + regexp.MustCompile(`\\\{[^/]+\\\}`).ReplaceAllString(regexp.QuoteMeta(path), "[^/]+") + "$")
		for method := range item.GetOperations().FromOldest() {
			c.ops[strings.ToUpper(method)+" "+path] = re
		}
	}
	return c, nil
}

// Operation is the document's operation of a method and path ("" when
// none matches).
func (c *Checker) Operation(method, path string) string {
	for op, re := range c.ops {
		if strings.HasPrefix(op, method+" ") && re.MatchString(path) {
			return op
		}
	}
	return ""
}

// Operations lists the document's operations, sorted.
func (c *Checker) Operations() []string {
	var out []string
	for op := range c.ops {
		out = append(out, op)
	}
	sort.Strings(out)
	return out
}

// Request validates a request (its body read from body).
func (c *Checker) Request(req *http.Request, body []byte) error {
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(body))
	if ok, errs := c.v.ValidateHttpRequestSync(r); !ok {
		return fmt.Errorf("%s", describe(errs))
	}
	return nil
}

// Exchange checks one request and its answer: a request the document
// refuses must be answered with a 4xx; the answer to any request must be
// a documented status with a documented body. Route misses (404
// route_not_found, 405) are outside the operations and only their error
// shape is the API's.
func (c *Checker) Exchange(req *http.Request, reqBody []byte, resp *http.Response, respBody []byte) {
	if req.Method == http.MethodOptions || resp.Header.Get("X-Amzn-Errortype") != "" {
		return // a CORS preflight; an answer of API Gateway itself
	}
	path := strings.TrimPrefix(req.URL.Path, "/iam")
	op := c.Operation(req.Method, path)
	what := fmt.Sprintf("%s %s → %d", req.Method, req.URL.Path, resp.StatusCode)
	if op == "" {
		if resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusMethodNotAllowed && resp.StatusCode != http.StatusForbidden {
			c.problem("%s: no operation of the document, yet not a 404 or 405", what)
		}
		return
	}
	c.mu.Lock()
	if c.seen[op] == nil {
		c.seen[op] = map[int]bool{}
	}
	c.seen[op][resp.StatusCode] = true
	c.mu.Unlock()
	r := req.Clone(req.Context())
	r.URL.Path = path
	r.Body = io.NopCloser(bytes.NewReader(reqBody))
	if ok, errs := c.v.ValidateHttpRequestSync(r); !ok && resp.StatusCode < 400 {
		c.problem("%s: the document refuses the request (%s), the handler accepted it", what, describe(errs))
	}
	rr := *resp
	rr.Body = io.NopCloser(bytes.NewReader(respBody))
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		rr.Body = io.NopCloser(strings.NewReader("")) // a stream's body is its reader's
	}
	r.Body = io.NopCloser(bytes.NewReader(reqBody))
	if ok, errs := c.v.ValidateHttpResponse(r, &rr); !ok {
		c.problem("%s: %s (body %.300s)", what, describe(errs), respBody)
	}
}

func describe[E interface{ Error() string }](errs []E) string {
	var s []string
	for _, e := range errs {
		s = append(s, e.Error())
	}
	return strings.Join(s, "; ")
}

func (c *Checker) problem(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// Problems are the violations seen so far.
func (c *Checker) Problems() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.problems...)
}

// Unseen lists the operations no exchange reached.
func (c *Checker) Unseen() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, op := range c.Operations() {
		if len(c.seen[op]) == 0 {
			out = append(out, op)
		}
	}
	return out
}

// Seen is each operation's answered statuses.
func (c *Checker) Seen() map[string][]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string][]int{}
	for op, st := range c.seen {
		for s := range st {
			out[op] = append(out[op], s)
		}
		sort.Ints(out[op])
	}
	return out
}

// Transport wraps next: every exchange whose request match accepts is
// checked (bodies are read and put back; a streamed answer's body is
// left to its reader).
func (c *Checker) Transport(next http.RoundTripper, match func(*http.Request) bool) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if !match(req) {
			return next.RoundTrip(req)
		}
		var reqBody []byte
		if req.Body != nil {
			b, err := io.ReadAll(req.Body)
			if err != nil {
				return nil, err
			}
			_ = req.Body.Close()
			reqBody = b
			req.Body = io.NopCloser(bytes.NewReader(b))
		}
		resp, err := next.RoundTrip(req)
		if err != nil {
			return resp, err
		}
		var respBody []byte
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			b, err := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if err != nil {
				return nil, err
			}
			respBody = b
			resp.Body = io.NopCloser(bytes.NewReader(b))
		}
		c.Exchange(req, reqBody, resp, respBody)
		return resp, nil
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
