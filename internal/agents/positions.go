package agents

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// positions are where the values and keys of a JSON document start, by
// path (agents[0].tools[2].executor, as Problem.Path writes it).
type positions struct {
	src   []byte
	value map[string]int // path → offset of its value
	key   map[string]int // path → offset of its key (object members)
}

// indexPositions reads b's JSON tokens once and records where each
// value and each member's key starts. A document that does not parse is
// indexed up to its first error.
func indexPositions(b []byte) *positions {
	p := &positions{src: b, value: map[string]int{}, key: map[string]int{}}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var walk func(path string) error
	walk = func(path string) error {
		p.value[path] = p.start(dec.InputOffset())
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			for dec.More() {
				at := p.start(dec.InputOffset())
				k, err := dec.Token()
				if err != nil {
					return err
				}
				name, _ := k.(string)
				member := name
				if path != "" {
					member = path + "." + name
				}
				p.key[member] = at
				if err := walk(member); err != nil {
					return err
				}
			}
			_, err = dec.Token()
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				if err := walk(path + "[" + strconv.Itoa(i) + "]"); err != nil {
					return err
				}
			}
			_, err = dec.Token()
		}
		return err
	}
	_ = walk("")
	return p
}

// start is the offset of the next token from off: past white space and
// the separators the decoder consumes with the token.
func (p *positions) start(off int64) int {
	i := int(off)
	for i < len(p.src) {
		switch p.src[i] {
		case ' ', '\t', '\r', '\n', ',', ':':
			i++
			continue
		}
		break
	}
	return i
}

// at is the 1-based line and column (in characters) of path's value, or
// of its key when key is set; for a path the file does not hold, those
// of its nearest ancestor that it does. ok is false when there is none.
func (p *positions) at(path string, key bool) (line, col int, ok bool) {
	for {
		off, found := p.value[path]
		if k, kf := p.key[path]; key && kf {
			off, found = k, true
		}
		if found {
			line, col = lineCol(p.src, off)
			return line, col, true
		}
		parent, more := parentPath(path)
		if !more {
			return 0, 0, false
		}
		path = parent
	}
}

// parentPath is path without its last member or index.
func parentPath(path string) (string, bool) {
	for i := len(path) - 1; i >= 0; i-- {
		switch path[i] {
		case '.', '[':
			return path[:i], true
		}
	}
	if path == "" {
		return "", false
	}
	return "", true
}

// lineCol is the 1-based line and column of offset off in b.
func lineCol(b []byte, off int) (line, col int) {
	off = max(0, min(off, len(b)))
	line, col = 1, 1
	for i := 0; i < off; {
		if b[i] == '\n' {
			line, col = line+1, 1
			i++
			continue
		}
		_, n := utf8.DecodeRune(b[i:])
		i += n
		col++
	}
	return line, col
}
