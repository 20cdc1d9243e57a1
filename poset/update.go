package poset

import (
	"slices"
	"strings"

	"github.com/sift-pubsub/sift/match"
)

// Update is the message a routing Table sends one neighbour after an
// operation: the neighbour applies it atomically, removing the filters in
// Remove and then adding those in Add to what it holds from this router (a
// multiset: the same filter may be held twice). Both lists are in
// canonical filter order.
type Update struct {
	To     Iface
	Remove []match.Filter
	Add    []match.Filter
}

// String renders the update as `to N: -f1 -f2 +f3`, the standard text form
// used in golden files.
func (u Update) String() string {
	var b strings.Builder
	b.WriteString("to ")
	b.WriteString(itoa(uint64(u.To)))
	b.WriteString(":")
	for _, f := range u.Remove {
		b.WriteString(" -(" + f.String() + ")")
	}
	for _, f := range u.Add {
		b.WriteString(" +(" + f.String() + ")")
	}
	return b.String()
}

// DescribeUpdates renders updates one per line.
func DescribeUpdates(us []Update) string {
	var b strings.Builder
	for _, u := range us {
		b.WriteString(u.String())
		b.WriteString("\n")
	}
	return b.String()
}

func itoa(v uint64) string {
	if v == 0 {
		return "0"
	}
	var buf [20]byte
	i := len(buf)
	for v > 0 {
		i--
		buf[i] = byte('0' + v%10)
		v /= 10
	}
	return string(buf[i:])
}

// diff accumulates, per neighbour, the filters to remove and to add; a
// filter removed and added again in the same operation cancels out.
type diff map[Iface]*Update

func (d diff) at(n Iface) *Update {
	u := d[n]
	if u == nil {
		u = &Update{To: n}
		d[n] = u
	}
	return u
}

func (d diff) remove(n Iface, f match.Filter) {
	u := d.at(n)
	if i := slices.IndexFunc(u.Add, f.Equal); i >= 0 {
		u.Add = slices.Delete(u.Add, i, i+1)
		return
	}
	u.Remove = append(u.Remove, f)
}

func (d diff) add(n Iface, f match.Filter) {
	u := d.at(n)
	if i := slices.IndexFunc(u.Remove, f.Equal); i >= 0 {
		u.Remove = slices.Delete(u.Remove, i, i+1)
		return
	}
	u.Add = append(u.Add, f)
}

// updates returns the non-empty updates, by neighbour, lists sorted.
func (d diff) updates() []Update {
	var out []Update
	for _, u := range d {
		if len(u.Add) == 0 && len(u.Remove) == 0 {
			continue
		}
		slices.SortFunc(u.Remove, match.Filter.Compare)
		slices.SortFunc(u.Add, match.Filter.Compare)
		out = append(out, *u)
	}
	slices.SortFunc(out, func(a, b Update) int { return int(a.To) - int(b.To) })
	return out
}
