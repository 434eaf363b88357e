package httpapi

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/auth"
	"github.com/baton-agents/baton/internal/console"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/runspec"
	"github.com/baton-agents/baton/internal/schedules"
	"github.com/baton-agents/baton/internal/telemetry"
)

// Scopes a token may hold.
const (
	ScopeRunsWrite      = "runs:write"
	ScopeRunsRead       = "runs:read"
	ScopeResultsSubmit  = "results:submit"
	ScopeApprovalDecide = "approvals:decide"
	// ScopeMemoriesRead reads the caller's memories (GET /v1/memories);
	// ScopeMemoriesDelete deletes and erases them (DELETE).
	ScopeMemoriesRead   = "memories:read"
	ScopeMemoriesDelete = "memories:delete"
	// ScopeSchedulesRead reads the tenant's schedules and their
	// triggers; ScopeSchedulesWrite creates, changes and deletes them.
	ScopeSchedulesRead  = "schedules:read"
	ScopeSchedulesWrite = "schedules:write"
)

// ScopeAgentsManage publishes agent versions and moves aliases
// (/v1/agent-versions, /v1/agent-aliases). No token holds it unless
// given it by name: a tenant's token never changes the agents every
// tenant runs.
const ScopeAgentsManage = "agents:manage"

// ScopeMemoriesSubject names a memory subject other than the caller's
// own: on the memory routes (?subject=) and in a run's memory_subject.
// Like ScopeAgentsManage no token holds it unless given it by name (the
// baton dev tokens are): a back office acting for its end users holds
// it, an end user's own credential does not.
const ScopeMemoriesSubject = "memories:subject"

// AllScopes lists the scopes a token holds by default.
var AllScopes = []string{ScopeRunsWrite, ScopeRunsRead, ScopeResultsSubmit, ScopeApprovalDecide, ScopeMemoriesRead, ScopeMemoriesDelete, ScopeSchedulesRead, ScopeSchedulesWrite}

// KnownScopes lists every scope of the API.
var KnownScopes = append(append([]string(nil), AllScopes...), ScopeAgentsManage, ScopeMemoriesSubject)

// Config is the API's configuration.
type Config struct {
	// MaxBodyBytes caps request bodies (default 5 MiB, under Lambda's 6 MB).
	MaxBodyBytes int
	// MaxViewBytes caps a run view (default 5 MiB).
	MaxViewBytes int
	// MaxWait caps ?wait= long polls (default and maximum 25 s).
	MaxWait time.Duration
	// IdempotencyTTL is how long an Idempotency-Key is remembered (24h).
	IdempotencyTTL time.Duration
	// Providers lists the model providers a request may name.
	Providers []string
	// AgentsEnv is what the deployment provides a published agents file
	// (versions.go): the Go tool handlers its worker registers and the
	// providers it knows.
	AgentsEnv agents.Environment
	// CheckAgents, when set, checks what of a published agents file
	// only the composition root can build (its guardrail rules), without
	// building adapters or reaching anything.
	CheckAgents func(*agents.Registry) error
	// CORSOrigins are the browser origins (scheme://host[:port], or "*")
	// allowed to call the API from a browser (cors.go).
	CORSOrigins []string
	// TenantRate and CallerRate are token buckets every authenticated
	// request takes a token from: one per tenant, one per caller (a
	// token, a JWT subject). A zero Rate is no limit (limits.go).
	TenantRate core.RateLimit
	CallerRate core.RateLimit
}

func (c Config) withDefaults() Config {
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = 5 << 20
	}
	if c.MaxViewBytes <= 0 {
		c.MaxViewBytes = 5 << 20
	}
	if c.MaxWait <= 0 || c.MaxWait > 25*time.Second {
		c.MaxWait = 25 * time.Second
	}
	if c.IdempotencyTTL <= 0 {
		c.IdempotencyTTL = 24 * time.Hour
	}
	return c
}

