package sqsqueue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/baton-agents/baton/core"
)

// Queue settings CreateQueues applies.
const (
	// maxNameLen is the longest name CreateQueues takes: SQS names have at
	// most 80 characters, and "-dlq.fifo" takes 9.
	maxNameLen = 80 - len("-dlq.fifo")
	// maxVisibility is SQS's longest visibility timeout.
	maxVisibility = 12 * time.Hour
	// maxMaxReceives is the largest maxReceiveCount a redrive policy takes.
	maxMaxReceives = 1000
	// dlqRetention keeps dead letters for SQS's longest retention, 14
	// days, so that they outlive the source queue's messages (4 days).
	dlqRetention = 14 * 24 * time.Hour
)

// redrivePolicy is SQS's RedrivePolicy attribute.
type redrivePolicy struct {
	DeadLetterTargetArn string `json:"deadLetterTargetArn"`
	MaxReceiveCount     int    `json:"maxReceiveCount"`
}

// CreateQueues creates the FIFO queue "<name>.fifo" and its FIFO
// dead-letter queue "<name>-dlq.fifo", and returns their URLs. The queue
// has the given visibility timeout (whole seconds, rounded up), explicit
// deduplication ids (ContentBasedDeduplication off), and a redrive policy
// that moves a message to the dead-letter queue once it was received
// maxReceives times; the dead-letter queue keeps messages for 14 days.
// It is idempotent: queues that exist are kept and their attributes set
// to these values.
func CreateQueues(ctx context.Context, client *sqs.Client, name string, visibility time.Duration, maxReceives int) (queueURL, dlqURL string, err error) {
	return createQueues(ctx, client, name, true, visibility, maxReceives)
}

// CreateStandardQueues creates the standard queue name and its standard
// dead-letter queue "<name>-dlq" (the intake queue and its dead-letter
// queue), as CreateQueues does for FIFO queues: the queue's visibility
// timeout, a redrive policy after maxReceives receives, dead letters kept
// for 14 days; idempotent.
func CreateStandardQueues(ctx context.Context, client *sqs.Client, name string, visibility time.Duration, maxReceives int) (queueURL, dlqURL string, err error) {
	return createQueues(ctx, client, name, false, visibility, maxReceives)
}

func createQueues(ctx context.Context, client *sqs.Client, name string, fifo bool, visibility time.Duration, maxReceives int) (queueURL, dlqURL string, err error) {
	if err := validateCreate(name, visibility, maxReceives); err != nil {
		return "", "", fmt.Errorf("create queues %q: %w", name, err)
	}
	suffix, dedup := "", map[string]string{}
	if fifo {
		suffix = ".fifo"
		dedup[string(types.QueueAttributeNameContentBasedDeduplication)] = "false"
	}
	dlqName := name + "-dlq" + suffix
	dlqAttrs := map[string]string{string(types.QueueAttributeNameMessageRetentionPeriod): strconv.Itoa(int(dlqRetention / time.Second))}
	for k, v := range dedup {
		dlqAttrs[k] = v
	}
	dlqURL, err = ensureQueue(ctx, client, dlqName, fifo, dlqAttrs)
	if err != nil {
		return "", "", err
	}
	attrs, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl:       aws.String(dlqURL),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn},
	})
	if err != nil {
		return "", "", fmt.Errorf("read arn of queue %s: %w", dlqName, translate(err))
	}
	arn := attrs.Attributes[string(types.QueueAttributeNameQueueArn)]
	if arn == "" {
		return "", "", fmt.Errorf("read arn of queue %s: no QueueArn in %v", dlqName, attrs.Attributes)
	}
	policy, err := json.Marshal(redrivePolicy{DeadLetterTargetArn: arn, MaxReceiveCount: maxReceives})
	if err != nil {
		return "", "", fmt.Errorf("create queue %s%s: redrive policy: %w", name, suffix, err)
	}
	mainAttrs := map[string]string{
		string(types.QueueAttributeNameVisibilityTimeout): strconv.Itoa(int(math.Ceil(visibility.Seconds()))),
		string(types.QueueAttributeNameRedrivePolicy):     string(policy),
	}
	for k, v := range dedup {
		mainAttrs[k] = v
	}
	queueURL, err = ensureQueue(ctx, client, name+suffix, fifo, mainAttrs)
	if err != nil {
		return "", "", err
	}
	return queueURL, dlqURL, nil
}

// validateCreate checks CreateQueues' arguments against SQS's limits.
func validateCreate(name string, visibility time.Duration, maxReceives int) error {
	switch {
	case name == "" || len(name) > maxNameLen:
		return fmt.Errorf("%w: queue name must have 1 to %d characters", core.ErrInvalidInput, maxNameLen)
	case strings.IndexFunc(name, func(r rune) bool {
		return !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) >= 0:
		return fmt.Errorf("%w: queue name may hold only ASCII letters, digits, '-' and '_'", core.ErrInvalidInput)
	case visibility < 0 || visibility > maxVisibility:
		return fmt.Errorf("%w: visibility timeout %v outside 0s to %v", core.ErrInvalidInput, visibility, maxVisibility)
	case maxReceives < 1 || maxReceives > maxMaxReceives:
		return fmt.Errorf("%w: max receives %d outside 1 to %d", core.ErrInvalidInput, maxReceives, maxMaxReceives)
	}
	return nil
}

// ensureQueue creates the queue fifoName (FIFO when fifo) with attrs, or,
// when it exists with other attributes, sets attrs on it; it returns its
// URL.
func ensureQueue(ctx context.Context, client *sqs.Client, fifoName string, fifo bool, attrs map[string]string) (string, error) {
	create := map[string]string{}
	if fifo {
		create[string(types.QueueAttributeNameFifoQueue)] = "true"
	}
	for k, v := range attrs {
		create[k] = v
	}
	out, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(fifoName), Attributes: create})
	if err == nil {
		return aws.ToString(out.QueueUrl), nil
	}
	var exists *types.QueueNameExists
	if !errors.As(err, &exists) {
		return "", fmt.Errorf("create queue %s: %w", fifoName, translate(err))
	}
	got, err := client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(fifoName)})
	if err != nil {
		return "", fmt.Errorf("look up queue %s: %w", fifoName, translate(err))
	}
	url := aws.ToString(got.QueueUrl)
	if _, err := client.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(url), Attributes: attrs}); err != nil {
		return "", fmt.Errorf("update queue %s: %w", fifoName, translate(err))
	}
	return url, nil
}
