package a2aserver

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/runstream"
)

// Method is the JSON-RPC method of a request body ("" when the body is
// not a JSON object with a string method).
func Method(body []byte) string {
	var m struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(body, &m)
	return m.Method
}

// Streaming reports whether a method answers with a stream.
func Streaming(method string) bool {
	return method == "SendStreamingMessage" || method == "SubscribeToTask"
}

// ReadMethod reports whether a method only reads (runs:read is enough).
func ReadMethod(method string) bool {
	switch method {
	case "GetTask", "ListTasks", "SubscribeToTask", "GetTaskPushNotificationConfig", "ListTaskPushNotificationConfigs", "GetExtendedAgentCard":
		return true
	}
	return false
}

// Serve answers one JSON-RPC request of c through the SDK's JSON-RPC
// binding, writing the response to rw: a JSON response, or for a
// streaming method an SSE stream (a keep-alive comment every
// runstream.KeepAliveEvery while nothing else is sent).
//
// Before the SDK, it refuses what the SDK would answer unhelpfully: a
// batch (an array; -32600, batches are not served), and a method of A2A
// 0.3 (message/send…; -32009 naming the 1.0 method, whatever the
// A2A-Version header says).
func (h Handler) Serve(ctx context.Context, c Caller, header http.Header, body []byte, rw http.ResponseWriter) {
	if trimmed := bytes.TrimLeft(body, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '[' {
		writeRPCError(rw, nil, -32600, "batch requests are not served: send one JSON-RPC request per HTTP request")
		return
	}
	if m := Method(body); v03Methods[m] != "" {
		writeRPCError(rw, requestID(body), -32009, fmt.Sprintf("%s is an A2A 0.3 method; this server speaks A2A %s: call %s", m, strings.Join(Versions, ", "), v03Methods[m]))
		return
	}
	ctx = context.WithValue(ctx, callerKey{}, c)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "/", bytes.NewReader(body))
	req.Header = header
	a2asrv.NewJSONRPCHandler(requestHandler{h: h}, a2asrv.WithTransportKeepAlive(runstream.KeepAliveEvery)).ServeHTTP(rw, req)
}

// v03Methods are the JSON-RPC methods of A2A 0.3, each with its 1.0
// name.
var v03Methods = map[string]string{
	"message/send": "SendMessage", "message/stream": "SendStreamingMessage",
	"tasks/get": "GetTask", "tasks/list": "ListTasks", "tasks/cancel": "CancelTask", "tasks/resubscribe": "SubscribeToTask",
	"tasks/pushNotificationConfig/set": "CreateTaskPushNotificationConfig", "tasks/pushNotificationConfig/get": "GetTaskPushNotificationConfig",
	"tasks/pushNotificationConfig/list": "ListTaskPushNotificationConfigs", "tasks/pushNotificationConfig/delete": "DeleteTaskPushNotificationConfig",
	"agent/getAuthenticatedExtendedCard": "GetExtendedAgentCard",
}

// requestID is a request body's JSON-RPC id when it is a string or a
// number of sensible size (null otherwise).
func requestID(body []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(body, &m)
	if len(m.ID) == 0 || len(m.ID) > 256 || m.ID[0] == '{' || m.ID[0] == '[' {
		return nil
	}
	return m.ID
}

// writeRPCError answers a JSON-RPC request with an error.
func writeRPCError(rw http.ResponseWriter, id json.RawMessage, code int, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(http.StatusOK)
	_, _ = rw.Write(b)
}

// shortID is an id as an error message quotes it: a long one cut to its
// first 64 bytes and its length.
func shortID[T ~string](id T) string {
	const max = 64
	if len(id) <= max {
		return string(id)
	}
	return fmt.Sprintf("%s… (%d bytes)", strings.ToValidUTF8(string(id[:max]), ""), len(id))
}

// Response is an http.ResponseWriter (and Flusher) over a writer: the
// SDK's handler writes the response's head to it and its body to w.
type Response struct {
	Status int
	header http.Header
	w      io.Writer
	flush  func()
}

// NewResponse returns a Response writing its body to w and flushing with
// flush.
func NewResponse(w io.Writer, flush func()) *Response {
	return &Response{header: http.Header{}, w: w, flush: flush}
}

func (r *Response) Header() http.Header { return r.header }

func (r *Response) Write(b []byte) (int, error) {
	if r.Status == 0 {
		r.Status = http.StatusOK
	}
	return r.w.Write(b)
}

func (r *Response) WriteHeader(status int) {
	if r.Status == 0 {
		r.Status = status
	}
}

func (r *Response) Flush() { r.flush() }

// Headers are the response's headers, one value each.
func (r *Response) Headers() map[string]string {
	out := map[string]string{}
	for k, vs := range r.header {
		if len(vs) > 0 {
			out[k] = vs[0]
		}
	}
	return out
}

// Security is how callers of a deployment authenticate: Baton API
// tokens always; OIDCDiscovery is the OpenID Connect discovery URL of the
// JWT issuer the deployment trusts ("" without JWT callers).
type Security struct {
	OIDCDiscovery string
}

// Card is the Agent Card of agent a, whose JSON-RPC endpoint is
// endpoint (the absolute URL of /a2a/{agent}).
func Card(a *agents.Agent, endpoint string, sec Security) *a2a.AgentCard {
	spec := a.A2A()
	desc := spec.Description
	if desc == "" {
		desc = a.Spec.Label
	}
	if desc == "" {
		desc = "The Baton agent " + a.Spec.Slug + "."
	}
	schemes := a2a.NamedSecuritySchemes{
		"bearer": a2a.HTTPAuthSecurityScheme{Scheme: "Bearer", Description: "A Baton API token (or, where the deployment trusts an OIDC issuer, its JWT)."},
	}
	reqs := a2a.SecurityRequirementsOptions{{"bearer": {}}}
	if sec.OIDCDiscovery != "" {
		schemes["oidc"] = a2a.OpenIDConnectSecurityScheme{OpenIDConnectURL: sec.OIDCDiscovery, Description: "A JWT of the OIDC issuer this deployment trusts, sent as a bearer token."}
		reqs = append(reqs, a2a.SecurityRequirements{"oidc": {}})
	}
	card := &a2a.AgentCard{
		Name: a.Spec.Slug, Description: desc, Version: cmp.Or(spec.Version, "1.0.0"),
		SupportedInterfaces: []*a2a.AgentInterface{a2a.NewAgentInterface(endpoint, a2a.TransportProtocolJSONRPC)},
		Capabilities:        a2a.AgentCapabilities{Streaming: true, PushNotifications: a.PushNotifications()},
		DefaultInputModes:   []string{"text/plain", "application/json"},
		DefaultOutputModes:  []string{"text/plain", "application/json"},
		SecuritySchemes:     schemes, SecurityRequirements: reqs,
		Skills: []a2a.AgentSkill{},
	}
	for _, s := range spec.Skills {
		card.Skills = append(card.Skills, a2a.AgentSkill{ID: s.ID, Name: s.Name, Description: s.Description,
			Tags: append([]string{}, s.Tags...), Examples: s.Examples, InputModes: s.InputModes, OutputModes: s.OutputModes})
	}
	return card
}