// API is the handler.
type API struct {
	Runner *durable.Runner
	Tokens core.TokenStore
	// JWT, when set, verifies bearer credentials shaped like a JWT
	// (auth.LooksLikeJWT); Baton's own tokens go to Tokens.
	JWT *auth.JWT
	// IAM, when set, serves the routes again under IAMPrefix for callers
	// API Gateway authenticated with AWS_IAM (SigV4), mapped to tenants.
	IAM  *auth.IAM
	Idem core.IdempotencyStore
	// Limits keeps the rate limits' buckets (Config.TenantRate and
	// CallerRate); nil: no rate limits.
	Limits core.LimitStore
	// Memories keeps the end users' memories (memories.go): the store
	// itself, which the runner's store wraps.
	Memories core.MemoryStore
	// Schedules is the schedule service (schedules.go); nil: the
	// deployment has no schedules.
	Schedules *schedules.Service
	Clock     core.Clock
	Log       *slog.Logger
	Config    Config
}

// New wires the API.
func New(e *durable.Runner, tokens core.TokenStore, idem core.IdempotencyStore, clock core.Clock, log *slog.Logger, cfg Config) *API {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &API{Runner: e, Tokens: tokens, Idem: idem, Clock: clock, Log: log, Config: cfg.withDefaults()}
}

// HashToken is how tokens are stored: hex SHA-256.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// apiError is an error with a status and a machine code (runspec's, which
// the intake queue's handler shares).
type apiError = runspec.Error

func errf(status int, code, format string, args ...any) *apiError {
	return runspec.Errorf(status, code, format, args...)
}

type request struct {
	events.APIGatewayProxyRequest
	body   []byte
	tenant string
	// caller is the authenticated caller: a token's label or a JWT's
	// subject, its scopes, the auth source and a token id.
	caller     core.Token
	authSource string
	tokenID    string
	// viaIAM: the request came in under IAMPrefix, where API Gateway
	// authorizes with AWS_IAM.
	viaIAM bool
}

// Auth sources of the principals the API builds.
const (
	// AuthBearerToken: one of Baton's own hashed tokens.
	AuthBearerToken = "bearer_token"
	// AuthJWT: a JWT from the configured OIDC issuer.
	AuthJWT = "jwt"
	// AuthIAM: an IAM principal API Gateway authenticated (SigV4).
	AuthIAM = "iam"
)

// IAMPrefix is the path prefix of the routes API Gateway authorizes with
// AWS_IAM: /iam/v1/runs is /v1/runs for a SigV4 caller.
const IAMPrefix = "/iam"

// principal is the execution principal of an authenticated request: the
// caller's tenant, its token label or JWT subject as the actor id, its
// scopes as the capability ceiling, and a token id that is never the
// credential (a prefix of a token's hash, a JWT's jti).
func (r *request) principal() *core.Principal {
	return &core.Principal{
		ActorID: r.caller.Label, AuthSource: r.authSource, RequestContext: "rest",
		Tenant: r.tenant, TokenID: r.tokenID, CapabilityCeiling: append([]string(nil), r.caller.Scopes...),
	}
}

// newRequest wraps a proxy request; its Path is the route path
// (RoutePath), which leaves out a custom domain's base path.
func newRequest(req events.APIGatewayProxyRequest) *request {
	req.Path = RoutePath(req)
	r := &request{APIGatewayProxyRequest: req}
	if rest, ok := strings.CutPrefix(req.Path, IAMPrefix+"/"); ok {
		r.Path, r.viaIAM = "/"+rest, true
	}
	return r
}

