package sqsqueue

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// maxIDLen is SQS's limit on a MessageGroupId or MessageDeduplicationId.
const maxIDLen = 128

// prefixLen is how much of an id its stand-in keeps: the prefix, a '~'
// and 64 hex digits of SHA-256 make at most maxIDLen characters.
const prefixLen = maxIDLen - 1 - sha256.Size*2

// sqsID returns id if SQS accepts it as a message group or deduplication
// id: 1 to 128 characters, each an ASCII letter, digit or punctuation mark
// (0x21 to 0x7E). Otherwise it returns a stand-in derived from id alone:
// its first prefixLen characters with each character SQS refuses replaced
// by '_', then '~' and the hex SHA-256 of id.
func sqsID(id string) string {
	if id != "" && len(id) <= maxIDLen && strings.IndexFunc(id, refused) < 0 {
		return id
	}
	var b strings.Builder
	b.Grow(maxIDLen)
	n := 0
	for _, r := range id {
		if n == prefixLen {
			break
		}
		if refused(r) {
			r = '_'
		}
		b.WriteRune(r)
		n++
	}
	sum := sha256.Sum256([]byte(id))
	b.WriteByte('~')
	b.WriteString(hex.EncodeToString(sum[:]))
	return b.String()
}

// refused reports whether SQS refuses r in a group or deduplication id.
func refused(r rune) bool { return r < 0x21 || r > 0x7e }
