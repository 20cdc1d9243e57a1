package match

// Op is a constraint operator.
type Op uint8

// The operators of the filter language. Their order is the canonical order
// of constraints on the same attribute.
const (
	OpInvalid Op = iota
	OpEq
	OpNe
	OpLt
	OpLe
	OpGt
	OpGe
	OpPrefix
	OpSuffix
	OpContains
	OpExists
)

var opNames = [...]string{
	OpInvalid:  "<invalid>",
	OpEq:       "==",
	OpNe:       "!=",
	OpLt:       "<",
	OpLe:       "<=",
	OpGt:       ">",
	OpGe:       ">=",
	OpPrefix:   "prefix",
	OpSuffix:   "suffix",
	OpContains: "contains",
	OpExists:   "exists",
}

// String returns the operator as written in the filter language.
func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return opNames[OpInvalid]
}

// IsStringOp reports whether o applies to strings only (prefix, suffix,
// contains).
func (o Op) IsStringOp() bool { return o == OpPrefix || o == OpSuffix || o == OpContains }

// opByName maps the written form of every operator to its Op.
var opByName = map[string]Op{
	"==": OpEq, "!=": OpNe, "<": OpLt, "<=": OpLe, ">": OpGt, ">=": OpGe,
	"prefix": OpPrefix, "suffix": OpSuffix, "contains": OpContains, "exists": OpExists,
}

// ParseOp returns the operator written as s.
func ParseOp(s string) (Op, bool) {
	o, ok := opByName[s]
	return o, ok
}
