package dynamostore

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/baton-agents/baton/core"
)

// retryableCodes are the error codes of requests that may succeed when
// sent again.
var retryableCodes = map[string]bool{
	"ProvisionedThroughputExceededException": true,
	"ThrottlingException":                    true,
	"RequestLimitExceeded":                   true,
	"InternalServerError":                    true,
	"ServiceUnavailable":                     true,
	"TransactionInProgressException":         true,
	"TransactionConflictException":           true,
	"ReplicatedWriteConflictException":       true,
	"LimitExceededException":                 true,
}

// retryableReasons are the transaction cancellation reasons that say
// nothing about the conditions and may pass when sent again.
var retryableReasons = map[string]bool{
	"TransactionConflict":           true,
	"ThrottlingError":               true,
	"ProvisionedThroughputExceeded": true,
}

// translate marks transient SDK errors core.Retryable. Condition
// failures are left to the caller, who knows what the condition meant.
func translate(err error) error {
	if err == nil || core.IsRetryable(err) {
		return err
	}
	if isRetryable(err) {
		return core.Retryable(err)
	}
	return err
}

func isRetryable(err error) bool {
	if errors.Is(err, context.Canceled) {
		return false
	}
	var api smithy.APIError
	if errors.As(err, &api) && retryableCodes[api.ErrorCode()] {
		return true
	}
	var resp *smithyhttp.ResponseError
	if errors.As(err, &resp) && resp.HTTPStatusCode() >= 500 {
		return true
	}
	var send *smithyhttp.RequestSendError
	if errors.As(err, &send) {
		return true
	}
	if reasons, ok := cancelReasons(err); ok {
		transient := false
		for _, r := range reasons {
			switch code := reasonCode(r); {
			case retryableReasons[code]:
				transient = true
			case code == "" || code == "None":
			default:
				return false
			}
		}
		return transient
	}
	return false
}

// conditionFailed reports whether a single-item write failed its
// condition, and returns the old item when DynamoDB sent it.
func conditionFailed(err error) (item, bool) {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return ccf.Item, true
	}
	return nil, false
}

// cancelReasons returns the per-item reasons of a cancelled transaction.
func cancelReasons(err error) ([]types.CancellationReason, bool) {
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		return tce.CancellationReasons, true
	}
	return nil, false
}

func reasonCode(r types.CancellationReason) string {
	if r.Code == nil {
		return ""
	}
	return *r.Code
}

// failedAt reports whether the transaction item at index i failed its
// condition.
func failedAt(reasons []types.CancellationReason, i int) bool {
	return i < len(reasons) && reasonCode(reasons[i]) == "ConditionalCheckFailed"
}

// anyConditionFailed reports whether any item of a cancelled transaction
// failed its condition.
func anyConditionFailed(err error) bool {
	reasons, ok := cancelReasons(err)
	if !ok {
		return false
	}
	for i := range reasons {
		if failedAt(reasons, i) {
			return true
		}
	}
	return false
}

// backoff is the jittered wait before retry attempt n (from 0).
func backoff(n int) time.Duration {
	d := 10 * time.Millisecond << min(n, 6)
	return d/2 + rand.N(d/2+1)
}
