package core

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// allEventData lists a value of every typed event data.
var allEventData = []EventData{
	&RunStartedData{}, &RunForkedData{}, &ToolPolicyResolvedData{}, &ToolDeclarationsRejectedData{}, &ReasonData{},
	&CallbackFailedData{}, &MessagesUpdatedData{}, &ContextTrimmedData{}, &ToolCallStartData{},
	&TurnStartedData{}, &StatusData{}, &GuardrailRedactedData{}, &ToolCallData{}, &ModelRetryData{},
	&ErrorData{}, &CompactionStartedData{}, &CompactionCompletedData{}, &CompactionFailedData{},
	&ToolRefData{}, &RuntimeToolPendingData{}, &ApprovalRequiredData{}, &RuntimeToolSubmittedData{},
	&ApprovalDecidedData{}, &PendingExpiredData{}, &ToolsDiscoveredData{}, &ToolSourceUnavailableData{},
	&SteeringQueuedData{}, &ToolResultTruncatedData{}, &ToolResultData{}, &CompletionPolicyData{},
	&BudgetExceededData{}, &MaxTurnsReachedData{}, &CompletedData{}, &DoneData{}, &FailedData{}, &TokenData{},
}

// TestEventDataFieldsInJSONOrder: a struct's fields are declared in the
// order of their JSON names, so an event encodes to the bytes its data
// read back as a map encodes to (what a store holds and the API sends).
func TestEventDataFieldsInJSONOrder(t *testing.T) {
	for _, d := range allEventData {
		typ := reflect.TypeOf(d).Elem()
		var names []string
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Anonymous || name == "" || name == "-" {
				t.Errorf("%s.%s: every field needs its own JSON name", typ.Name(), f.Name)
			}
			names = append(names, name)
		}
		if !sort.StringsAreSorted(names) {
			t.Errorf("%s: fields %v are not in JSON-name order", typ.Name(), names)
		}
	}
}

// TestEventRoundTrip: an event read back from JSON holds Fields that
// encode to the same bytes, numbers exactly.
func TestEventRoundTrip(t *testing.T) {
	ev := Event{Seq: 3, Type: EventBudgetExceeded, Turn: 2, Data: &BudgetExceededData{Budget: BudgetCostUSD, Current: 0.004, Ceiling: 0.003}}
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	var back Event
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(back)
	if string(again) != string(b) {
		t.Fatalf("round trip changed the event:\n%s\n%s", b, again)
	}
	if f, ok := back.Data.(Fields); !ok || f["current"] != json.Number("0.004") {
		t.Fatalf("read back as %#v", back.Data)
	}
	if got := ev.Fields(); got["budget"] != BudgetCostUSD || got["ceiling"] != json.Number("0.003") {
		t.Fatalf("Fields of typed data: %v", got)
	}
	var empty Event
	if err := json.Unmarshal([]byte(`{"seq":1,"type":"status","turn":0,"at":"2026-01-01T00:00:00Z"}`), &empty); err != nil || empty.Data != nil || empty.Fields() != nil {
		t.Fatalf("an event without data: %+v, %v", empty, err)
	}
	if err := json.Unmarshal([]byte(`{"seq":1,"type":"status","data":[1]}`), &empty); err == nil {
		t.Fatal("data that is not an object was accepted")
	}
}
