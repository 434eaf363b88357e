package cost

import (
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TransactWCU computes a successful TransactWriteItems' write request
// units by DynamoDB's documented rules: a transactional write costs 2
// units per started KB of each item (Put: the new item; Update: the item
// after the update, estimated from its key and the values it sets;
// ConditionCheck and Delete: the key, as their items are not in the
// request), and each write to a global secondary index one standard unit
// (its entries are far below 1 KB): 2 when an existing entry's key
// changes (delete and put), 1 when an entry is added or removed or (the
// run list) a projected attribute changes, none when the write leaves it
// as it was. The run item is the only item carrying index keys. seen,
// when set, remembers the entries each run's last committed write gave
// it; without it a commit is counted at the most it can cost: a run that
// stays unfinished moves its due entry, and its list entry changes.
func TransactWCU(in *dynamodb.TransactWriteItemsInput, seen *IndexEntries) (wcu, index float64) {
	for i, it := range in.TransactItems {
		var size int
		switch {
		case it.Put != nil:
			size = ItemBytes(it.Put.Item)
			if i == 0 && isRunItem(it.Put.Item) {
				index += seen.writes(it.Put)
			}
		case it.Update != nil:
			size = ItemBytes(it.Update.Key) + ItemBytes(it.Update.ExpressionAttributeValues)
			for _, v := range it.Update.ExpressionAttributeNames {
				size += len(v)
			}
		case it.ConditionCheck != nil:
			size = ItemBytes(it.ConditionCheck.Key)
		case it.Delete != nil:
			size = ItemBytes(it.Delete.Key)
		}
		wcu += 2 * float64((max(size, 1)+1023)/1024)
	}
	return wcu + index, index
}

// IndexEntries holds, by run item key, the due-index key (GSI1SK) and the
// run-list entry (GSI2: keys and projected attributes) of its last
// committed write. The zero value is ready; a nil *IndexEntries knows no
// previous entry.
type IndexEntries struct{ due, list sync.Map }

// writes counts the index writes of a committed Put of a run item, and
// remembers its entries.
func (x *IndexEntries) writes(put *types.Put) float64 {
	str := func(name string) string {
		if v, ok := put.Item[name].(*types.AttributeValueMemberS); ok {
			return v.Value
		}
		return ""
	}
	due := str("GSI1SK")
	listKey := str("GSI2PK") + "\x00" + str("GSI2SK")
	list := listKey + "\x00" + str("session") + "\x00" + str("status") + "\x00" + str("agent") + "\x00" + str("created_at")
	if str("GSI2PK") == "" {
		listKey, list = "", ""
	}
	if x == nil {
		create := put.ConditionExpression != nil && strings.Contains(*put.ConditionExpression, "attribute_not_exists")
		n := 1.0
		if due != "" && !create {
			n = 2
		}
		if list != "" {
			n++
		}
		return n
	}
	pk := str("PK")
	return entryWrites(&x.due, pk, due, due) + entryWrites(&x.list, pk, listKey, list)
}

// entryWrites swaps a run's remembered index entry for entry (key: its
// index key; "" for no entry) and counts the writes that takes.
func entryWrites(m *sync.Map, pk, key, entry string) float64 {
	prev := ""
	if v, ok := m.Swap(pk, entry); ok {
		prev = v.(string)
	}
	switch {
	case prev == entry:
		return 0
	case prev == "" || entry == "":
		return 1
	case !strings.HasPrefix(prev, key):
		return 2
	default:
		return 1
	}
}

func isRunItem(it map[string]types.AttributeValue) bool {
	sk, _ := it["SK"].(*types.AttributeValueMemberS)
	pk, _ := it["PK"].(*types.AttributeValueMemberS)
	return sk != nil && pk != nil && sk.Value == "STATE" && strings.HasPrefix(pk.Value, "RUN#")
}

// ItemBytes is an item's size by DynamoDB's rules: attribute names plus
// values (strings and binaries their length, numbers about one byte per
// two significant digits plus one, booleans and nulls one byte, lists and
// maps three bytes plus one per element plus their elements).
func ItemBytes(it map[string]types.AttributeValue) int {
	n := 0
	for k, v := range it {
		n += len(k) + valueBytes(v)
	}
	return n
}

// numberSigns drops a number's sign and decimal point.
var numberSigns = strings.NewReplacer("-", "", ".", "")

func valueBytes(v types.AttributeValue) int {
	switch t := v.(type) {
	case *types.AttributeValueMemberS:
		return len(t.Value)
	case *types.AttributeValueMemberB:
		return len(t.Value)
	case *types.AttributeValueMemberN:
		digits := len(strings.Trim(numberSigns.Replace(t.Value), "0"))
		return (digits+1)/2 + 1
	case *types.AttributeValueMemberL:
		n := 3
		for _, x := range t.Value {
			n += 1 + valueBytes(x)
		}
		return n
	case *types.AttributeValueMemberM:
		return 3 + ItemBytes(t.Value) + len(t.Value)
	case *types.AttributeValueMemberSS:
		n := 0
		for _, x := range t.Value {
			n += len(x)
		}
		return n
	}
	return 1
}
