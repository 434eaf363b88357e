package main

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestListIndexWrites checks the run-list index accounting: an entry
// costs a write when it appears and when its projected status changes,
// and none when a commit leaves it as it was.
func TestListIndexWrites(t *testing.T) {
	run := func(status string) map[string]types.AttributeValue {
		s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
		return map[string]types.AttributeValue{"PK": s("RUN#list-test"), "SK": s("STATE"), "GSI2PK": s("TEN#t"), "GSI2SK": s("2026#r"),
			"session": s("s"), "status": s(status), "agent": s("a"), "created_at": s("2026")}
	}
	for i, c := range []struct {
		status string
		want   float64
	}{{"queued", 1}, {"running", 1}, {"running", 0}, {"running", 0}, {"completed", 1}} {
		if got := listIndexWrites(run(c.status)); got != c.want {
			t.Errorf("commit %d (%s): %v index writes, want %v", i, c.status, got, c.want)
		}
	}
}
