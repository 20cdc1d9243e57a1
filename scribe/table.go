package scribe

// routingTable is Pastry's routing table: row r holds, for each digit value
// c, a node sharing the first r digits with the owner and having digit c at
// position r. Rows are stored flat and grown only as far as the deepest row
// in use, so a node in a network of N nodes keeps about log_{2^b} N rows.
type routingTable struct {
	space Space
	cols  int
	cells []Ref // row r, column c at r*cols+c; Addr == NoAddr when empty
}

func newRoutingTable(s Space) routingTable { return routingTable{space: s, cols: s.Cols()} }

// rows is the number of rows in use.
func (t *routingTable) rows() int { return len(t.cells) / t.cols }

// get returns the entry at row r, column c, or None.
func (t *routingTable) get(r, c int) Ref {
	if i := r*t.cols + c; i < len(t.cells) {
		return t.cells[i]
	}
	return None
}

// row returns the live slice of row r (nil beyond the rows in use).
func (t *routingTable) row(r int) []Ref {
	if r >= t.rows() {
		return nil
	}
	return t.cells[r*t.cols : (r+1)*t.cols]
}

// consider places x in its slot if the slot is empty or x is nearer by
// proximity than the current entry; dist measures proximity from the owner.
func (t *routingTable) consider(self ID, x Ref, dist func(Addr) int64) bool {
	r := t.space.SharedPrefix(self, x.ID)
	if r >= t.space.Digits() {
		return false // same id as the owner
	}
	c := t.space.Digit(x.ID, r)
	for t.rows() <= r {
		for i := 0; i < t.cols; i++ {
			t.cells = append(t.cells, None)
		}
	}
	cur := &t.cells[r*t.cols+c]
	if cur.Valid() && (cur.Addr == x.Addr || dist(cur.Addr) <= dist(x.Addr)) {
		return false
	}
	*cur = x
	return true
}

// remove empties every slot holding a and returns the rows it was found in.
func (t *routingTable) remove(a Addr, rows []int) []int {
	for i := range t.cells {
		if t.cells[i].Addr == a {
			t.cells[i] = None
			rows = append(rows, i/t.cols)
		}
	}
	return rows
}
