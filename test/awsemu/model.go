package awsemu

import (
	"fmt"
	"sync/atomic"
)

// common is what every service reads about the emulated account: fixed
// by New, so it is read without a lock, except the ID sequence, which is
// atomic. Each service's state embeds it.
type common struct {
	region       string
	account      string
	callerArn    string
	callerUserID string
	zones        []Zone
	// seq numbers generated IDs, ARNs and credentials. One sequence for
	// all services keeps them unique across services and repeatable for
	// the same sequence of calls.
	seq atomic.Uint64
}

// newID returns a fresh resource ID such as "i-0000000000000001a".
func (c *common) newID(prefix string) string {
	return fmt.Sprintf("%s-%017x", prefix, 0xe0000000+c.seq.Add(1))
}

// zoneID maps a zone name to its ID ("" if unknown).
func (c *common) zoneID(name string) string {
	for _, z := range c.zones {
		if z.Name == name {
			return z.ID
		}
	}
	return ""
}

// table is an insertion-ordered map of resources by ID.
type table[T any] struct {
	m     map[string]*T
	order []string
}

func (t *table[T]) put(id string, v *T) {
	if t.m == nil {
		t.m = map[string]*T{}
	}
	if _, ok := t.m[id]; !ok {
		t.order = append(t.order, id)
	}
	t.m[id] = v
}

func (t *table[T]) get(id string) (*T, bool) {
	v, ok := t.m[id]
	return v, ok
}

func (t *table[T]) remove(id string) {
	if _, ok := t.m[id]; !ok {
		return
	}
	delete(t.m, id)
	for i, o := range t.order {
		if o == id {
			t.order = append(t.order[:i], t.order[i+1:]...)
			break
		}
	}
}

func (t *table[T]) list() []*T {
	out := make([]*T, 0, len(t.order))
	for _, id := range t.order {
		out = append(out, t.m[id])
	}
	return out
}
