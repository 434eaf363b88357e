package core

import (
	"encoding/base64"
	"fmt"
	"unicode/utf8"
)

// Memory ids, Once keys and page cursors: what both memory stores key
// their records by, checked the same way in both.

const (
	// MaxMemoryID caps a memory's id, in bytes (the memory/forget tool
	// takes an id of as many characters).
	MaxMemoryID = 200
	// MaxMemoryOnce caps a memory write's Once key, in bytes.
	MaxMemoryOnce = 512
	// MaxMemoryDims caps a memory's vector (the largest embedding models
	// make 3,072 dimensions), so that a memory stays a small item.
	MaxMemoryDims = 8192
)

// ValidateMemoryID refuses an id a store cannot key a memory by: empty,
// longer than MaxMemoryID, or not printable text.
func ValidateMemoryID(id string) error {
	switch {
	case id == "":
		return invalid("a memory needs an id")
	case len(id) > MaxMemoryID:
		return invalid("a memory id is at most %d bytes, got %d", MaxMemoryID, len(id))
	case !printableText(id):
		return invalid("a memory id must be printable text")
	}
	return nil
}

// printableText reports whether s is valid UTF-8 without control
// characters.
func printableText(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == utf8.RuneError {
			return false
		}
	}
	return true
}

// EncodeMemoryCursor is the cursor of the page of memories after the one
// whose last memory is lastID.
func EncodeMemoryCursor(lastID string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(lastID))
}

// DecodeMemoryCursor returns the memory id a cursor carries. A cursor
// that is not one a page of memories returned (not base64url, or not a
// memory id) is ErrInvalidInput.
func DecodeMemoryCursor(cursor string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(cursor) > base64.RawURLEncoding.EncodedLen(MaxMemoryID) || ValidateMemoryID(string(b)) != nil {
		return "", fmt.Errorf("%w: the cursor is not one this list returned", ErrInvalidInput)
	}
	return string(b), nil
}

// MemoryPageSize is the most memories one Memories call returns, and
// what a limit of 0 asks for, in both stores (a DynamoDB page also ends
// at DynamoDB's 1 MB, about 300 memories with 1,024-dimension vectors):
// a recall lists a scope of 10,000 memories in 10 to 35 calls.
const MemoryPageSize = 1000

// MemoryPage resolves a Memories call's cursor and limit: the id its
// page starts after ("" for the first page) and how many memories it
// returns at most. A negative limit or a bad cursor is ErrInvalidInput.
func MemoryPage(cursor string, limit int) (after string, n int, err error) {
	if limit < 0 {
		return "", 0, invalid("limit must not be negative")
	}
	if limit == 0 {
		limit = MemoryPageSize
	}
	limit = min(limit, MemoryPageSize)
	if cursor != "" {
		if after, err = DecodeMemoryCursor(cursor); err != nil {
			return "", 0, err
		}
	}
	return after, limit, nil
}
