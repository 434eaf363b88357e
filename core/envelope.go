package core

// Result envelope identity.
const (
	EnvelopeSchema  = "agents-api.conversation-result"
	EnvelopeVersion = 1
)

// Envelope is the versioned conversation result (schema
// agents-api.conversation-result, version 1).
type Envelope struct {
	Schema  string `json:"schema"`
	Version int    `json:"version"`
	// AgentVersion is the agents file version the run ran on.
	AgentVersion         string                `json:"agent_version,omitempty"`
	Messages             []Message             `json:"messages"`
	MessagesTruncated    bool                  `json:"messages_truncated,omitempty"`
	ToolExecutionResults []ToolExecutionResult `json:"tool_execution_results"`
	ToolAuditEvents      []AuditEvent          `json:"tool_audit_events"`
	Events               []Event               `json:"events"`
	TurnCount            int                   `json:"turn_count"`
	FinalContent         string                `json:"final_content"`
	Usage                map[string]any        `json:"usage"`
	RequestMetadata      map[string]any        `json:"request_metadata"`
	Completed            bool                  `json:"completed"`
	Status               RunStatus             `json:"status,omitempty"`
	Budget               string                `json:"budget,omitempty"`
	Interrupted          map[string]any        `json:"interrupted,omitempty"`
	Error                *RunError             `json:"error,omitempty"`
	// Cost is what the run cost (nil when the runtime prices nothing);
	// request_metadata.cost repeats it.
	Cost *RunCost `json:"cost,omitempty"`
}

// BuildEnvelope assembles the result envelope of a run from its state,
// its session transcript (earlier runs included) and the records the run
// produced. Both runners build envelopes with this one function.
func BuildEnvelope(st RunState, transcript []Message, events []Event, results []ToolExecutionResult, audit []AuditEvent) Envelope {
	var own []Message
	for i, m := range transcript {
		if m.Seq >= st.FirstMsgSeq {
			own = transcript[i:]
			break
		}
	}
	env := Envelope{
		Schema:               EnvelopeSchema,
		Version:              EnvelopeVersion,
		AgentVersion:         st.Config.AgentVersion,
		Messages:             nonNil(transcript),
		ToolExecutionResults: nonNil(results),
		ToolAuditEvents:      nonNil(audit),
		Events:               nonNil(events),
		TurnCount:            st.Turn,
		FinalContent:         FinalContent(own),
		Usage:                st.Usage.Map(),
		RequestMetadata:      withCost(st.RequestMetadata, st.Cost),
		Completed:            st.Status == StatusCompleted,
		Status:               st.Status,
		Budget:               st.Budget,
		Interrupted:          st.Interrupted,
		Error:                st.Error,
		Cost:                 st.Cost.clone(),
	}
	if env.Usage == nil {
		env.Usage = map[string]any{}
	}
	if env.RequestMetadata == nil {
		env.RequestMetadata = map[string]any{}
	}
	return env
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
