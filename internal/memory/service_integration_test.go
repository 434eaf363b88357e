//go:build integration

package memory

import (
	"os"
	"testing"

	"github.com/baton-agents/baton/core"
)

// TestServiceOnDynamoDB runs the service's tests on dynamostore (a table
// each) on the endpoint BATON_TEST_DYNAMODB_ENDPOINT names:
//
//	scripts/emulators.sh run go test -tags integration -run OnDynamoDB ./internal/memory/
func TestServiceOnDynamoDB(t *testing.T) {
	if os.Getenv("BATON_TEST_DYNAMODB_ENDPOINT") == "" {
		t.Skip("BATON_TEST_DYNAMODB_ENDPOINT is not set (scripts/emulators.sh start prints it)")
	}
	defer func(old func(*testing.T) core.MemoryStore) { backingStore = old }(backingStore)
	backingStore = func(t *testing.T) core.MemoryStore {
		s, _ := dynamoStore(t)
		return s
	}
	for _, tc := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"RecallRanksBySimilarityWithinBudget", TestRecallRanksBySimilarityWithinBudget},
		{"RecallEmptyQueryIsNewestFirst", TestRecallEmptyQueryIsNewestFirst},
		{"RecallOtherEmbedderFallsBackToWords", TestRecallOtherEmbedderFallsBackToWords},
		{"RecallEmbedsOnlyWhenVectorsCompare", TestRecallEmbedsOnlyWhenVectorsCompare},
		{"ExtractWritesOnce", TestExtractWritesOnce},
		{"ExtractDedupes", TestExtractDedupes},
		{"ExtractNearDuplicateByCosine", TestExtractNearDuplicateByCosine},
		{"ExtractSettings", TestExtractSettings},
		{"ExtractErrors", TestExtractErrors},
		{"ExtractCapsFacts", TestExtractCapsFacts},
		{"ExtractSummaryKeepsTheWriteWithinItsLimit", TestExtractSummaryKeepsTheWriteWithinItsLimit},
		{"ExtractPrefersTheEqualText", TestExtractPrefersTheEqualText},
		{"ExtractShowsStoredMemoriesAndTakesReplacements", TestExtractShowsStoredMemoriesAndTakesReplacements},
		{"RememberRecallForget", TestRememberRecallForget},
		{"ToolScopes", TestToolScopes},
		{"RememberAfterErasure", TestRememberAfterErasure},
	} {
		t.Run(tc.name, tc.run)
	}
}
