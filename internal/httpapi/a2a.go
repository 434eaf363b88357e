package httpapi

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-agents/baton/internal/a2aserver"
	"github.com/baton-agents/baton/internal/runspec"
)

// The A2A routes (package a2aserver): an A2A-enabled agent's Agent Card
// (public, as a card is for discovery) and its JSON-RPC endpoint.
var (
	a2aRoute     = []string{"a2a", "{}"}
	a2aCardRoute = []string{"a2a", "{}", ".well-known", "agent-card.json"}
)

// a2a is the A2A adapter over this API's runner.
func (a *API) a2a() a2aserver.Handler {
	return a2aserver.Handler{Runner: a.Runner, Validator: runspec.Validator{Agents: a.Runner.Agents, Providers: a.Config.Providers},
		Log: a.Log, MaxWait: a.Config.MaxWait, MaxViewBytes: a.Config.MaxViewBytes}
}

// a2aAgent checks that the route's agent serves A2A.
func (a *API) a2aAgent(name string) error {
	if ag, ok := a.Runner.Agents.Get(name); ok && ag.A2A() != nil {
		return nil
	}
	return errf(http.StatusNotFound, "agent_not_found", "no A2A agent %q here: an agent serves A2A when the agents file sets its a2a.enabled", name)
}

// getAgentCard serves GET /a2a/{agent}/.well-known/agent-card.json.
func (a *API) getAgentCard(_ context.Context, r *request, p []string) (int, any, error) {
	if err := a.a2aAgent(p[0]); err != nil {
		return 0, nil, err
	}
	ag, _ := a.Runner.Agents.Get(p[0])
	var sec a2aserver.Security
	if a.JWT != nil {
		sec.OIDCDiscovery = strings.TrimSuffix(a.JWT.Issuer(), "/") + "/.well-known/openid-configuration"
	}
	return http.StatusOK, a2aserver.Card(ag, a.publicURL(r, "/a2a/"+p[0]), sec), nil
}

// publicURL is the absolute URL clients reach route at: the request's
// scheme and host, and whatever precedes the route in the path the
// client used (API Gateway's stage, a custom domain's base path).
func (a *API) publicURL(r *request, route string) string {
	host := r.RequestContext.DomainName
	if host == "" {
		host = r.header("Host")
	}
	scheme := r.header("X-Forwarded-Proto")
	if scheme == "" {
		scheme = "https"
	}
	prefix := ""
	if full := r.RequestContext.Path; strings.HasSuffix(full, r.Path) {
		prefix = strings.TrimSuffix(full, r.Path)
	}
	return scheme + "://" + host + prefix + route
}

// a2aCaller authorizes a JSON-RPC request on agent: the route takes
// runs:read (checked before), a method that writes runs:write.
func (a *API) a2aCaller(r *request, agent, method string, max time.Duration) (a2aserver.Caller, error) {
	if err := a.a2aAgent(agent); err != nil {
		return a2aserver.Caller{}, err
	}
	if !a2aserver.ReadMethod(method) {
		if err := checkScope(r, ScopeRunsWrite); err != nil {
			return a2aserver.Caller{}, err
		}
	}
	return a2aserver.Caller{Tenant: r.tenant, Principal: r.principal(), Scopes: r.caller.Scopes, Agent: agent, StreamMax: max}, nil
}

// headers are a request's headers as net/http has them.
func (r *request) headers() http.Header {
	h := http.Header{}
	for k, v := range r.Headers {
		h.Set(k, v)
	}
	for k, vs := range r.MultiValueHeaders {
		h[http.CanonicalHeaderKey(k)] = vs
	}
	return h
}

// postA2A serves POST /a2a/{agent} behind the buffered integration
// (Handle): a stream is written into the response for at most MaxWait.
func (a *API) postA2A(ctx context.Context, r *request, p []string) (int, any, error) {
	c, err := a.a2aCaller(r, p[0], a2aserver.Method(r.body), a.Config.MaxWait)
	if err != nil {
		return 0, nil, err
	}
	status, hdr, body := a.serveA2A(ctx, c, r, r.body)
	return status, rawBody{headers: hdr, body: body}, nil
}

// serveA2A answers a JSON-RPC request whole (a stream, for at most
// c.StreamMax).
func (a *API) serveA2A(ctx context.Context, c a2aserver.Caller, r *request, body []byte) (int, map[string]string, []byte) {
	var buf bytes.Buffer
	resp := a2aserver.NewResponse(&buf, func() {})
	a.a2a().Serve(ctx, c, r.headers(), body, resp)
	return resp.Status, resp.Headers(), buf.Bytes()
}

// streamA2A serves POST /a2a/{agent} where the response can stream: a
// streaming method's SSE body, or any other method's JSON response and
// no body.
func (a *API) streamA2A(ctx context.Context, r *request) (events.APIGatewayProxyResponse, StreamBody, error) {
	if err := a.authenticate(ctx, r, ScopeRunsRead); err != nil {
		return events.APIGatewayProxyResponse{}, nil, err
	}
	if _, err := a.rateLimit(ctx, r); err != nil {
		return events.APIGatewayProxyResponse{}, nil, err
	}
	body, err := a.readBody(r)
	if err != nil {
		return events.APIGatewayProxyResponse{}, nil, err
	}
	agent := strings.Split(strings.Trim(r.Path, "/"), "/")[1]
	method := a2aserver.Method(body)
	c, err := a.a2aCaller(r, agent, method, maxStreamDuration)
	if err != nil {
		return events.APIGatewayProxyResponse{}, nil, err
	}
	if !a2aserver.Streaming(method) {
		status, hdr, out := a.serveA2A(ctx, c, r, body)
		return events.APIGatewayProxyResponse{StatusCode: status, Headers: hdr, Body: string(out)}, nil, nil
	}
	return events.APIGatewayProxyResponse{StatusCode: http.StatusOK, Headers: streamHeaders()}, func(ctx context.Context, w io.Writer, flush func()) error {
		a.a2a().Serve(ctx, c, r.headers(), body, a2aserver.NewResponse(w, flush))
		return nil
	}, nil
}
