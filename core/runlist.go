package core

import (
	"context"
	"encoding/base64"
	"fmt"
	"regexp"
	"sync"
	"time"
)

// RunSummary is a run as its tenant's run list shows it: what it was
// asked, where it stands and why, and what it took so far.
type RunSummary struct {
	RunID     string `json:"run_id"`
	SessionID string `json:"session_id"`
	Agent     string `json:"agent"`
	// AgentVersion is the agents file version the run started on.
	AgentVersion string    `json:"agent_version,omitempty"`
	Status       RunStatus `json:"status"`
	CreatedAt    time.Time `json:"created_at"`
	// UpdatedAt is the run's last commit.
	UpdatedAt time.Time `json:"updated_at,omitzero"`
	// EndedAt is set once the run is terminal (its last commit).
	EndedAt *time.Time `json:"ended_at,omitempty"`
	// Title is the run's first user message, shortened (RunState.Title).
	Title string `json:"title,omitempty"`
	// Reason says why a run that did not complete stopped: its error,
	// the budget it reached, the interrupt's or the cancel's reason.
	Reason string `json:"reason,omitempty"`
	Turns  int    `json:"turns"`
	// TotalTokens counts the run's tokens, its children's included.
	TotalTokens int64 `json:"total_tokens"`
	// CostUSD is what the run cost so far, its children's included (nil
	// when the runtime prices nothing).
	CostUSD *float64 `json:"cost_usd,omitempty"`
	// Parent is set on a child run: the run and call it answers.
	Parent *ParentRef `json:"parent,omitempty"`
	// Children counts the child runs the run started.
	Children int `json:"children,omitempty"`
	// ForkedFrom is set on a fork: its source run, fork point and tool
	// mode.
	ForkedFrom *ForkRef `json:"forked_from,omitempty"`
	// Eval is set on an eval's case run or judge's run.
	Eval *EvalRef `json:"eval,omitempty"`
	// ScheduleID is set on a run a schedule started.
	ScheduleID string `json:"schedule_id,omitempty"`
}

// TitleRunes is how long a run's title (its first user message) may be.
const TitleRunes = 200

// RunListQuery asks for one page of a tenant's runs.
type RunListQuery struct {
	// Status, when set, keeps only runs in that status.
	Status RunStatus
	// Limit is the most runs the page holds (at least 1).
	Limit int
	// Cursor is the Next of the previous page, or "" for the first page.
	Cursor string
	// Agent, when set, keeps only runs of that agent.
	Agent string
	// Since and Until, when set, keep only runs created at or after Since
	// and before Until.
	Since, Until time.Time
	// TopLevel keeps only runs without a parent; Parent, when set, only
	// the child runs of that run.
	TopLevel bool
	Parent   string
	// ForkedFrom, when set, keeps only the forks of that run.
	ForkedFrom string
}

// Keeps says whether a run's entry passes the query's filters (the
// cursor and Limit aside).
func (q RunListQuery) Keeps(s RunSummary) bool {
	switch {
	case q.Status != "" && s.Status != q.Status,
		q.Agent != "" && s.Agent != q.Agent,
		!q.Since.IsZero() && s.CreatedAt.Before(q.Since),
		!q.Until.IsZero() && !s.CreatedAt.Before(q.Until),
		q.TopLevel && s.Parent != nil,
		q.Parent != "" && (s.Parent == nil || s.Parent.RunID != q.Parent),
		q.ForkedFrom != "" && (s.ForkedFrom == nil || s.ForkedFrom.RunID != q.ForkedFrom):
		return false
	}
	return true
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
// index); LoadRun is the authority. Agent, Since, Until, TopLevel and
// Parent filter like Status (RunListQuery.Keeps).
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
var cursorRunID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,128}$`) })

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
	if _, perr := time.Parse("2006-01-02T15:04:05.000000000Z", key[:30]); perr != nil || !cursorRunID().MatchString(key[31:]) {
		return "", bad
	}
	return key, nil
}

// Summary is the run's list entry.
func (st RunState) Summary() RunSummary {
	sum := RunSummary{RunID: st.RunID, SessionID: st.SessionID, Agent: st.Config.Agent, AgentVersion: st.Config.AgentVersion, Status: st.Status, CreatedAt: st.CreatedAt,
		UpdatedAt: st.UpdatedAt, Title: st.Title, Reason: st.reason(), Turns: st.Turn, TotalTokens: int64(st.Usage.Number("total_tokens")),
		Parent: st.Config.Parent, Children: len(st.Children), ForkedFrom: st.Config.ForkedFrom, Eval: st.Config.Eval, ScheduleID: st.Config.Schedule.ScheduleID()}
	if IsTerminal(st.Status) {
		end := st.UpdatedAt
		sum.EndedAt = &end
	}
	if st.Cost != nil {
		c := st.Cost.TotalUSD
		sum.CostUSD = &c
	}
	return sum
}

// reason says why the run stopped where it did ("" while it goes on, or
// when it completed).
func (st RunState) reason() string {
	switch {
	case st.Status == StatusCompleted:
		return ""
	case st.Error != nil && st.Error.Message != "":
		return st.Error.Message
	case st.Status == StatusBudgetExceeded && st.Budget != "":
		return "budget " + st.Budget + " reached"
	case st.Status == StatusInterrupted:
		r, _ := st.Interrupted["reason"].(string)
		return r
	case st.Stop != nil && IsTerminal(st.Status):
		return st.Stop.Reason
	}
	return ""
}

// RunStatuses lists every run status.
var RunStatuses = []RunStatus{
	StatusQueued, StatusRunning, StatusRuntimeToolPending, StatusApprovalRequired, StatusCompleted,
	StatusMaxTurnsReached, StatusBudgetExceeded, StatusFailed, StatusCancelled, StatusInterrupted,
	StatusStalled, StatusTranscriptLockContention,
}
