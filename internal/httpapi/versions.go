package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
)

// Agent versions and aliases (core/versions.go): publish an agents file
// as a version, read versions, point aliases at them. Every route needs
// ScopeAgentsManage; every publish and alias change is an audit entry
// the store writes with it.

// versionView is a version as the API answers it; File only on GET of
// one version.
type versionView struct {
	core.AgentVersion
	File    json.RawMessage `json:"file,omitempty"`
	Created *bool           `json:"created,omitempty"`
}

// publisher names the caller in versions and audit entries: tenant/label.
func (r *request) publisher() string { return r.tenant + "/" + r.caller.Label }

func (a *API) listVersions(ctx context.Context, _ *request, _ []string) (int, any, error) {
	vs, err := a.Runner.Store.ListAgentVersions(ctx)
	if err != nil {
		return 0, nil, err
	}
	out := make([]versionView, len(vs))
	for i, v := range vs {
		out[i] = versionView{AgentVersion: v}
	}
	aliases, err := a.Runner.Store.ListAgentAliases(ctx)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]any{"versions": out, "aliases": nonNilAliases(aliases)}, nil
}

func nonNilAliases(a []core.AgentAlias) []core.AgentAlias {
	if a == nil {
		return []core.AgentAlias{}
	}
	return a
}

// publishVersion stores the body, an agents file, as a version: 201 when
// it is new, 200 when the same file (as canonical JSON) was published
// before. A file the deployment could not run is a 400 naming every
// problem, and nothing is stored.
func (a *API) publishVersion(ctx context.Context, r *request, _ []string) (int, any, error) {
	if len(strings.TrimSpace(string(r.body))) == 0 {
		return 0, nil, errf(400, "invalid_body", "the body is the agents file to publish (a JSON object with agents)")
	}
	if _, problems := agents.ValidateIn(r.body, a.Config.AgentsEnv); len(problems) > 0 {
		return 0, nil, problemsError(problems)
	}
	v, reg, err := agents.NewVersion(r.body, a.Clock.Now(), r.publisher())
	if err != nil {
		return 0, nil, problemsError([]agents.Problem{{Message: err.Error()}})
	}
	problems := a.deployable(reg)
	if a.Config.CheckAgents != nil {
		if err := a.Config.CheckAgents(reg); err != nil {
			problems = append(problems, agents.Problem{Message: err.Error()})
		}
	}
	if len(problems) > 0 {
		return 0, nil, problemsError(problems)
	}
	if len(v.File) > core.MaxAgentVersionBytes {
		return 0, nil, errf(http.StatusRequestEntityTooLarge, "agents_file_too_large", "the agents file is %d bytes as canonical JSON; a version holds at most %d", len(v.File), core.MaxAgentVersionBytes)
	}
	stored, created, err := a.Runner.Store.PutAgentVersion(ctx, v)
	if err != nil {
		return 0, nil, err
	}
	if created {
		a.Log.InfoContext(ctx, "agent version published", "agent_version", v.ID, "by", v.PublishedBy, "agents", strings.Join(v.Agents, ","))
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return status, versionView{AgentVersion: stored, Created: &created}, nil
}

// deployable lists what of reg this deployment cannot run beside what
// ValidateIn finds: a model provider the build knows and the deployment
// does not enable.
func (a *API) deployable(reg *agents.Registry) []agents.Problem {
	var out []agents.Problem
	for _, slug := range reg.Slugs() {
		ag, _ := reg.Get(slug)
		if p := ag.Spec.Model.Provider; !slices.Contains(a.Config.Providers, p) {
			out = append(out, agents.Problem{Path: "agent " + slug + ": model.provider", Message: fmt.Sprintf("model provider %q is not enabled in this deployment (enabled: %s)", p, strings.Join(a.Config.Providers, ", "))})
		}
	}
	return out
}

// problemsError is a 400 listing an agents file's problems.
func problemsError(problems []agents.Problem) *apiError {
	list := make([]any, len(problems))
	msgs := make([]string, len(problems))
	for i, p := range problems {
		item := map[string]any{"path": p.Path, "message": p.Message}
		if p.Line > 0 {
			item["line"], item["column"] = p.Line, p.Column
		}
		list[i] = item
		msgs[i] = p.String()
		if p.Line > 0 {
			msgs[i] = fmt.Sprintf("%d:%d: %s", p.Line, p.Column, p)
		}
	}
	return &apiError{Status: 400, Code: "invalid_agents_file", Message: fmt.Sprintf("the agents file has %d problem(s): %s", len(problems), strings.Join(msgs, "; ")), Details: map[string]any{"problems": list}}
}

func (a *API) getVersion(ctx context.Context, _ *request, p []string) (int, any, error) {
	if !core.ValidAgentVersionID(p[0]) {
		return 0, nil, errf(404, "not_found", "no agent version %q (a version id is av_ and 16 hex digits)", p[0])
	}
	v, err := a.Runner.Store.GetAgentVersion(ctx, p[0])
	if errors.Is(err, core.ErrNotFound) {
		return 0, nil, errf(404, "not_found", "no agent version %s", p[0])
	}
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, versionView{AgentVersion: v, File: v.File}, nil
}

func (a *API) listAliases(ctx context.Context, _ *request, _ []string) (int, any, error) {
	as, err := a.Runner.Store.ListAgentAliases(ctx)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]any{"aliases": nonNilAliases(as)}, nil
}

