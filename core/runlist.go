package core

import (
	"context"
	"encoding/base64"
	"fmt"
	"regexp"
	"time"
)

// RunSummary is a run as its tenant's run list shows it.
type RunSummary struct {
	RunID     string    `json:"run_id"`
	SessionID string    `json:"session_id"`
	Agent     string    `json:"agent"`
	Status    RunStatus `json:"status"`
	CreatedAt time.Time `json:"created_at"`
}

// RunListQuery asks for one page of a tenant's runs.
type RunListQuery struct {
	// Status, when set, keeps only runs in that status.
	Status RunStatus
	// Limit is the most runs the page holds (at least 1).
	Limit int
	// Cursor is the Next of the previous page, or "" for the first page.
	Cursor string
}

// RunPage is one page of a tenant's runs.
type RunPage struct {
	Runs []RunSummary
	// Next is the cursor of the following page; "" when no run follows.
	Next string
}

// RunLister lists a tenant's runs newest first: by CreatedAt, then by run
// id, both descending (the order of RunListKey). A page never repeats a
// run of an earlier page, also when runs are created in between (they sort
// before the cursor). With a Status filter a page may hold fewer than
// Limit runs and still have a Next. An invalid cursor is ErrInvalidInput.
// A store may list a run's status a moment late (an eventually consistent
// index); LoadRun is the authority.
type RunLister interface {
	ListRuns(ctx context.Context, tenant string, q RunListQuery) (RunPage, error)
}

// RunListKey is a run's position in its tenant's run list: its creation
// time (fixed width, so keys sort as times do) and its id.
func RunListKey(created time.Time, runID string) string {
	return created.UTC().Format("2006-01-02T15:04:05.000000000Z") + "#" + runID
}

// EncodeRunCursor turns the RunListKey of a page's last run into the
// page's opaque Next cursor.
func EncodeRunCursor(key string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(key))
}

// cursorRunID is what a cursor's run id may be: the ids Baton makes
// (letters, digits, _ . : -), at most 128 of them.
var cursorRunID = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,128}$`)

// DecodeRunCursor returns the RunListKey a cursor carries. A cursor that
// is not one a list returned — not base64url, a key of another shape, a
// run id with bytes Baton's ids never hold or longer than they ever are
// (a store's key limit is never reached) — is ErrInvalidInput.
func DecodeRunCursor(cursor string) (string, error) {
	bad := fmt.Errorf("%w: the cursor is not one this list returned", ErrInvalidInput)
	if len(cursor) > 256 {
		return "", bad
	}
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	key := string(b)
	if err != nil || len(key) < 32 || key[30] != '#' {
		return "", bad
	}
	if _, perr := time.Parse("2006-01-02T15:04:05.000000000Z", key[:30]); perr != nil || !cursorRunID.MatchString(key[31:]) {
		return "", bad
	}
	return key, nil
}

// Summary is the run's list entry.
func (st RunState) Summary() RunSummary {
	return RunSummary{RunID: st.RunID, SessionID: st.SessionID, Agent: st.Config.Agent, Status: st.Status, CreatedAt: st.CreatedAt}
}

// RunStatuses lists every run status.
var RunStatuses = []RunStatus{
	StatusQueued, StatusRunning, StatusRuntimeToolPending, StatusApprovalRequired, StatusCompleted,
	StatusMaxTurnsReached, StatusBudgetExceeded, StatusFailed, StatusCancelled, StatusInterrupted,
	StatusStalled, StatusTranscriptLockContention,
}
