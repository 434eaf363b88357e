package durable

import "testing"

// TestTruncate: s cut to at most n bytes, never inside a rune, and
// whether it was cut.
func TestTruncate(t *testing.T) {
	cases := []struct {
		s    string
		n    int
		want string
		cut  bool
	}{
		{"", 0, "", false},
		{"abc", 3, "abc", false},
		{"abc", 4, "abc", false},
		{"abcd", 3, "abc", true},
		{"aé", 3, "aé", false},
		{"aé", 2, "a", true}, // é is two bytes: not split
		{"é", 1, "", true},
		{"a€b", 3, "a", true}, // € is three bytes
		{"a€b", 4, "a€", true},
		{"\x80\x80\x80", 1, "", true}, // no rune start at all (not UTF-8)
	}
	for _, tc := range cases {
		got, cut := truncate(tc.s, tc.n)
		if got != tc.want || cut != tc.cut {
			t.Errorf("truncate(%q, %d) = %q, %v; want %q, %v", tc.s, tc.n, got, cut, tc.want, tc.cut)
		}
	}
}
