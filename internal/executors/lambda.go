package executors

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/awsenv"
)

// LambdaInvoker invokes Lambda functions; awsenv.Lambda's client
// implements it.
type LambdaInvoker interface {
	// Invoke invokes function synchronously (RequestResponse) with
	// payload and returns its X-Amz-Function-Error ("" unless the
	// function failed) and its payload.
	Invoke(ctx context.Context, function string, payload []byte) (functionError string, out []byte, err error)
}

var _ LambdaInvoker = (*awsenv.LambdaClient)(nil)

// LambdaConfig configures a lambda tool executor.
type LambdaConfig struct {
	// Function is the function's name or ARN, optionally with a version or
	// alias qualifier ("name:alias").
	Function string
	// Client invokes the function; it is built once per cold start and
	// shared by every lambda tool.
	Client LambdaInvoker
	// Timeout bounds one invocation; zero means DefaultTimeout.
	Timeout time.Duration
	// MaxResponseBytes caps the response payload; zero means
	// DefaultMaxResponseBytes.
	MaxResponseBytes int64
}

// Lambda executes a server tool by invoking a Lambda function
// synchronously (RequestResponse). The event is the http executor's body
// plus "idempotency_key" (<run_id>:<tool_call_id>), since a Lambda event
// has no headers.
//
// A JSON payload is the tool's output (an object with a boolean "success"
// is a result envelope). A function error (the function threw, timed out
// or ran out of memory) is a failed result with error_type function_error
// carrying the function's errorType and errorMessage; an oversized or
// non-JSON payload is a failed result (response_too_large,
// invalid_response). An error of the Invoke API itself (throttling,
// missing function, no permission, a timeout) is an error (an
// executor_exception result).
type Lambda struct {
	tool     string
	function string
	client   LambdaInvoker
	limits
}

var _ core.ToolExecutor = (*Lambda)(nil)

// NewLambda validates c and returns the executor of tool.
func NewLambda(tool string, c LambdaConfig) (*Lambda, error) {
	if strings.TrimSpace(c.Function) == "" {
		return nil, fmt.Errorf("lambda executor: function (name or ARN) is required")
	}
	if c.Client == nil {
		return nil, fmt.Errorf("lambda executor: no Lambda client (AWS configuration is not available)")
	}
	return &Lambda{tool: tool, function: c.Function, client: c.Client, limits: newLimits(c.Timeout, c.MaxResponseBytes)}, nil
}

// lambdaError is the payload of a function error.
type lambdaError struct {
	ErrorMessage string `json:"errorMessage"`
	ErrorType    string `json:"errorType"`
}

// Execute invokes the function with the call.
func (l *Lambda) Execute(ctx context.Context, call core.ToolCall) (any, error) {
	return execute(ctx, l, call, true)
}

// Call invokes the function synchronously with body as its event and
// returns its JSON payload; key is not sent (a Lambda event has no
// headers: put it in body).
func (l *Lambda) Call(ctx context.Context, body []byte, _ string) (json.RawMessage, error) {
	callCtx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	fe, payload, err := l.client.Invoke(callCtx, l.function, body)
	if err != nil {
		if timedOut(ctx, callCtx) {
			return nil, fmt.Errorf("invoke lambda %s timed out after %s: %w", l.function, l.timeout, context.DeadlineExceeded)
		}
		return nil, fmt.Errorf("invoke lambda %s: %w", l.function, err)
	}
	if fe != "" {
		var le lambdaError
		_ = json.Unmarshal(payload, &le)
		msg := fmt.Sprintf("lambda function %s failed (%s)", l.function, fe)
		md := map[string]any{"function_error": fe}
		switch {
		case le.ErrorType != "" || le.ErrorMessage != "":
			if le.ErrorType != "" {
				msg += ": " + le.ErrorType
				md["lambda_error_type"] = le.ErrorType
			}
			if le.ErrorMessage != "" {
				msg += ": " + excerpt([]byte(le.ErrorMessage), nil)
			}
		case len(payload) > 0:
			msg += ": " + excerpt(payload, nil)
		}
		return nil, &Failure{Type: ErrTypeFunctionError, Message: msg, Metadata: md}
	}
	if int64(len(payload)) > l.max {
		return nil, &Failure{Type: ErrTypeResponseTooLarge, Message: fmt.Sprintf("lambda function %s returned a payload larger than the %d-byte limit", l.function, l.max)}
	}
	if !validJSON(payload) {
		return nil, &Failure{Type: ErrTypeInvalidResponse, Message: fmt.Sprintf("lambda function %s returned a payload that is not JSON: %s", l.function, excerpt(payload, nil))}
	}
	return payload, nil
}