func (a *API) getAlias(ctx context.Context, _ *request, p []string) (int, any, error) {
	al, err := a.Runner.Store.GetAgentAlias(ctx, p[0])
	if errors.Is(err, core.ErrNotFound) || !core.ValidAliasName(p[0]) {
		return 0, nil, errf(404, "not_found", "no alias %q", p[0])
	}
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, al, nil
}

// aliasBody is PUT /v1/agent-aliases/{name}: a version (all new runs),
// or routes by weight; tenant pins; and the revision the caller read
// (0: the alias must not exist yet; omitted: whatever is stored).
type aliasBody struct {
	Version  string            `json:"version"`
	Routes   []core.AliasRoute `json:"routes"`
	Tenants  map[string]string `json:"tenants"`
	Revision *int64            `json:"revision"`
}

// putAlias points an alias at versions: every version it names must be
// stored; weights sum to 100. Rollback is pointing it back.
func (a *API) putAlias(ctx context.Context, r *request, p []string) (int, any, error) {
	name := p[0]
	if !core.ValidAliasName(name) {
		return 0, nil, errf(400, "invalid_request", "alias name %q: want 1 to 63 lowercase letters, digits, _ or -", name)
	}
	var b aliasBody
	if err := decodeStrict(r.body, &b, false); err != nil {
		return 0, nil, err
	}
	switch {
	case b.Version != "" && len(b.Routes) > 0:
		return 0, nil, errf(400, "invalid_request", "give version or routes, not both")
	case b.Version != "":
		b.Routes = []core.AliasRoute{{Version: b.Version, Weight: 100}}
	case len(b.Routes) == 0:
		return 0, nil, errf(400, "invalid_request", "give version (a version id) or routes ([{version, weight}] summing to 100)")
	}
	next := core.AgentAlias{Name: name, Routes: b.Routes, Tenants: b.Tenants, UpdatedAt: a.Clock.Now(), UpdatedBy: r.publisher()}
	if err := next.Validate(); err != nil {
		return 0, nil, err
	}
	for _, id := range next.Versions() {
		if _, err := a.Runner.Store.GetAgentVersion(ctx, id); errors.Is(err, core.ErrNotFound) {
			return 0, nil, errf(400, "unknown_agent_version", "alias %s names agent version %s, which is not published (baton agents versions lists them)", name, id)
		} else if err != nil {
			return 0, nil, err
		}
	}
	cur, err := a.Runner.Store.GetAgentAlias(ctx, name)
	switch {
	case errors.Is(err, core.ErrNotFound):
	case err != nil:
		return 0, nil, err
	default:
		next.Deployed = cur.Deployed
	}
	prev := cur.Revision
	if b.Revision != nil {
		if *b.Revision != prev {
			return 0, nil, errf(409, "conflict", "alias %s is at revision %d, not %d: read it again", name, prev, *b.Revision)
		}
	}
	stored, err := a.Runner.Store.PutAgentAlias(ctx, next, prev)
	if errors.Is(err, core.ErrConflict) {
		return 0, nil, errf(409, "conflict", "alias %s changed while this request read it; retry", name)
	}
	if err != nil {
		return 0, nil, err
	}
	a.Log.InfoContext(ctx, "agent alias changed", "alias", name, "revision", stored.Revision, "by", stored.UpdatedBy, "versions", strings.Join(stored.Versions(), ","))
	return http.StatusOK, stored, nil
}

func (a *API) listAgentAudit(ctx context.Context, r *request, _ []string) (int, any, error) {
	limit, err := intQuery(r, "limit", 100, 1, 1000)
	if err != nil {
		return 0, nil, err
	}
	es, err := a.Runner.Store.ListAgentAudit(ctx, limit)
	if err != nil {
		return 0, nil, err
	}
	if es == nil {
		es = []core.AgentAuditEntry{}
	}
	return http.StatusOK, map[string]any{"entries": es}, nil
}
