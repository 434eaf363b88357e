package core

import (
	"context"
	"encoding/json"
	"time"
)

// Evaluations: an eval runs each case of a dataset as an ordinary run of
// the tenant's (a case run, tagged with its EvalRef), at most Concurrency
// at once; when a case run ends, its commit's outbox record
// (EvalDelivery) scores it, once, and starts the case Concurrency places
// after it. The dataset format and the checks are internal/evals'; the
// runner's side is internal/durable/evals.go.

// EvalRef tags a case run (and a judge's run) with its eval and case.
type EvalRef struct {
	EvalID string `json:"eval_id"`
	Case   int    `json:"case"`
	// Tools is the tool mode of a case with its own input: its scripted
	// client answers are its record (RecordedAnswer), and with replay
	// nothing else executes. "" on a case forked from a recorded run
	// (its ForkedFrom says) and on a judge's run.
	Tools string `json:"tools,omitempty"`
	// Judge marks the run of the eval's judge agent scoring the case.
	Judge bool `json:"judge,omitempty"`
}

// EvalDelivery is the outbox record of a case run (or its judge's) that
// ended: the eval scores the case and goes on.
type EvalDelivery struct {
	EvalID string `json:"eval_id"`
	Case   int    `json:"case"`
	Judge  bool   `json:"judge,omitempty"`
}

// Eval statuses (an eval whose every case is scored is completed).
const (
	EvalRunning   = "running"
	EvalCompleted = "completed"
	EvalCancelled = "cancelled"
)

// EvalRecord is a stored eval: the request (the dataset as JSON, where
// its cases run) and whether it was cancelled.
type EvalRecord struct {
	ID          string          `json:"eval_id"`
	Tenant      string          `json:"tenant"`
	Name        string          `json:"name,omitempty"`
	Agent       string          `json:"agent"`
	Alias       string          `json:"alias,omitempty"`
	Version     string          `json:"agent_version,omitempty"`
	Tools       string          `json:"tools,omitempty"`
	Judge       string          `json:"judge,omitempty"`
	Concurrency int             `json:"concurrency"`
	Total       int             `json:"total"`
	Dataset     json.RawMessage `json:"dataset,omitempty"`
	Principal   *Principal      `json:"principal,omitempty"`
	Cancelled   bool            `json:"cancelled,omitempty"`
	CreatedAt   time.Time       `json:"created_at"`
	CancelledAt *time.Time      `json:"cancelled_at,omitempty"`
}

// EvalResult is a scored case: its index and its result as JSON.
type EvalResult struct {
	Case int             `json:"case"`
	Pass bool            `json:"pass"`
	Data json.RawMessage `json:"data"`
}

// EvalStore keeps evals and their scored cases.
type EvalStore interface {
	// CreateEval stores a new eval (ErrConflict: the id exists).
	CreateEval(ctx context.Context, e EvalRecord) error
	// GetEval reads an eval of tenant's (ErrNotFound: none, or
	// another tenant's).
	GetEval(ctx context.Context, tenant, id string) (EvalRecord, error)
	// ListEvals lists tenant's evals newest first, without their
	// datasets, at most limit, after cursor ("" first); next is the
	// cursor of the following page ("" none).
	ListEvals(ctx context.Context, tenant string, limit int, cursor string) (evals []EvalRecord, next string, err error)
	// CancelEval marks an eval of tenant's cancelled at at (once; a
	// second cancel changes nothing).
	CancelEval(ctx context.Context, tenant, id string, at time.Time) error
	// PutEvalResult stores case r.Case's result unless one is stored:
	// true when this call stored it.
	PutEvalResult(ctx context.Context, evalID string, r EvalResult) (bool, error)
	// EvalResults lists an eval's scored cases by case.
	EvalResults(ctx context.Context, evalID string) ([]EvalResult, error)
}
