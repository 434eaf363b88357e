package guardrails

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/baton-agents/baton/core"
)

// BedrockType is the rule type of an Amazon Bedrock Guardrails rule in
// the agents file: {"type": "bedrock", "guardrail_id": "…",
// "guardrail_version": "1", "region": "eu-west-1"}.
const BedrockType = "bedrock"

// BedrockAPI is the part of the bedrockruntime client a Bedrock rule
// uses; *bedrockruntime.Client (awsenv.BedrockRuntime) implements it.
type BedrockAPI interface {
	ApplyGuardrail(ctx context.Context, in *bedrockruntime.ApplyGuardrailInput, opts ...func(*bedrockruntime.Options)) (*bedrockruntime.ApplyGuardrailOutput, error)
}

var _ BedrockAPI = (*bedrockruntime.Client)(nil)

// BedrockConfig configures a Bedrock rule. GuardrailID is the guardrail's
// id or ARN; GuardrailVersion is a version number or DRAFT (in the agents
// file a JSON string or number); Region, when set, is the region the
// guardrail lives in (the client's region otherwise).
type BedrockConfig struct {
	GuardrailID      string `json:"guardrail_id"`
	GuardrailVersion string `json:"guardrail_version"`
	Region           string `json:"region,omitempty"`
}

// The service's patterns for guardrailIdentifier and guardrailVersion.
var (
	guardrailIDPattern      = regexp.MustCompile(`^(([a-z0-9]+)|(arn:aws(-[^:]+)?:bedrock:[a-z0-9-]{1,20}:[0-9]{12}:guardrail/[a-z0-9]+))$`)
	guardrailVersionPattern = regexp.MustCompile(`^(([1-9][0-9]{0,7})|(DRAFT))$`)
	regionPattern           = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]+$`)
)

// UnmarshalJSON reads the rule's fields; guardrail_version may be a
// string or a number, and the rule's other keys (type and whatever the
// rule parser reads) are ignored.
func (c *BedrockConfig) UnmarshalJSON(b []byte) error {
	var raw struct {
		GuardrailID      string          `json:"guardrail_id"`
		GuardrailVersion json.RawMessage `json:"guardrail_version"`
		Region           string          `json:"region"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("bedrock rule: %w", err)
	}
	*c = BedrockConfig{GuardrailID: raw.GuardrailID, Region: raw.Region}
	if v := bytes.TrimSpace(raw.GuardrailVersion); len(v) > 0 && string(v) != "null" {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			var n json.Number
			if json.Unmarshal(v, &n) != nil {
				return fmt.Errorf("bedrock rule: guardrail_version must be a version number or \"DRAFT\", got %s", v)
			}
			s = n.String()
		}
		c.GuardrailVersion = s
	}
	return nil
}

// Validate checks the configuration: the id (or ARN) is required, the
// version is required and is a number or DRAFT, and the region, when
// set, looks like one.
func (c BedrockConfig) Validate() error {
	switch {
	case strings.TrimSpace(c.GuardrailID) == "":
		return errors.New("bedrock rule: guardrail_id is required")
	case !guardrailIDPattern.MatchString(c.GuardrailID):
		return fmt.Errorf("bedrock rule: guardrail_id %q is neither a guardrail id nor a guardrail ARN", c.GuardrailID)
	case strings.TrimSpace(c.GuardrailVersion) == "":
		return errors.New("bedrock rule: guardrail_version is required (a version number or \"DRAFT\")")
	case !guardrailVersionPattern.MatchString(c.GuardrailVersion):
		return fmt.Errorf("bedrock rule: guardrail_version %q must be a version number (1 or more) or \"DRAFT\"", c.GuardrailVersion)
	case c.Region != "" && !regionPattern.MatchString(c.Region):
		return fmt.Errorf("bedrock rule: region %q is not an AWS region", c.Region)
	}
	return nil
}

