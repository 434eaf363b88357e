package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/events"

	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/runspec"
)

var runIDRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._:\-]{1,128}$`) })

func (a *API) startRun(ctx context.Context, r *request, _ []string) (int, any, error) {
	var b runspec.Body
	if err := decodeStrict(r.body, &b, false); err != nil {
		return 0, nil, err
	}
	req, err := runspec.Validator{Agents: a.Runner.Agents, Providers: a.Config.Providers}.Request(b)
	if err != nil {
		return 0, nil, err
	}
	caller, err := core.ParseCallerContext(r.Headers, r.RequestContext.RequestID, core.MaxChainDepth)
	if err != nil {
		return 0, nil, errf(400, "invalid_caller_context", "%v", err)
	}
	req.Principal = r.principal()
	req.Principal.AgentID, req.Principal.Caller = b.Agent, caller
	rec, err := a.Runner.Start(ctx, r.tenant, req)
	if err != nil {
		return 0, nil, err
	}
	return a.view(ctx, http.StatusAccepted, rec)
}

func (a *API) view(ctx context.Context, status int, rec durable.Snapshot) (int, any, error) {
	v, err := a.Runner.View(ctx, rec, a.Config.MaxViewBytes)
	if err != nil {
		return 0, nil, err
	}
	return status, v, nil
}

func checkRunID(id string) error {
	if !runIDRe().MatchString(id) {
		return errf(404, "not_found", "no such run")
	}
	return nil
}

// runWait checks the run id and reads the ?wait= long-poll duration.
func (a *API) runWait(r *request, id string) (time.Duration, error) {
	if err := checkRunID(id); err != nil {
		return 0, err
	}
	n, err := intQuery(r, "wait", 0, 0, int(a.Config.MaxWait/time.Second))
	return time.Duration(n) * time.Second, err
}

// pageParams reads the ?after= cursor and ?limit= page size of a paged read.
func pageParams(r *request) (after int64, limit int, err error) {
	n, err := intQuery(r, "after", 0, 0, 0)
	if err != nil {
		return 0, 0, err
	}
	limit, err = intQuery(r, "limit", 100, 1, 1000)
	return int64(n), limit, err
}

func (a *API) getRun(ctx context.Context, r *request, p []string) (int, any, error) {
	wait, err := a.runWait(r, p[0])
	if err != nil {
		return 0, nil, err
	}
	rec, err := a.Runner.Wait(ctx, r.tenant, p[0], wait)
	if err != nil {
		return 0, nil, err
	}
	return a.view(ctx, http.StatusOK, rec)
}

func (a *API) getEvents(ctx context.Context, r *request, p []string) (int, any, error) {
	wait, err := a.runWait(r, p[0])
	if err != nil {
		return 0, nil, err
	}
	after, limit, err := pageParams(r)
	if err != nil {
		return 0, nil, err
	}
	evs, err := a.Runner.Events(ctx, r.tenant, p[0], after, limit, wait)
	if err != nil {
		return 0, nil, err
	}
	next := after
	if n := len(evs); n > 0 {
		next = evs[n-1].Seq
	}
	if evs == nil {
		evs = []core.Event{}
	}
	return http.StatusOK, map[string]any{"events": evs, "next": next}, nil
}

type pagedMessage struct {
	Seq int64 `json:"seq"`
	core.Message
}

// MarshalJSON flattens seq into the message envelope.
func (m pagedMessage) MarshalJSON() ([]byte, error) {
	b, err := m.Message.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return append([]byte(fmt.Sprintf(`{"seq":%d,`, m.Seq)), b[1:]...), nil
}

func (a *API) getMessages(ctx context.Context, r *request, p []string) (int, any, error) {
	if err := checkRunID(p[0]); err != nil {
		return 0, nil, err
	}
	after, limit, err := pageParams(r)
	if err != nil {
		return 0, nil, err
	}
	msgs, err := a.Runner.Messages(ctx, r.tenant, p[0], after, limit)
	if err != nil {
		return 0, nil, err
	}
	out := make([]pagedMessage, len(msgs))
	next := after
	for i, m := range msgs {
		out[i] = pagedMessage{Seq: m.Seq, Message: m}
		next = m.Seq
	}
	return http.StatusOK, map[string]any{"messages": out, "next": next}, nil
}

// applyPost is the shape of every POST on a run: check the ids, decode
// the body strictly, turn it into a core input, apply it, answer 202 with
// the view.
func (a *API) applyPost(ctx context.Context, r *request, ids []string, body any, optional bool, input func() (core.Input, error)) (int, any, error) {
	for _, id := range ids {
		if err := checkRunID(id); err != nil {
			return 0, nil, err
		}
	}
	if err := decodeStrict(r.body, body, optional); err != nil {
		return 0, nil, err
	}
	in, err := input()
	if err != nil {
		return 0, nil, err
	}
	rec, err := a.Runner.Apply(ctx, r.tenant, ids[0], in)
	if err != nil {
		return 0, nil, err
	}
	return a.view(ctx, http.StatusAccepted, rec)
}

type resultBody struct {
	RequestID string `json:"request_id"`
	Success   *bool  `json:"success"`
	Result    any    `json:"result"`
	Error     string `json:"error"`
}

func (a *API) submitResult(ctx context.Context, r *request, p []string) (int, any, error) {
	var b resultBody
	return a.applyPost(ctx, r, p, &b, false, func() (core.Input, error) {
		switch {
		case b.RequestID == "" || b.Success == nil:
			return nil, errf(400, "invalid_request", "request_id and success are required")
		case *b.Success && b.Error != "":
			return nil, errf(400, "invalid_request", "error is only allowed when success is false")
		case !*b.Success && b.Result != nil:
			return nil, errf(400, "invalid_request", "result is only allowed when success is true")
		}
		return core.ClientResult{RequestID: b.RequestID, Success: *b.Success, Result: b.Result, Error: b.Error}, nil
	})
}

type approvalBody struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
}

func (a *API) approve(ctx context.Context, r *request, p []string) (int, any, error) {
	var b approvalBody
	return a.applyPost(ctx, r, p, &b, false, func() (core.Input, error) {
		if b.Decision != "accept" && b.Decision != "reject" {
			return nil, errf(400, "invalid_request", "decision must be \"accept\" or \"reject\"")
		}
		return core.ApprovalDecision{ActionID: p[1], Decision: b.Decision, Reason: b.Reason, Resolver: r.principal()}, nil
	})
}

type cancelBody struct {
	Reason string `json:"reason"`
}

func (a *API) cancel(ctx context.Context, r *request, p []string) (int, any, error) {
	var b cancelBody
	return a.applyPost(ctx, r, p, &b, true, func() (core.Input, error) { return core.Cancel{Reason: b.Reason}, nil })
}

type steerBody struct {
	Content *string `json:"content"`
}

func (a *API) steer(ctx context.Context, r *request, p []string) (int, any, error) {
	var b steerBody
	return a.applyPost(ctx, r, p, &b, false, func() (core.Input, error) {
		if b.Content == nil {
			return nil, errf(400, "invalid_request", "content is required")
		}
		return core.Steer{Content: *b.Content}, nil
	})
}

type interruptBody struct {
	Action   string         `json:"action"`
	Reason   string         `json:"reason"`
	Metadata map[string]any `json:"metadata"`
}

// interrupt answers POST /v1/runs/{run_id}/interrupt: the seeds'
// normalized interrupt message ends the run with status interrupted and
// its action and metadata in the envelope's interrupted field.
func (a *API) interrupt(ctx context.Context, r *request, p []string) (int, any, error) {
	var b interruptBody
	return a.applyPost(ctx, r, p, &b, true, func() (core.Input, error) {
		if utf8.RuneCountInString(b.Action) > 64 || strings.ContainsAny(b.Action, "\r\n") {
			return nil, errf(400, "invalid_request", "action must be a single line of at most 64 characters")
		}
		return core.Interrupt{Action: b.Action, Reason: b.Reason, Metadata: b.Metadata}, nil
	})
}

// openAPI answers GET /v1/openapi.json: the API's OpenAPI 3.1 document,
// public (no credential), cacheable for an hour.
func (a *API) openAPI(context.Context, *request, []string) (int, any, error) {
	return http.StatusOK, rawBody{body: events.OpenAPI, headers: map[string]string{"Cache-Control": "public, max-age=3600"}}, nil
}
