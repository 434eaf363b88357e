package core

// arena holds the small records of one in-process run (the data of its
// frequent events, its tool results, the model requests and tool calls a
// plan hands to the I/O, the calls' slices) in chunks, and the one
// records block its transitions' outputs use in turn, so that a turn
// costs a few allocations rather than one per record. The Runner
// attaches one to each run it drives, on one goroutine; a transition or
// plan without one allocates as usual. A chunk lives as long as anything
// it holds: the run's events and transcript point into it.
type arena struct {
	// apply is the Runner's transition and the storage of its output;
	// applying marks it in use (a transition applied meanwhile, by a
	// hook, uses Apply's own).
	apply    applying
	applying bool
	// output is the records block of the transition being applied.
	output   records
	requests slab[ModelRequest]
	calls    slab[ToolCall]
	results  slab[ToolResult]
	states   slab[CallState]
	replies  slab[ModelReplied]
	outputs  slab[ToolExecuted]
	// The data of the events every turn emits.
	turns       slab[TurnStartedData]
	updates     slab[MessagesUpdatedData]
	toolCalls   slab[ToolCallData]
	starts      slab[ToolCallStartData]
	toolResults slab[ToolResultData]
	// first holds each slab's first chunk, so a short run allocates
	// only its arena.
	first struct {
		requests    [8]ModelRequest
		calls       [8]ToolCall
		results     [8]ToolResult
		states      [16]CallState
		replies     [8]ModelReplied
		outputs     [8]ToolExecuted
		turns       [8]TurnStartedData
		updates     [16]MessagesUpdatedData
		toolCalls   [8]ToolCallData
		starts      [8]ToolCallStartData
		toolResults [8]ToolResultData
	}
}

// newArena returns an arena whose slabs start on its first chunks.
func newArena() *arena {
	a := new(arena)
	f := &a.first
	a.requests.free, a.calls.free, a.results.free, a.states.free = f.requests[:], f.calls[:], f.results[:], f.states[:]
	a.replies.free, a.outputs.free, a.turns.free, a.updates.free = f.replies[:], f.outputs[:], f.turns[:], f.updates[:]
	a.toolCalls.free, a.starts.free, a.toolResults.free = f.toolCalls[:], f.starts[:], f.toolResults[:]
	return a
}

// slab hands out values of T from chunks that double from 16 up to
// slabMax values (after the arena's first), so a short run allocates
// little and a long one a chunk per slabMax values.
type slab[T any] struct {
	free []T
	next int
}

const slabMax = 32

func (s *slab[T]) grow(n int) {
	if s.next < 16 {
		s.next = 16
	}
	size := max(s.next, n)
	s.free = make([]T, size)
	s.next = min(s.next*2, slabMax)
}

// new returns a zero T.
func (s *slab[T]) new() *T {
	if len(s.free) == 0 {
		s.grow(1)
	}
	p := &s.free[0]
	s.free = s.free[1:]
	return p
}

// slice returns a zero-length slice with room for n values (capped, so
// appending past n reallocates rather than writing into the next).
func (s *slab[T]) slice(n int) []T {
	if n > slabMax {
		return make([]T, 0, n)
	}
	if len(s.free) < n {
		s.grow(n)
	}
	out := s.free[:0:n]
	s.free = s.free[n:]
	return out
}

// newOf returns a new zero T from a's slab, or from the heap without an
// arena.
func newOf[T any](a *arena, s func(*arena) *slab[T]) *T {
	if a == nil {
		return new(T)
	}
	return s(a).new()
}

// sliceOf returns an empty slice with room for n values, from a's slab
// or the heap.
func sliceOf[T any](a *arena, s func(*arena) *slab[T], n int) []T {
	if a == nil {
		return make([]T, 0, n)
	}
	return s(a).slice(n)
}

func arenaRequests(a *arena) *slab[ModelRequest]       { return &a.requests }
func arenaCalls(a *arena) *slab[ToolCall]              { return &a.calls }
func arenaResults(a *arena) *slab[ToolResult]          { return &a.results }
func arenaStates(a *arena) *slab[CallState]            { return &a.states }
func arenaTurns(a *arena) *slab[TurnStartedData]       { return &a.turns }
func arenaUpdates(a *arena) *slab[MessagesUpdatedData] { return &a.updates }
func arenaToolCalls(a *arena) *slab[ToolCallData]      { return &a.toolCalls }
func arenaStarts(a *arena) *slab[ToolCallStartData]    { return &a.starts }
func arenaToolResults(a *arena) *slab[ToolResultData]  { return &a.toolResults }