// NewBedrock builds an Amazon Bedrock Guardrails rule on client.
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
func NewBedrock(cfg BedrockConfig, client BedrockAPI) (Rule, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if client == nil {
		return nil, errors.New("bedrock rule: a bedrockruntime client is required")
	}
	return &bedrockRule{cfg: cfg, client: client}, nil
}

// NewBedrockFromJSON decodes a rule object of the agents file
// ({"type": "bedrock", …}) and builds the rule on client.
func NewBedrockFromJSON(raw json.RawMessage, client BedrockAPI) (Rule, error) {
	var cfg BedrockConfig
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return nil, err
	}
	return NewBedrock(cfg, client)
}

type bedrockRule struct {
	cfg    BedrockConfig
	client BedrockAPI
}

// Check applies the guardrail to what s holds at its stage.
func (r *bedrockRule) Check(ctx context.Context, s Subject) (Verdict, error) {
	var (
		texts  []string
		source = types.GuardrailContentSourceInput
		what   string
	)
	switch s.Stage {
	case StageInput:
		texts, what = unansweredUserTexts(s.Messages), "the input"
	case StageOutput:
		if strings.TrimSpace(s.Message.Content) != "" {
			texts = []string{s.Message.Content}
		}
		source, what = types.GuardrailContentSourceOutput, "the reply"
	case StageTool:
		args := s.Args
		if args == nil {
			args = map[string]any{}
		}
		b, err := json.Marshal(args)
		if err != nil {
			return Verdict{}, fmt.Errorf("%s: encode the arguments of %s: %w", r.name(), s.Tool, err)
		}
		texts, what = []string{string(b)}, fmt.Sprintf("the arguments of tool %q", s.Tool)
	default:
		return Verdict{}, fmt.Errorf("%s: unknown stage %q", r.name(), s.Stage)
	}
	if len(texts) == 0 {
		return Verdict{Allow: true}, nil
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
		return Verdict{}, fmt.Errorf("%s: %w", r.name(), err)
	}
	return r.verdict(s.Stage, what, texts, out)
}

func (r *bedrockRule) name() string {
	return fmt.Sprintf("bedrock guardrail %s (version %s)", r.cfg.GuardrailID, r.cfg.GuardrailVersion)
}

// verdict maps a response for texts (the blocks sent) to a verdict.
func (r *bedrockRule) verdict(stage Stage, what string, texts []string, out *bedrockruntime.ApplyGuardrailOutput) (Verdict, error) {
	switch out.Action {
	case types.GuardrailActionNone:
		return Verdict{Allow: true}, nil
	case types.GuardrailActionGuardrailIntervened:
	default:
		return Verdict{}, fmt.Errorf("%s: unknown action %q", r.name(), out.Action)
	}
	blocked, masked := assess(out.Assessments)
	deny := func(detail string) (Verdict, error) {
		return Verdict{Reason: fmt.Sprintf("%s blocked %s: %s", r.name(), what, detail)}, nil
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
	if stage == StageTool {
		return deny(maskedWhat + " in the arguments, which cannot be masked")
	}
	// The outputs align with the blocks sent: outputs[i] is the masked
	// text of texts[i].
	if len(out.Outputs) != len(texts) {
		return Verdict{}, fmt.Errorf("%s: the guardrail masked %s but returned %d outputs for %d texts", r.name(), what, len(out.Outputs), len(texts))
	}
	last := len(texts) - 1
	for i, o := range out.Outputs[:last] {
		if aws.ToString(o.Text) != texts[i] {
			return deny(maskedWhat + " in an earlier user message, which cannot be masked")
		}
	}
	if out.Outputs[last].Text == nil {
		return Verdict{}, fmt.Errorf("%s: the guardrail masked %s but returned no text", r.name(), what)
	}
	masked0 := aws.ToString(out.Outputs[last].Text)
	return Verdict{Allow: true, Replacement: &masked0}, nil
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
