package core

import "testing"

// TestTruncate: truncateUTF8 cuts to at most n bytes, never inside a
// rune; truncateRunes keeps a string of at most n runes as it is and
// cuts a longer one to n runes and "…".
func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abc", 4, "abc"},
		{"abcd", 3, "abc"},
		{"aé", 3, "aé"},      // 3 bytes: kept whole
		{"aéb", 2, "a"},      // the cut falls inside é: back to its start
		{"aéb", 3, "aé"},     // the cut falls after é
		{"€x", 2, ""},        // inside the first rune: nothing is left
		{"\x80\x80a", 0, ""}, // a cut at 0 stays at 0, whatever follows
		{"\x80\x80a", 1, ""}, // continuation bytes only before the cut
	} {
		if got := truncateUTF8(tc.s, tc.n); got != tc.want {
			t.Errorf("truncateUTF8(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"äöü", 3, "äöü"},
		{"abc", 4, "abc"},
		{"abcd", 3, "abc…"},
		{"äöüß", 2, "äö…"},
	} {
		if got := truncateRunes(tc.s, tc.n); got != tc.want {
			t.Errorf("truncateRunes(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}
