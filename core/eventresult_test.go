package core

import (
	"fmt"
	"strings"
	"testing"
)

// TestEventResultCut: a tool_result event carries the result's text cut
// to the limit, and says whether it was cut: not at the limit, only past
// it.
func TestEventResultCut(t *testing.T) {
	const limit = 16
	for _, n := range []int{0, limit - 1, limit, limit + 1, 3 * limit} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			res := ToolResult{Success: false, ToolName: "a/b", Error: strings.Repeat("e", n), ErrorType: ErrTypeExecutorException}
			text, cut := eventResult(res, false, limit)
			full := resultText(res)
			if want := len(full) > limit; cut != want || text != full[:min(len(full), limit)] {
				t.Fatalf("%q (of %q), cut %v; want cut %v", text, full, cut, want)
			}
		})
	}
}
