package agents

import (
	"fmt"
	"strings"
)

// nearest is the name among names closest to got by edit distance, when
// it is close enough to be what was meant (at most a third of got's
// letters differ, and at least one of them does not); "" otherwise.
func nearest(got string, names []string) string {
	best, bestD := "", -1
	for _, n := range names {
		if n == got {
			return ""
		}
		d := editDistance(strings.ToLower(got), strings.ToLower(n))
		if bestD < 0 || d < bestD {
			best, bestD = n, d
		}
	}
	limit := max(1, (len([]rune(got))+2)/3)
	if bestD < 0 || bestD > limit || bestD >= len([]rune(got)) {
		return ""
	}
	return best
}

// didYouMean is "; did you mean "x"?" for the name nearest got, or "".
func didYouMean(got string, names []string) string {
	if n := nearest(got, names); n != "" {
		return fmt.Sprintf("; did you mean %q?", n)
	}
	return ""
}

// editDistance is the Levenshtein distance of a and b, in characters.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			sub := prev[j-1]
			if ra[i-1] != rb[j-1] {
				sub++
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, sub)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