func (r *request) header(name string) string {
	for k, v := range r.Headers {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	for k, vs := range r.MultiValueHeaders {
		if strings.EqualFold(k, name) && len(vs) > 0 {
			return vs[0]
		}
	}
	return ""
}

func (r *request) query(name string) (string, bool) {
	if v, ok := r.QueryStringParameters[name]; ok {
		return v, true
	}
	if vs, ok := r.MultiValueQueryStringParameters[name]; ok && len(vs) > 0 {
		return vs[0], true
	}
	return "", false
}

type route struct {
	method string
	parts  []string // "{}" matches one segment
	// scope is the scope the caller needs; "" makes the route public.
	scope  string
	handle func(ctx context.Context, r *request, params []string) (int, any, error)
	post   bool
}

func (a *API) routes() []route {
	return []route{
		{http.MethodPost, []string{"v1", "runs"}, ScopeRunsWrite, a.startRun, true},
		{http.MethodGet, []string{"v1", "runs"}, ScopeRunsRead, a.listRuns, false},
		{http.MethodGet, []string{"v1", "runs", "{}"}, ScopeRunsRead, a.getRun, false},
		{http.MethodGet, []string{"v1", "runs", "{}", "events"}, ScopeRunsRead, a.getEvents, false},
		{http.MethodGet, []string{"v1", "runs", "{}", "messages"}, ScopeRunsRead, a.getMessages, false},
		{http.MethodGet, []string{"v1", "runs", "{}", "stream"}, ScopeRunsRead, a.getStream, false},
		{http.MethodPost, []string{"v1", "runs", "{}", "messages"}, ScopeRunsWrite, a.steer, true},
		{http.MethodPost, []string{"v1", "runs", "{}", "tool-results"}, ScopeResultsSubmit, a.submitResult, true},
		{http.MethodPost, []string{"v1", "runs", "{}", "approvals", "{}"}, ScopeApprovalDecide, a.approve, true},
		{http.MethodPost, []string{"v1", "runs", "{}", "cancel"}, ScopeRunsWrite, a.cancel, true},
		{http.MethodPost, []string{"v1", "runs", "{}", "interrupt"}, ScopeRunsWrite, a.interrupt, true},
		{http.MethodPost, []string{"v1", "runs", "{}", "fork"}, ScopeRunsWrite, a.forkRun, true},
		{http.MethodGet, []string{"v1", "runs", "{}", "compare", "{}"}, ScopeRunsRead, a.compareRuns, false},
		{http.MethodPost, []string{"v1", "evals"}, ScopeRunsWrite, a.startEval, true},
		{http.MethodGet, []string{"v1", "evals"}, ScopeRunsRead, a.listEvals, false},
		{http.MethodGet, []string{"v1", "evals", "{}"}, ScopeRunsRead, a.getEval, false},
		{http.MethodPost, []string{"v1", "evals", "{}", "cancel"}, ScopeRunsWrite, a.cancelEval, true},
		{http.MethodPost, aguiRoute, ScopeRunsWrite, a.postAGUI, false},
		{http.MethodPost, a2aRoute, ScopeRunsRead, a.postA2A, false},
		{http.MethodGet, a2aCardRoute, "", a.getAgentCard, false},
		{http.MethodGet, []string{"v1", "openapi.json"}, "", a.openAPI, false},
		{http.MethodGet, []string{"v1", "agent-versions"}, ScopeAgentsManage, a.listVersions, false},
		{http.MethodPost, []string{"v1", "agent-versions"}, ScopeAgentsManage, a.publishVersion, false},
		{http.MethodGet, []string{"v1", "agent-versions", "{}"}, ScopeAgentsManage, a.getVersion, false},
		{http.MethodGet, []string{"v1", "agent-aliases"}, ScopeAgentsManage, a.listAliases, false},
		{http.MethodGet, []string{"v1", "agent-aliases", "{}"}, ScopeAgentsManage, a.getAlias, false},
		{http.MethodPut, []string{"v1", "agent-aliases", "{}"}, ScopeAgentsManage, a.putAlias, false},
		{http.MethodGet, []string{"v1", "agent-audit"}, ScopeAgentsManage, a.listAgentAudit, false},
		{http.MethodGet, []string{"v1", "memories"}, ScopeMemoriesRead, a.listMemories, false},
		{http.MethodDelete, []string{"v1", "memories"}, ScopeMemoriesDelete, a.eraseMemories, false},
		{http.MethodDelete, []string{"v1", "memories", "{}"}, ScopeMemoriesDelete, a.deleteMemory, false},
		{http.MethodPost, []string{"v1", "schedules"}, ScopeSchedulesWrite, a.createSchedule, true},
		{http.MethodGet, []string{"v1", "schedules"}, ScopeSchedulesRead, a.listSchedules, false},
		{http.MethodGet, []string{"v1", "schedules", "{}"}, ScopeSchedulesRead, a.getSchedule, false},
		{http.MethodPatch, []string{"v1", "schedules", "{}"}, ScopeSchedulesWrite, a.patchSchedule, false},
		{http.MethodDelete, []string{"v1", "schedules", "{}"}, ScopeSchedulesWrite, a.deleteSchedule, false},
		{http.MethodGet, []string{"v1", "schedules", "{}", "triggers"}, ScopeSchedulesRead, a.listTriggers, false},
	}
}

func match(parts, segs []string) ([]string, bool) {
	if len(parts) != len(segs) {
		return nil, false
	}
	var params []string
	for i, p := range parts {
		if p == "{}" {
			if segs[i] == "" {
				return nil, false
			}
			params = append(params, segs[i])
		} else if p != segs[i] {
			return nil, false
		}
	}
	return params, true
}

// Handle serves one API Gateway proxy request. It never returns an error:
// every failure is a JSON error response.
func (a *API) Handle(ctx context.Context, req events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
	r := newRequest(req)
	ctx = telemetry.Extract(ctx, req.Headers)
	status, body, hdr, ok := a.preflight(r)
	if !ok {
		status, body, hdr = a.serve(ctx, r)
	}
	resp := events.APIGatewayProxyResponse{StatusCode: status, Headers: map[string]string{"Content-Type": "application/json"}}
	for k, v := range hdr {
		resp.Headers[k] = v
	}
	a.corsHeaders(r, resp.Headers)
	if id := req.RequestContext.RequestID; id != "" {
		resp.Headers["X-Request-Id"] = id
	}
	resp.Body = string(body)
	return resp, nil
}

func (a *API) serve(ctx context.Context, r *request) (int, []byte, map[string]string) {
	path := strings.Trim(r.Path, "/")
	segs := strings.Split(path, "/")
	if segs[0] == "console" && !r.viaIAM {
		// The web console's assets: public, like the page of any site;
		// what it shows it fetches from the routes below with the
		// user's credential.
		c := console.Serve(r.HTTPMethod, r.Path)
		return c.Status, c.Body, c.Headers
	}
	var found *route
	var params []string
	allowed := []string{}
	for _, rt := range a.routes() {
		p, ok := match(rt.parts, segs)
		if !ok {
			continue
		}
		allowed = append(allowed, rt.method)
		if rt.method == r.HTTPMethod {
			rt := rt
			found, params = &rt, p
		}
	}
	if found == nil {
		if len(allowed) > 0 {
			return a.fail(ctx, r, errf(http.StatusMethodNotAllowed, "method_not_allowed", "%s is not allowed here; use %s", r.HTTPMethod, strings.Join(allowed, ", ")), map[string]string{"Allow": strings.Join(allowed, ", ")})
		}
		return a.fail(ctx, r, errf(http.StatusNotFound, "route_not_found", "no route for %s /%s", r.HTTPMethod, path), nil)
	}
	if found.scope != "" { // a public route (the OpenAPI document) has no scope
		if err := a.authenticate(ctx, r, found.scope); err != nil {
			return a.fail(ctx, r, err, nil)
		}
		if hdr, err := a.rateLimit(ctx, r); err != nil {
			return a.fail(ctx, r, err, hdr)
		}
	}
	body, err := a.readBody(r)
	if err != nil {
		return a.fail(ctx, r, err, nil)
	}
	r.body = body
	if found.post {
		if key := r.header("Idempotency-Key"); key != "" {
			return a.idempotent(ctx, r, key, found, params)
		}
	}
	return a.run(ctx, r, found, params)
}

func (a *API) run(ctx context.Context, r *request, rt *route, params []string) (int, []byte, map[string]string) {
	status, v, err := rt.handle(ctx, r, params)
	if err != nil {
		return a.fail(ctx, r, err, nil)
	}
	if raw, ok := v.(rawBody); ok {
		return status, raw.body, raw.headers
	}
	b, merr := json.Marshal(v)
	if merr != nil {
		return a.fail(ctx, r, merr, nil)
	}
	hdr := map[string]string{}
	if view, ok := v.(durable.View); ok && status == http.StatusAccepted {
		hdr["Location"] = "/v1/runs/" + view.RunID
	}
	return status, b, hdr
}

func (a *API) authenticate(ctx context.Context, r *request, scope string) error {
	if r.viaIAM {
		if err := a.authenticateIAM(r); err != nil {
			return err
		}
		return checkScope(r, scope)
	}
	h := r.header("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return errf(http.StatusUnauthorized, "unauthorized", "send Authorization: Bearer <token>")
	}
	if a.JWT != nil && auth.LooksLikeJWT(token) {
		id, err := a.JWT.Verify(ctx, token)
		var refused *auth.Error
		if errors.As(err, &refused) {
			return errf(http.StatusUnauthorized, "unauthorized", "%s", refused.Reason)
		}
		if err != nil {
			return err
		}
		r.tenant, r.caller, r.authSource, r.tokenID = id.Tenant, core.Token{Tenant: id.Tenant, Scopes: id.Scopes, Label: id.Subject}, AuthJWT, id.TokenID
	} else {
		hash := HashToken(token)
		t, err := a.Tokens.LookupToken(ctx, hash)
		if errors.Is(err, core.ErrNotFound) {
			return errf(http.StatusUnauthorized, "unauthorized", "the token is not valid")
		}
		if err != nil {
			return err
		}
		r.tenant, r.caller, r.authSource, r.tokenID = t.Tenant, t, AuthBearerToken, hash[:16]
	}
	return checkScope(r, scope)
}

func checkScope(r *request, scope string) error {
	if !slices.Contains(r.caller.Scopes, scope) {
		what := map[string]string{AuthJWT: "the JWT", AuthIAM: "the IAM principal"}[r.authSource]
		return errf(http.StatusForbidden, "forbidden", "%s lacks the %s scope", cmp.Or(what, "the token"), scope)
	}
	return nil
}

// authenticateIAM takes the caller of a request under IAMPrefix from the
// request context API Gateway sets once it verified the SigV4 signature
// (AWS_IAM authorization): a client can send headers but not the
// context, so nothing else is trusted.
func (a *API) authenticateIAM(r *request) error {
	if a.IAM == nil {
		return errf(http.StatusNotFound, "route_not_found", "IAM callers are not enabled on this deployment (BATON_IAM_PRINCIPALS)")
	}
	id := r.RequestContext.Identity
	if !strings.HasPrefix(r.RequestContext.ResourcePath, IAMPrefix+"/") || id.UserArn == "" {
		return errf(http.StatusUnauthorized, "unauthorized", "routes under %s/ take requests signed with SigV4, authorized by API Gateway (AWS_IAM)", IAMPrefix)
	}
	ident, ok := a.IAM.Resolve(id.UserArn, id.AccessKey)
	if !ok {
		return errf(http.StatusForbidden, "forbidden", "the IAM principal %s is not mapped to a Baton tenant", id.UserArn)
	}
	r.tenant, r.caller, r.authSource, r.tokenID = ident.Tenant, core.Token{Tenant: ident.Tenant, Scopes: ident.Scopes, Label: ident.Subject}, AuthIAM, ident.TokenID
	return nil
}

func (a *API) readBody(r *request) ([]byte, error) {
	var body []byte
	if r.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(r.Body)
		if err != nil {
			return nil, errf(http.StatusBadRequest, "invalid_body", "the body is not valid base64")
		}
		body = b
	} else {
		body = []byte(r.Body)
	}
	if len(body) > a.Config.MaxBodyBytes {
		return nil, &apiError{Status: http.StatusRequestEntityTooLarge, Code: "payload_too_large",
			Message: fmt.Sprintf("the body is %d bytes; the limit is %d", len(body), a.Config.MaxBodyBytes),
			Details: map[string]any{"limit_bytes": a.Config.MaxBodyBytes}}
	}
	return body, nil
}

