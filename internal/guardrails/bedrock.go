package guardrails

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/baton-agents/baton/internal/awsenv"
)

// BedrockType is the rule type of an Amazon Bedrock Guardrails rule in
// the agents file: {"type": "bedrock", "guardrail_id": "…",
// "guardrail_version": "1", "region": "eu-west-1"}.
//
// Every process validates such a rule (this file links no AWS SDK
// client); the rule that calls ApplyGuardrail is
// internal/guardrails/bedrock, which only the processes that run steps
// link (app.Features.BedrockGuardrails: the worker and baton dev) and
// hand to Build as Deps.Bedrock.
const BedrockType = "bedrock"

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

// BedrockBuilder builds the Amazon Bedrock Guardrails rule of a
// validated configuration, its client made from the process's AWS
// configuration (load).
type BedrockBuilder func(cfg BedrockConfig, load awsenv.Loader) (Rule, error)

func init() { Register(BedrockType, newBedrock) }

// newBedrock validates a bedrock rule and builds it with d.Bedrock. A
// process that does not link the rule (d.Bedrock nil) refuses it where
// the checks run; where they never run (d.ValidateOnly) the rule is
// validated only and denies if it is ever checked.
func newBedrock(raw json.RawMessage, d Deps) (Rule, error) {
	var cfg BedrockConfig
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	switch {
	case d.Bedrock != nil:
		if d.AWS == nil {
			return nil, errors.New("bedrock rules need the AWS configuration, which this process was built without")
		}
		return d.Bedrock(cfg, d.AWS)
	case d.ValidateOnly:
		return unlinkedBedrock{cfg}, nil
	}
	return nil, errors.New("this process runs steps but does not link Amazon Bedrock Guardrails: its features must include internal/guardrails/bedrock (app.Features.BedrockGuardrails, as the worker's and baton dev's do)")
}

// unlinkedBedrock is a validated bedrock rule in a process that never
// checks it. Checked anyway, it denies (never an error, which on_error
// "allow" would skip): a guardrail is never silently left out.
type unlinkedBedrock struct{ cfg BedrockConfig }

func (u unlinkedBedrock) Check(context.Context, Subject) (Verdict, error) {
	return Verdict{Reason: fmt.Sprintf("bedrock guardrail %s (version %s) is not linked into this process: guardrails are checked where steps run", u.cfg.GuardrailID, u.cfg.GuardrailVersion)}, nil
}
