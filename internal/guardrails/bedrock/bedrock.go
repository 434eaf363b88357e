package bedrock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/guardrails"
)

// API is the part of the bedrockruntime client a Bedrock rule uses;
// *bedrockruntime.Client implements it.
type API interface {
	ApplyGuardrail(ctx context.Context, in *bedrockruntime.ApplyGuardrailInput, opts ...func(*bedrockruntime.Options)) (*bedrockruntime.ApplyGuardrailOutput, error)
}

var _ API = (*bedrockruntime.Client)(nil)

// New builds an Amazon Bedrock Guardrails rule on client.
//
// It calls ApplyGuardrail once per check, with one text content block per
// text it checks:
//   - input stage (source INPUT): the user messages the model has not yet
//     answered — those after the newest assistant or tool_call message of
//     the model's view (normally the one new user message; also steering
//     messages drained with it), oldest first. Earlier user messages were
//     checked on the turns that answered them. With no such message (a
//     turn after tool results) nothing is sent and the rule allows.
//   - tool stage (source INPUT): the call's arguments as one JSON text.
//   - output stage (source OUTPUT): the reply's text content (its tool
//     calls are checked at the tool stage). An empty reply is allowed
//     without a call.
//
// The response maps to a verdict: action NONE allows. On
// GUARDRAIL_INTERVENED, when no policy BLOCKED and the sensitive
// information policy only masked (ANONYMIZED), the rule allows with
// Replacement set to the masked text — at the input stage the newest user
// message's, at the output stage the reply's; masking anywhere else (an
// earlier user message, tool arguments) cannot be applied, so it denies.
// Any other intervention denies with a reason that names the guardrail and
// the policies that blocked (denied topics, content filters, word
// policies, sensitive information types and regexes, contextual grounding
// filters) but never the text they matched. API errors (validation,
// access denied, throttling after the client's retries) are errors, for
// the agent's on_error to decide.
func New(cfg guardrails.BedrockConfig, client API) (guardrails.Rule, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if client == nil {
		return nil, errors.New("bedrock rule: a bedrockruntime client is required")
	}
	return &rule{cfg: cfg, client: client}, nil
}

// NewFromJSON decodes a rule object of the agents file
// ({"type": "bedrock", …}) and builds the rule on client.
func NewFromJSON(raw json.RawMessage, client API) (guardrails.Rule, error) {
	var cfg guardrails.BedrockConfig
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return nil, err
	}
	return New(cfg, client)
}

type rule struct {
	cfg    guardrails.BedrockConfig
	client API
}

// Check applies the guardrail to what s holds at its stage.
func (r *rule) Check(ctx context.Context, s guardrails.Subject) (guardrails.Verdict, error) {
	var (
		texts  []string
		source = types.GuardrailContentSourceInput
		what   string
	)
	switch s.Stage {
	case guardrails.StageInput:
		texts, what = unansweredUserTexts(s.Messages), "the input"
	case guardrails.StageOutput:
		if strings.TrimSpace(s.Message.Content) != "" {
			texts = []string{s.Message.Content}
		}
		source, what = types.GuardrailContentSourceOutput, "the reply"
	case guardrails.StageTool:
		args := s.Args
		if args == nil {
			args = map[string]any{}
		}
		b, err := json.Marshal(args)
		if err != nil {
			return guardrails.Verdict{}, fmt.Errorf("%s: encode the arguments of %s: %w", r.name(), s.Tool, err)
		}
		texts, what = []string{string(b)}, fmt.Sprintf("the arguments of tool %q", s.Tool)
	default:
		return guardrails.Verdict{}, fmt.Errorf("%s: unknown stage %q", r.name(), s.Stage)
	}
	if len(texts) == 0 {
		return guardrails.Verdict{Allow: true}, nil
	}
	in := &bedrockruntime.ApplyGuardrailInput{
		GuardrailIdentifier: aws.String(r.cfg.GuardrailID),
		GuardrailVersion:    aws.String(r.cfg.GuardrailVersion),
		Source:              source,
	}
	for _, t := range texts {
		in.Content = append(in.Content, &types.GuardrailContentBlockMemberText{Value: types.GuardrailTextBlock{Text: aws.String(t)}})
	}
	var opts []func(*bedrockruntime.Options)
	if r.cfg.Region != "" {
		region := r.cfg.Region
		opts = append(opts, func(o *bedrockruntime.Options) { o.Region = region })
	}
	out, err := r.client.ApplyGuardrail(ctx, in, opts...)
	if err != nil {
		return guardrails.Verdict{}, fmt.Errorf("%s: %w", r.name(), err)
	}
	return r.verdict(s.Stage, what, texts, out)
}

func (r *rule) name() string {
	return fmt.Sprintf("bedrock guardrail %s (version %s)", r.cfg.GuardrailID, r.cfg.GuardrailVersion)
}

