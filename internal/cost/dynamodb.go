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
// request), and each write to the global secondary index one standard
// unit (a keys-only index entry is far below 1 KB): 2 when an existing
// entry's key changes (delete and put), 1 when an entry is added or
// removed, none when the write leaves it as it was. The run item is the
// only item carrying the due-index keys. due, when set, remembers the
// key each run's last committed write gave it; without it a commit that
// keeps the run unfinished is counted as moving its entry (the most it
// can cost), and a finished run's item as dropping it.
func TransactWCU(in *dynamodb.TransactWriteItemsInput, due *DueKeys) (wcu, index float64) {
	for i, it := range in.TransactItems {
		var size int
		switch {
		case it.Put != nil:
			size = ItemBytes(it.Put.Item)
			if i == 0 && isRunItem(it.Put.Item) {
				index += due.writes(it.Put)
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

// DueKeys holds, by run item key, the due-index key (GSI1SK) of its last
// committed write ("" or absent: no entry). The zero value is ready; a
// nil *DueKeys knows no previous key.
type DueKeys struct{ m sync.Map }

// writes counts the due-index writes of a committed Put of a run item,
// and remembers its index key.
func (d *DueKeys) writes(put *types.Put) float64 {
	key := ""
	if sk, ok := put.Item["GSI1SK"].(*types.AttributeValueMemberS); ok {
		key = sk.Value
	}
	if d == nil {
		create := put.ConditionExpression != nil && strings.Contains(*put.ConditionExpression, "attribute_not_exists")
		if key != "" && !create {
			return 2
		}
		return 1
	}
	pk, _ := put.Item["PK"].(*types.AttributeValueMemberS)
	prev := ""
	if v, ok := d.m.Swap(pk.Value, key); ok {
		prev = v.(string)
	}
	switch {
	case prev == key:
		return 0
	case prev == "" || key == "":
		return 1
	default:
		return 2
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

func valueBytes(v types.AttributeValue) int {
	switch t := v.(type) {
	case *types.AttributeValueMemberS:
		return len(t.Value)
	case *types.AttributeValueMemberB:
		return len(t.Value)
	case *types.AttributeValueMemberN:
		digits := len(strings.Trim(strings.NewReplacer("-", "", ".", "").Replace(t.Value), "0"))
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
