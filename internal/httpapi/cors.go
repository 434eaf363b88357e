package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
)

// CORS: a browser frontend on an allowed origin (Config.CORSOrigins) may
// call the routes a browser streams from, POST /v1/agents/{agent}/agui
// and GET /v1/runs/{run_id}/stream. Their preflight (OPTIONS) is answered
// here, and their responses carry Access-Control-Allow-Origin for an
// allowed Origin only. Other origins get no CORS headers (a browser then
// refuses the response); requests without an Origin are unaffected.

// corsRoute reports whether path is a route CORS applies to.
func corsRoute(path string) bool {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	_, run := match(streamRoute, segs)
	_, agui := match(aguiRoute, segs)
	return run || agui
}

// allowedOrigin returns the request's Origin when it is allowed on its
// route, else "".
func (a *API) allowedOrigin(r *request) string {
	origin := r.header("Origin")
	if origin == "" || !corsRoute(r.Path) {
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
		h["Vary"] = "Origin"
		return
	}
	if origin := r.header("Origin"); origin != "" && corsRoute(r.Path) && a.Log != nil {
		if _, logged := refusedOrigins.LoadOrStore(origin, true); !logged {
			a.Log.Warn("CORS: a browser will refuse this answer", "origin", origin, "path", r.Path, "hint", originRefused(origin))
		}
	}
}

// refusedOrigins are the origins whose refusal was logged.
var refusedOrigins sync.Map

// preflight answers OPTIONS on a CORS route: 204 with the allowed
// methods and headers for an allowed origin, 403 otherwise. ok is false
// for requests that are not a preflight of a CORS route.
func (a *API) preflight(r *request) (status int, body []byte, hdr map[string]string, ok bool) {
	if r.HTTPMethod != http.MethodOptions || !corsRoute(r.Path) {
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
	method := http.MethodGet
	if _, agui := match(aguiRoute, strings.Split(strings.Trim(r.Path, "/"), "/")); agui {
		method = http.MethodPost
	}
	return http.StatusNoContent, nil, map[string]string{
		"Access-Control-Allow-Origin":  origin,
		"Access-Control-Allow-Methods": method + ", OPTIONS",
		"Access-Control-Allow-Headers": "Authorization, Content-Type, Accept, Last-Event-ID",
		"Access-Control-Max-Age":       "600",
		"Vary":                         "Origin",
	}, true
}