func (a *API) idempotent(ctx context.Context, r *request, key string, rt *route, params []string) (int, []byte, map[string]string) {
	if !runspec.ValidIdempotencyKey(key) {
		return a.fail(ctx, r, errf(http.StatusBadRequest, "invalid_idempotency_key", "Idempotency-Key must be 1 to 255 visible ASCII characters"), nil)
	}
	scope := r.tenant + " " + r.HTTPMethod + " /" + strings.Trim(r.Path, "/")
	sum := sha256.Sum256(r.body)
	hash := hex.EncodeToString(sum[:])
	now := a.Clock.Now()
	prev, err := a.Idem.BeginIdempotent(ctx, scope, key, hash, now, a.Config.IdempotencyTTL)
	if err != nil {
		return a.fail(ctx, r, err, nil)
	}
	if prev != nil {
		switch {
		case prev.Hash != hash:
			return a.fail(ctx, r, errf(http.StatusUnprocessableEntity, "idempotency_key_reused", "this Idempotency-Key was used with a different request body"), nil)
		case !prev.Done:
			return a.fail(ctx, r, errf(http.StatusConflict, "idempotency_key_in_flight", "a request with this Idempotency-Key is still in progress"), nil)
		default:
			return prev.StatusCode, prev.Body, map[string]string{"Idempotent-Replayed": "true"}
		}
	}
	status, body, hdr := a.run(ctx, r, rt, params)
	// A server error or a limit (429) says nothing about the request:
	// the key is forgotten, so the same request may be sent again.
	if status >= 500 || status == http.StatusTooManyRequests {
		if err := a.Idem.AbortIdempotent(ctx, scope, key); err != nil {
			a.Log.ErrorContext(ctx, "abort idempotency key", "err", err)
		}
		return status, body, hdr
	}
	if err := a.Idem.FinishIdempotent(ctx, scope, key, core.IdempotencyRecord{Hash: hash, Done: true, StatusCode: status, Body: body, ExpiresAt: now.Add(a.Config.IdempotencyTTL)}); err != nil {
		a.Log.ErrorContext(ctx, "store idempotent response", "err", err)
	}
	return status, body, hdr
}

