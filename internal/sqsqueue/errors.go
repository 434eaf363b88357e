package sqsqueue

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/baton-agents/baton/core"
)

// translate turns an SDK error into the errors core knows: a missing
// queue is core.ErrNotFound, a transient failure is core.Retryable, and
// anything else is returned as it is (permanent).
func translate(err error) error {
	var missing *types.QueueDoesNotExist
	switch {
	case err == nil:
		return nil
	case errors.As(err, &missing):
		return fmt.Errorf("%w: %w", core.ErrNotFound, err)
	case transient(err):
		return core.Retryable(err)
	}
	return err
}

// transient reports whether err is worth retrying later: throttling,
// a server-side fault or a failed connection. The caller's own
// cancellation is not.
func transient(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if retry.IsErrorRetryables(retry.DefaultRetryables).IsErrorRetryable(err) == aws.TrueTernary {
		return true
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		return transientCode(api.ErrorCode()) || api.ErrorFault() == smithy.FaultServer
	}
	return false
}

// queryPrefix starts the legacy query-protocol error codes that SQS sends
// in its x-amzn-query-error header and the SDK reports as ErrorCode.
const queryPrefix = "AWS.SimpleQueueService."

// transientCode reports whether an SQS error code (of a request or of a
// batch entry) names a throttle or a passing server-side condition.
func transientCode(code string) bool {
	code = strings.TrimPrefix(code, queryPrefix)
	if _, ok := retry.DefaultThrottleErrorCodes[code]; ok {
		return true
	}
	switch code {
	case "KmsThrottled", "OverLimit", "InternalError", "InternalFailure", "ServiceUnavailable":
		return true
	}
	return false
}
