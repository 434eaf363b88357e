// Package console serves the web console: a single-page client of the
// public HTTP API, built from console/ (Vite) into dist/ and embedded, so
// the API function and baton dev serve it from the API's own origin with
// no other infrastructure. It has no route of its own but its assets:
// the page calls the same /v1 routes as any client, with the token the
// user signs in with.
package console

import (
	"embed"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
)

//go:embed dist
var dist embed.FS

// Prefix is the path the console is served under.
const Prefix = "/console/"

// Headers every console response carries. The policy allows scripts,
// styles and fetches from the page's own origin only (no inline script
// or style, no eval, no other origin, no framing); run content is always
// rendered as text, never as markup.
var Headers = map[string]string{
	"Content-Security-Policy":    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
	"X-Content-Type-Options":     "nosniff",
	"Referrer-Policy":            "no-referrer",
	"X-Frame-Options":            "DENY",
	"Cross-Origin-Opener-Policy": "same-origin",
}

// Asset is one response of the console.
type Asset struct {
	Status  int
	Body    []byte
	Headers map[string]string
}

// Serve answers a GET or HEAD of p, a path under the console (with or
// without Prefix): the page for the console's root, a built asset by its
// name, 404 for anything else. /console (no slash) redirects to
// /console/, relatively, so it works behind a base path too.
func Serve(method, p string) Asset {
	h := map[string]string{}
	for k, v := range Headers {
		h[k] = v
	}
	if method != http.MethodGet && method != http.MethodHead {
		h["Allow"] = "GET, HEAD"
		h["Content-Type"] = "text/plain; charset=utf-8"
		return Asset{Status: http.StatusMethodNotAllowed, Body: []byte("method not allowed\n"), Headers: h}
	}
	p = "/" + strings.TrimLeft(p, "/")
	if p == strings.TrimSuffix(Prefix, "/") {
		h["Location"] = "console/"
		return Asset{Status: http.StatusMovedPermanently, Headers: h}
	}
	name, ok := strings.CutPrefix(p, Prefix)
	if !ok {
		return notFound(h)
	}
	if name == "" {
		name = "index.html"
	}
	if !fs.ValidPath(name) || strings.HasPrefix(path.Base(name), ".") {
		return notFound(h)
	}
	b, err := fs.ReadFile(dist, "dist/"+name)
	if err != nil {
		return notFound(h)
	}
	h["Content-Type"] = contentType(name)
	if strings.HasPrefix(name, "assets/") {
		// Built assets are named by their content's hash.
		h["Cache-Control"] = "public, max-age=31536000, immutable"
	} else {
		h["Cache-Control"] = "no-cache"
	}
	if method == http.MethodHead {
		b = nil
	}
	return Asset{Status: http.StatusOK, Body: b, Headers: h}
}

func notFound(h map[string]string) Asset {
	h["Content-Type"] = "text/plain; charset=utf-8"
	return Asset{Status: http.StatusNotFound, Body: []byte("not found\n"), Headers: h}
}

func contentType(name string) string {
	switch path.Ext(name) {
	case ".js", ".mjs":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".html":
		return "text/html; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".json", ".map":
		return "application/json"
	}
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}
