package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// CORS: a browser frontend on an allowed origin (Config.CORSOrigins) may
// call every public route. Preflights (OPTIONS) are answered here with
// the route's methods, and every answer — errors included, so a page can
// read why — carries Access-Control-Allow-Origin for an allowed Origin
// only: the origin itself, never a wildcard, and never with
// Access-Control-Allow-Credentials (callers send bearer credentials, not
// cookies). Other origins get no CORS headers (a browser then refuses the
// response); requests without an Origin are unaffected.

// corsRequestHeaders are the request headers a page may send: Baton's
// own, A2A's (the official A2A JS client sends A2A-Version on every
// request, the agent card's included), W3C trace context (browser
// OpenTelemetry instrumentation adds it to every fetch) and
// If-None-Match (a conditional read of the run list).
const corsRequestHeaders = "Authorization, Content-Type, Accept, Idempotency-Key, Last-Event-ID, A2A-Version, A2A-Extensions, traceparent, tracestate, If-None-Match"

// corsExposedHeaders are the response headers a page may read.
const corsExposedHeaders = "Retry-After, Location, Idempotent-Replayed, X-Request-Id, ETag, A2A-Extensions"

// corsMethods returns the methods of the routes path matches (none: not
// a route CORS applies to).
func (a *API) corsMethods(path string) []string {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	var out []string
	for _, rt := range a.routes() {
		if _, ok := match(rt.parts, segs); ok && !slices.Contains(out, rt.method) {
			out = append(out, rt.method)
		}
	}
	return out
}

func (a *API) corsRoute(path string) bool { return len(a.corsMethods(path)) > 0 }

// allowedOrigin returns the request's Origin when it is allowed on its
// route, else "".
func (a *API) allowedOrigin(r *request) string {
	origin := r.header("Origin")
	if origin == "" || !a.corsRoute(r.Path) {
		return ""
	}
	for _, o := range a.Config.CORSOrigins {
		if o == "*" || strings.EqualFold(o, origin) {
			return origin
		}
	}
	return ""
}

// originRefused says why a browser's origin is refused and how to allow
// it.
func originRefused(origin string) string {
	if origin == "" {
		return "a CORS preflight needs an Origin header"
	}
	return fmt.Sprintf("origin %s may not call this API from a browser: allow it with baton dev --cors-origins %s (or BATON_CORS_ORIGINS; on AWS the CDK context corsOrigins)", origin, origin)
}

// corsHeaders adds the CORS response headers for an allowed origin. A
// browser refuses the answer to another origin without saying why to
// the page, so the first refusal of each origin is logged with the fix.
func (a *API) corsHeaders(r *request, h map[string]string) {
	if origin := a.allowedOrigin(r); origin != "" {
		h["Access-Control-Allow-Origin"] = origin
		h["Access-Control-Expose-Headers"] = corsExposedHeaders
		h["Vary"] = "Origin"
		return
	}
	if origin := r.header("Origin"); origin != "" && a.corsRoute(r.Path) && a.Log != nil {
		if _, logged := refusedOrigins.LoadOrStore(origin, true); !logged {
			a.Log.Warn("CORS: a browser will refuse this answer", "origin", origin, "path", r.Path, "hint", originRefused(origin))
		}
	}
}

// refusedOrigins are the origins whose refusal was logged.
var refusedOrigins sync.Map

// preflight answers OPTIONS on a route: 204 with the route's methods and
// the allowed headers for an allowed origin, 403 otherwise. ok is false
// for requests that are not a preflight of a route.
func (a *API) preflight(r *request) (status int, body []byte, hdr map[string]string, ok bool) {
	if r.HTTPMethod != http.MethodOptions {
		return 0, nil, nil, false
	}
	methods := a.corsMethods(r.Path)
	if len(methods) == 0 {
		return 0, nil, nil, false
	}
	origin := a.allowedOrigin(r)
	if origin == "" {
		msg := originRefused(r.header("Origin"))
		if a.Log != nil {
			a.Log.Warn("CORS preflight refused", "origin", r.header("Origin"), "path", r.Path, "hint", msg)
		}
		body, _ := json.Marshal(map[string]any{"error": map[string]any{"code": "origin_not_allowed", "message": msg}})
		return http.StatusForbidden, body, map[string]string{"Vary": "Origin"}, true
	}
	return http.StatusNoContent, nil, map[string]string{
		"Access-Control-Allow-Origin":  origin,
		"Access-Control-Allow-Methods": strings.Join(methods, ", ") + ", OPTIONS",
		"Access-Control-Allow-Headers": corsRequestHeaders,
		"Access-Control-Max-Age":       "600",
		"Vary":                         "Origin",
	}, true
}
