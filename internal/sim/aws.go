package sim

import (
	"context"
	"fmt"
	"sync"

	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
)

// SDK faults, in the emulator mode: the next DynamoDB or SQS call of a
// delivery fails in its client, as AWS fails calls.
const (
	FaultSDKThrottle = "sdk_throttled"          // ProvisionedThroughputExceeded / ThrottlingException, before the call
	FaultSDKTimeout  = "sdk_timeout"            // the call times out before it is sent
	FaultSDK5xx      = "sdk_5xx_after_applying" // the call is applied, then answered 500 (the SDK retries it)
	FaultSDKTxCancel = "sdk_transaction_canceled"
)

var sdkFaults = []string{FaultSDKThrottle, FaultSDKTimeout, FaultSDK5xx, FaultSDKTxCancel}

// awsFaults injects the armed SDK fault into the next call of a client.
type awsFaults struct {
	sim   *sim
	mu    sync.Mutex
	armed string
}

func (a *awsFaults) arm(fault string) {
	a.mu.Lock()
	a.armed = fault
	a.mu.Unlock()
}

// take disarms and returns the armed SDK fault, if one is armed and fits
// the operation.
func (a *awsFaults) take(op string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	f := a.armed
	switch {
	case f == FaultSDKTxCancel && op != "TransactWriteItems":
		return ""
	case f != FaultSDKThrottle && f != FaultSDKTimeout && f != FaultSDK5xx && f != FaultSDKTxCancel:
		return ""
	}
	a.armed = ""
	a.sim.fired(f)
	return f
}

// statusErr is an HTTP error status, which the SDK's retryer retries
// when it is a 5xx.
type statusErr int

func (e statusErr) Error() string       { return fmt.Sprintf("sim: injected HTTP %d", int(e)) }
func (e statusErr) HTTPStatusCode() int { return int(e) }

// instrument adds the fault injector to a client, after its retry
// middleware, so each attempt passes through it.
func (a *awsFaults) instrument(st *middleware.Stack, service string) error {
	return st.Finalize.Add(middleware.FinalizeMiddlewareFunc("BatonSimFaults", func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
		op := middleware.GetOperationName(ctx)
		switch a.take(op) {
		case FaultSDKThrottle:
			code := "ThrottlingException"
			if service == "dynamodb" {
				code = "ProvisionedThroughputExceededException"
			}
			return middleware.FinalizeOutput{}, middleware.Metadata{}, &smithy.GenericAPIError{Code: code, Message: "sim: injected", Fault: smithy.FaultServer}
		case FaultSDKTimeout:
			return middleware.FinalizeOutput{}, middleware.Metadata{}, fmt.Errorf("sim: injected timeout of %s %s: %w", service, op, context.DeadlineExceeded)
		case FaultSDK5xx:
			out, md, err := next.HandleFinalize(ctx, in)
			if err != nil {
				return out, md, err
			}
			return middleware.FinalizeOutput{}, md, statusErr(500)
		case FaultSDKTxCancel:
			return middleware.FinalizeOutput{}, middleware.Metadata{}, &smithy.GenericAPIError{Code: "TransactionCanceledException", Message: "sim: injected", Fault: smithy.FaultClient}
		}
		return next.HandleFinalize(ctx, in)
	}), middleware.After)
}
