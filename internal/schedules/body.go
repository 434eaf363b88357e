package schedules

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/cronspec"
)

// Body is the body of POST /v1/schedules and PATCH
// /v1/schedules/{id}: on a PATCH an absent field is unchanged, and
// "start": null or "end": null clears it.
type Body struct {
	Agent        *string         `json:"agent"`
	Alias        *string         `json:"alias"`
	AgentVersion *string         `json:"agent_version"`
	Request      json.RawMessage `json:"request"`
	Cron         *string         `json:"cron"`
	At           *string         `json:"at"`
	Timezone     *string         `json:"timezone"`
	Start        json.RawMessage `json:"start"`
	End          json.RawMessage `json:"end"`
	Overlap      *string         `json:"overlap"`
	Missed       *string         `json:"missed"`
	Paused       *bool           `json:"paused"`
}

// maxRequestBytes caps a schedule's run request.
const maxRequestBytes = 64 << 10

// timing reports whether b changes when the schedule fires.
func (b Body) timing() bool {
	return b.Cron != nil || b.At != nil || b.Timezone != nil || b.Start != nil || b.End != nil
}

// changesRequest reports whether b changes the run request.
func (b Body) changesRequest() bool {
	return b.Request != nil || b.Agent != nil || b.Alias != nil || b.AgentVersion != nil
}

// apply sets sc's fields from b (create: every required field must be
// there), checking each field on its own.
func (b Body) apply(sc *core.Schedule, create bool) error {
	if b.Agent != nil {
		a := strings.TrimSpace(*b.Agent)
		if a == "" {
			return fieldErr("agent", "must name an agent")
		}
		sc.Agent = a
	} else if create {
		return fieldErr("agent", "is required")
	}
	if err := b.applyRequest(sc, create); err != nil {
		return err
	}
	switch {
	case b.Cron != nil && b.At != nil:
		return fieldErr("cron", "give cron or at, not both")
	case b.Cron != nil:
		c := strings.TrimSpace(*b.Cron)
		if c == "" {
			return fieldErr("cron", "must not be empty")
		}
		sc.Cron, sc.At = c, nil
	case b.At != nil:
		t, err := time.Parse(time.RFC3339, strings.TrimSpace(*b.At))
		if err != nil {
			return fieldErr("at", "must be an RFC 3339 time (2026-12-01T09:00:00Z), got %q", *b.At)
		}
		t = t.UTC()
		sc.At, sc.Cron = &t, ""
	case create:
		return fieldErr("cron", "give cron (an expression) or at (one time)")
	}
	if b.Timezone != nil {
		tz := strings.TrimSpace(*b.Timezone)
		if tz == "" {
			tz = "UTC"
		}
		if _, err := cronspec.LoadZone(tz); err != nil {
			return asFieldErr(err, "timezone")
		}
		sc.Timezone = tz
	}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
		to   **time.Time
	}{{"start", b.Start, &sc.Start}, {"end", b.End, &sc.End}} {
		if f.raw == nil {
			continue
		}
		if bytes.Equal(bytes.TrimSpace(f.raw), []byte("null")) {
			*f.to = nil
			continue
		}
		var s string
		if err := json.Unmarshal(f.raw, &s); err != nil {
			return fieldErr(f.name, "must be an RFC 3339 time or null")
		}
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return fieldErr(f.name, "must be an RFC 3339 time (2026-12-01T09:00:00Z), got %q", s)
		}
		t = t.UTC()
		*f.to = &t
	}
	if sc.Start != nil && sc.End != nil && !sc.Start.Before(*sc.End) {
		return fieldErr("start", "%s is not before the end, %s", sc.Start.Format(time.RFC3339), sc.End.Format(time.RFC3339))
	}
	if b.Overlap != nil {
		if *b.Overlap != core.OverlapSkip && *b.Overlap != core.OverlapAllow {
			return fieldErr("overlap", "must be %q or %q, got %q", core.OverlapSkip, core.OverlapAllow, *b.Overlap)
		}
		sc.Overlap = *b.Overlap
	}
	if b.Missed != nil {
		if *b.Missed != core.MissedSkip && *b.Missed != core.MissedRunOnce {
			return fieldErr("missed", "must be %q or %q, got %q", core.MissedSkip, core.MissedRunOnce, *b.Missed)
		}
		sc.Missed = *b.Missed
	}
	if b.Paused != nil {
		sc.Paused = *b.Paused
	}
	return nil
}

// applyRequest sets the stored run request: the request object with the
// agent, alias and version put in.
func (b Body) applyRequest(sc *core.Schedule, create bool) error {
	var req map[string]json.RawMessage
	// The alias or version chosen before stays unless b chooses again.
	_, alias, version := splitRequest(sc.Request)
	if b.Alias != nil || b.AgentVersion != nil {
		alias, version = "", ""
	}
	switch {
	case b.Request != nil:
		if len(b.Request) > maxRequestBytes {
			return fieldErr("request", "is larger than %d bytes", maxRequestBytes)
		}
		dec := json.NewDecoder(bytes.NewReader(b.Request))
		dec.UseNumber()
		if err := dec.Decode(&req); err != nil || req == nil {
			return fieldErr("request", "must be a start-run body (a JSON object with messages)")
		}
		for _, k := range []string{"agent", "alias", "agent_version"} {
			if _, ok := req[k]; ok {
				return fieldErr("request", "give %s beside the request, not in it", k)
			}
		}
	case create:
		return fieldErr("request", "is required: the start-run body each run starts with ({\"messages\": [...]})")
	default:
		if b.Agent == nil && b.Alias == nil && b.AgentVersion == nil {
			return nil
		}
		dec := json.NewDecoder(bytes.NewReader(sc.Request))
		dec.UseNumber()
		if err := dec.Decode(&req); err != nil {
			return fieldErr("request", "the stored request is not an object")
		}
		delete(req, "alias")
		delete(req, "agent_version")
	}
	if b.Alias != nil {
		alias = *b.Alias
	}
	if b.AgentVersion != nil {
		version = *b.AgentVersion
	}
	req["agent"], _ = json.Marshal(sc.Agent)
	for key, v := range map[string]string{"alias": alias, "agent_version": version} {
		if v != "" {
			req[key], _ = json.Marshal(v)
		}
	}
	out, err := json.Marshal(req)
	if err != nil {
		return fieldErr("request", "%v", err)
	}
	sc.Request = out
	return nil
}
