package httpapi

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/baton-agents/baton/core"
)

// Page sizes of GET /v1/runs.
const (
	defaultRunsLimit = 20
	maxRunsLimit     = 100
)

// listRuns answers GET /v1/runs?status=&agent=&since=&until=&top_level=&parent=&forked_from=&limit=&cursor=:
// the tenant's runs, newest first, as {"runs": […], "next_cursor": "…" |
// null}. The answer carries an ETag of its body; a request whose
// If-None-Match names it gets 304 and no body (a client polling the list
// downloads it again only when a run on it changed).
func (a *API) listRuns(ctx context.Context, r *request, _ []string) (int, any, error) {
	q, err := runListQuery(r)
	if err != nil {
		return 0, nil, err
	}
	page, err := a.Runner.List(ctx, r.tenant, q)
	if errors.Is(err, core.ErrInvalidInput) {
		return 0, nil, errf(http.StatusBadRequest, "invalid_cursor", "cursor is not a next_cursor this list returned")
	}
	if errors.Is(err, core.ErrNotFound) {
		return 0, nil, errf(http.StatusNotFound, "not_found", "run %s not found", cmp.Or(q.Parent, q.ForkedFrom))
	}
	if err != nil {
		return 0, nil, err
	}
	var next *string
	if page.Next != "" {
		next = &page.Next
	}
	body, err := json.Marshal(map[string]any{"runs": page.Runs, "next_cursor": next})
	if err != nil {
		return 0, nil, err
	}
	sum := sha256.Sum256(body)
	etag := `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`
	hdr := map[string]string{"ETag": etag, "Cache-Control": "private, no-cache"}
	if etagMatches(r.header("If-None-Match"), etag) {
		return http.StatusNotModified, rawBody{headers: hdr}, nil
	}
	return http.StatusOK, rawBody{headers: hdr, body: body}, nil
}

// etagMatches says whether an If-None-Match header names etag (weak
// comparison: W/ prefixes are ignored; * matches any).
func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}

// runListQuery reads the list's query parameters.
func runListQuery(r *request) (core.RunListQuery, error) {
	limit, err := intQuery(r, "limit", defaultRunsLimit, 1, maxRunsLimit)
	if err != nil {
		return core.RunListQuery{}, err
	}
	q := core.RunListQuery{Limit: limit}
	status, _ := r.query("status")
	if status != "" && !slices.Contains(core.RunStatuses, core.RunStatus(status)) {
		names := make([]string, len(core.RunStatuses))
		for i, s := range core.RunStatuses {
			names[i] = string(s)
		}
		return q, errf(http.StatusBadRequest, "invalid_query", "status must be one of %s", strings.Join(names, ", "))
	}
	q.Status = core.RunStatus(status)
	q.Cursor, _ = r.query("cursor")
	q.Agent, _ = r.query("agent")
	q.Parent, _ = r.query("parent")
	q.ForkedFrom, _ = r.query("forked_from")
	for name, t := range map[string]*time.Time{"since": &q.Since, "until": &q.Until} {
		v, _ := r.query(name)
		if v == "" {
			continue
		}
		if *t, err = time.Parse(time.RFC3339Nano, v); err != nil {
			return q, errf(http.StatusBadRequest, "invalid_query", "%s must be an RFC 3339 time (2026-03-02T09:00:00Z), got %q", name, v)
		}
	}
	switch v, _ := r.query("top_level"); v {
	case "", "false":
	case "true":
		q.TopLevel = true
	default:
		return q, errf(http.StatusBadRequest, "invalid_query", "top_level must be true or false, got %q", v)
	}
	if q.TopLevel && q.Parent != "" {
		return q, errf(http.StatusBadRequest, "invalid_query", "top_level=true and parent exclude each other: a child run is never top-level")
	}
	return q, nil
}