// fail writes the error format, mapping runner and core errors.
func (a *API) fail(ctx context.Context, r *request, err error, hdr map[string]string) (int, []byte, map[string]string) {
	ae := toAPIError(err)
	if ae.Status >= 500 {
		a.Log.ErrorContext(ctx, "request failed", "method", r.HTTPMethod, "path", r.Path, "err", err)
	}
	body := map[string]any{"code": ae.Code, "message": ae.Message}
	if len(ae.Details) > 0 {
		body["details"] = ae.Details
	}
	b, _ := json.Marshal(map[string]any{"error": body})
	return ae.Status, b, hdr
}

func toAPIError(err error) *apiError { return runspec.Classify(err) }

// decodeStrict decodes exactly one JSON object into v, refusing unknown
// fields.
func decodeStrict(body []byte, v any, optional bool) error { return runspec.Decode(body, v, optional) }

func intQuery(r *request, name string, def, min, max int) (int, error) {
	v, ok := r.query(name)
	if !ok || v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min {
		return 0, errf(http.StatusBadRequest, "invalid_query", "%s must be an integer ≥ %d", name, min)
	}
	if max > 0 && n > max {
		n = max
	}
	return n, nil
}

// Routes lists the API's routes as "METHOD /path", a path parameter as
// {} (for the OpenAPI document's test).
func Routes() []string {
	var out []string
	for _, rt := range (&API{}).routes() {
		out = append(out, rt.method+" /"+strings.Join(rt.parts, "/"))
	}
	return out
}
