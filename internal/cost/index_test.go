package cost

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestIndexEntryWrites checks the index accounting of a run item's
// commits: the run list's entry costs a write when it appears and when
// its projected status changes, the due entry one when it appears or goes
// and two when its key moves, and neither costs anything when a commit
// leaves it as it was. Without remembered entries a commit is counted at
// the most it can cost.
func TestIndexEntryWrites(t *testing.T) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	put := func(status, due string) *types.Put {
		it := map[string]types.AttributeValue{"PK": s("RUN#index-test"), "SK": s("STATE"), "GSI2PK": s("TEN#t"), "GSI2SK": s("2026#r"),
			"session": s("s"), "status": s(status), "agent": s("a"), "created_at": s("2026")}
		if due != "" {
			it["GSI1PK"], it["GSI1SK"] = s("DUE#0"), s(due)
		}
		return &types.Put{Item: it}
	}
	var seen IndexEntries
	for i, c := range []struct {
		status, due string
		want        float64
	}{
		{"queued", "t1", 2},  // both entries appear
		{"running", "t1", 1}, // the status changes
		{"running", "t1", 0}, // nothing changes
		{"running", "t2", 2}, // the due key moves
		{"completed", "", 2}, // the status changes, the due entry goes
		{"completed", "", 0}, // nothing changes
	} {
		if got := seen.writes(put(c.status, c.due)); got != c.want {
			t.Errorf("commit %d (%s, due %q): %v index writes, want %v", i, c.status, c.due, got, c.want)
		}
	}
	var none *IndexEntries
	create := put("queued", "t1")
	create.ConditionExpression = aws.String("attribute_not_exists(PK)")
	if got := none.writes(create); got != 2 {
		t.Errorf("creation without memory: %v, want 2", got)
	}
	if got := none.writes(put("running", "t2")); got != 3 {
		t.Errorf("a commit without memory: %v, want 3 (the due key moves, the list entry changes)", got)
	}
}
