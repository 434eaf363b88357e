package httpapi

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/baton-agents/baton/core"
)

// Long-term memory (core/memory.go): a subject's memories, read and
// erased. Every route works in the caller's tenant, on one subject: the
// caller's own (core.DefaultMemorySubject) unless ?subject= names
// another, which needs ScopeMemoriesSubject.

// Page sizes of GET /v1/memories.
const (
	defaultMemoriesLimit = 50
	maxMemoriesLimit     = 100
)

// memoryView is a memory as the API answers it (without its vector).
type memoryView struct {
	ID          string    `json:"id"`
	Text        string    `json:"text"`
	Subject     string    `json:"subject"`
	Source      string    `json:"source"`
	SourceRunID string    `json:"source_run_id"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// memoryStore is the deployment's memory store (API.Memories).
func (a *API) memoryStore() (core.MemoryStore, error) {
	if a.Memories == nil {
		return nil, errf(http.StatusNotImplemented, "not_implemented", "this deployment keeps no memories")
	}
	return a.Memories, nil
}

// memoryScope is the scope a memory request names: the caller's tenant
// and ?subject=, the caller's own subject when it is absent. A subject
// that is not the caller's own needs ScopeMemoriesSubject.
func (a *API) memoryScope(r *request) (core.MemoryScope, error) {
	own := core.DefaultMemorySubject(r.principal())
	subject, named := r.query("subject")
	if !named {
		if own == "" {
			return core.MemoryScope{}, errf(http.StatusBadRequest, "invalid_request", "the caller has no identity of its own to use as the memory subject: name one with ?subject=")
		}
		subject = own
	}
	if err := core.ValidateSubject(subject); err != nil {
		return core.MemoryScope{}, err
	}
	if subject != own && !slices.Contains(r.caller.Scopes, ScopeMemoriesSubject) {
		return core.MemoryScope{}, errf(http.StatusForbidden, "forbidden", "naming a memory subject other than the caller's own (%s) needs the %s scope", own, ScopeMemoriesSubject)
	}
	return core.MemoryScope{Tenant: r.tenant, Subject: subject}, nil
}

// listMemories answers GET /v1/memories?subject=&cursor=&limit=: a page
// of the subject's memories in id order, as {"memories": […],
// "next_cursor": "…"} ("" on the last page).
func (a *API) listMemories(ctx context.Context, r *request, _ []string) (int, any, error) {
	scope, err := a.memoryScope(r)
	if err != nil {
		return 0, nil, err
	}
	limit, err := intQuery(r, "limit", defaultMemoriesLimit, 1, maxMemoriesLimit)
	if err != nil {
		return 0, nil, err
	}
	ms, err := a.memoryStore()
	if err != nil {
		return 0, nil, err
	}
	cursor, _ := r.query("cursor")
	page, next, err := ms.Memories(ctx, scope, cursor, limit)
	if errors.Is(err, core.ErrInvalidInput) && cursor != "" {
		return 0, nil, errf(http.StatusBadRequest, "invalid_cursor", "cursor is not a next_cursor this list returned")
	}
	if err != nil {
		return 0, nil, err
	}
	out := make([]memoryView, len(page))
	for i, m := range page {
		out[i] = memoryView{ID: m.ID, Text: m.Text, Subject: m.Subject, Source: m.Source, SourceRunID: m.SourceRunID, CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt}
	}
	return http.StatusOK, map[string]any{"memories": out, "next_cursor": next}, nil
}

// deleteMemory answers DELETE /v1/memories/{id}?subject=: 204, or 404
// when the subject has no such memory.
func (a *API) deleteMemory(ctx context.Context, r *request, p []string) (int, any, error) {
	scope, err := a.memoryScope(r)
	if err != nil {
		return 0, nil, err
	}
	ms, err := a.memoryStore()
	if err != nil {
		return 0, nil, err
	}
	// An id no memory can have (too long, not printable) names none.
	id := p[0]
	if err = core.ValidateMemoryID(id); err == nil {
		err = ms.DeleteMemory(ctx, scope, id)
	} else {
		err = core.ErrNotFound
	}
	if errors.Is(err, core.ErrNotFound) {
		return 0, nil, errf(http.StatusNotFound, "not_found", "the subject has no memory %.200s", id)
	}
	if err != nil {
		return 0, nil, err
	}
	a.Log.InfoContext(ctx, "memory deleted", "tenant", r.tenant, "by", r.caller.Label, "memory", id)
	return http.StatusNoContent, rawBody{}, nil
}

// eraseMemories answers DELETE /v1/memories?subject=: erases the
// subject's memories at the API's clock's now (what runs that began
// before then would write later is refused) and answers how many it
// deleted. Erasing again is 200 with deleted 0.
func (a *API) eraseMemories(ctx context.Context, r *request, _ []string) (int, any, error) {
	scope, err := a.memoryScope(r)
	if err != nil {
		return 0, nil, err
	}
	ms, err := a.memoryStore()
	if err != nil {
		return 0, nil, err
	}
	at := a.Clock.Now().UTC()
	n, err := ms.EraseMemories(ctx, scope, at)
	if err != nil {
		return 0, nil, err
	}
	a.Log.InfoContext(ctx, "memories erased", "tenant", r.tenant, "by", r.caller.Label, "deleted", n)
	return http.StatusOK, map[string]any{"subject": scope.Subject, "deleted": n, "erased_at": at.Format(time.RFC3339Nano)}, nil
}