// verdict maps a response for texts (the blocks sent) to a verdict.
func (r *rule) verdict(stage guardrails.Stage, what string, texts []string, out *bedrockruntime.ApplyGuardrailOutput) (guardrails.Verdict, error) {
	switch out.Action {
	case types.GuardrailActionNone:
		return guardrails.Verdict{Allow: true}, nil
	case types.GuardrailActionGuardrailIntervened:
	default:
		return guardrails.Verdict{}, fmt.Errorf("%s: unknown action %q", r.name(), out.Action)
	}
	blocked, masked := assess(out.Assessments)
	deny := func(detail string) (guardrails.Verdict, error) {
		return guardrails.Verdict{Reason: fmt.Sprintf("%s blocked %s: %s", r.name(), what, detail)}, nil
	}
	if len(blocked) > 0 {
		return deny(strings.Join(blocked, "; "))
	}
	if len(masked) == 0 {
		// An intervention without a blocking or masking policy this
		// rule knows (a newer policy type): fail closed.
		return deny("the guardrail intervened")
	}
	maskedWhat := "sensitive information (" + strings.Join(masked, ", ") + ")"
	if stage == guardrails.StageTool {
		return deny(maskedWhat + " in the arguments, which cannot be masked")
	}
	// The outputs align with the blocks sent: outputs[i] is the masked
	// text of texts[i].
	if len(out.Outputs) != len(texts) {
		return guardrails.Verdict{}, fmt.Errorf("%s: the guardrail masked %s but returned %d outputs for %d texts", r.name(), what, len(out.Outputs), len(texts))
	}
	last := len(texts) - 1
	for i, o := range out.Outputs[:last] {
		if aws.ToString(o.Text) != texts[i] {
			return deny(maskedWhat + " in an earlier user message, which cannot be masked")
		}
	}
	if out.Outputs[last].Text == nil {
		return guardrails.Verdict{}, fmt.Errorf("%s: the guardrail masked %s but returned no text", r.name(), what)
	}
	masked0 := aws.ToString(out.Outputs[last].Text)
	return guardrails.Verdict{Allow: true, Replacement: &masked0}, nil
}

// unansweredUserTexts returns the contents of the user messages after the
// newest assistant or tool_call message, oldest first.
func unansweredUserTexts(msgs []core.Message) []string {
	start := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		if r := msgs[i].Role; r == core.RoleAssistant || r == core.RoleToolCall {
			start = i + 1
			break
		}
	}
	var out []string
	for _, m := range msgs[start:] {
		if m.Role == core.RoleUser && strings.TrimSpace(m.Content) != "" {
			out = append(out, m.Content)
		}
	}
	return out
}

// assess lists what the assessments blocked (policy names, filter types
// and entity types — never the matched text) and which sensitive
// information types they masked, each sorted and without repeats.
func assess(as []types.GuardrailAssessment) (blocked, masked []string) {
	b, m := map[string]bool{}, map[string]bool{}
	detected := func(d *bool) bool { return d == nil || *d }
	for _, a := range as {
		if p := a.TopicPolicy; p != nil {
			for _, t := range p.Topics {
				if t.Action == types.GuardrailTopicPolicyActionBlocked && detected(t.Detected) {
					b[fmt.Sprintf("denied topic %q", aws.ToString(t.Name))] = true
				}
			}
		}
		if p := a.ContentPolicy; p != nil {
			for _, f := range p.Filters {
				if f.Action == types.GuardrailContentPolicyActionBlocked && detected(f.Detected) {
					b[fmt.Sprintf("content filter %s (confidence %s)", f.Type, f.Confidence)] = true
				}
			}
		}
		if p := a.WordPolicy; p != nil {
			for _, w := range p.CustomWords {
				if w.Action == types.GuardrailWordPolicyActionBlocked && detected(w.Detected) {
					b["a custom blocked word"] = true
				}
			}
			for _, w := range p.ManagedWordLists {
				if w.Action == types.GuardrailWordPolicyActionBlocked && detected(w.Detected) {
					b[fmt.Sprintf("managed word list %s", w.Type)] = true
				}
			}
		}
		if p := a.SensitiveInformationPolicy; p != nil {
			for _, e := range p.PiiEntities {
				if !detected(e.Detected) {
					continue
				}
				switch e.Action {
				case types.GuardrailSensitiveInformationPolicyActionBlocked:
					b[fmt.Sprintf("sensitive information %s", e.Type)] = true
				case types.GuardrailSensitiveInformationPolicyActionAnonymized:
					m[string(e.Type)] = true
				}
			}
			for _, x := range p.Regexes {
				if !detected(x.Detected) {
					continue
				}
				switch x.Action {
				case types.GuardrailSensitiveInformationPolicyActionBlocked:
					b[fmt.Sprintf("sensitive information regex %q", aws.ToString(x.Name))] = true
				case types.GuardrailSensitiveInformationPolicyActionAnonymized:
					m[strconv.Quote(aws.ToString(x.Name))] = true
				}
			}
		}
		if p := a.ContextualGroundingPolicy; p != nil {
			for _, f := range p.Filters {
				if f.Action == types.GuardrailContextualGroundingPolicyActionBlocked && detected(f.Detected) {
					b[fmt.Sprintf("contextual grounding %s (score %g below threshold %g)", f.Type, aws.ToFloat64(f.Score), aws.ToFloat64(f.Threshold))] = true
				}
			}
		}
	}
	return sortedKeys(b), sortedKeys(m)
}

func sortedKeys(set map[string]bool) []string {
	if len(set) == 0 {
		return nil
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
