package match

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ParseError is a syntax or value error in filter text. Col is the 1-based
// column (in characters) where the problem starts.
type ParseError struct {
	Col int
	Msg string
}

// Error returns "col N: message".
func (e *ParseError) Error() string { return fmt.Sprintf("col %d: %s", e.Col, e.Msg) }

const (
	wantName  = "an attribute name"
	wantOp    = "an operator (==, !=, <, <=, >, >=, prefix, suffix, contains, exists)"
	wantValue = "a value (a quoted string, a number, true or false)"
	wantAnd   = "&& or the end of the filter"
)

// Parse reads a filter written in the filter language: constraints
// `attr op value` or `attr exists` joined by `&&`, for example
// `symbol == "IBM" && price < 10 && exchange prefix "NY"`. String literals
// are double-quoted (or back-quoted raw strings) with Go escapes; numbers
// without fraction or exponent are int64, others float64; true and false are
// bools. The single token `*` is the filter that matches every event.
// Errors are *ParseError values giving the column and what was expected.
func Parse(text string) (Filter, error) {
	p := parser{text: text}
	return p.filter()
}

// MustParse is Parse for filters known to be valid; it panics otherwise.
func MustParse(text string) Filter {
	f, err := Parse(text)
	if err != nil {
		panic(fmt.Sprintf("match.MustParse(%q): %v", text, err))
	}
	return f
}

type parser struct {
	text string
	pos  int // byte offset of the next unread byte
}

func (p *parser) filter() (Filter, error) {
	p.skipSpace()
	if strings.HasPrefix(p.text[p.pos:], MatchAllText) {
		p.pos += len(MatchAllText)
		p.skipSpace()
		if p.pos != len(p.text) {
			return Filter{}, p.errorf(p.pos, "expected the end of the filter after %s, found %s", MatchAllText, p.found())
		}
		return Filter{}, nil
	}
	var cs []Constraint
	for {
		c, err := p.constraint()
		if err != nil {
			return Filter{}, err
		}
		cs = append(cs, c)
		p.skipSpace()
		if p.pos == len(p.text) {
			return canonicalFilter(cs), nil
		}
		if !strings.HasPrefix(p.text[p.pos:], "&&") {
			return Filter{}, p.expected(wantAnd)
		}
		p.pos += 2
	}
}

func (p *parser) constraint() (Constraint, error) {
	p.skipSpace()
	name := p.word()
	if name == "" || !ValidAttrName(name) {
		return Constraint{}, p.expected(wantName)
	}
	p.pos += len(name)
	p.skipSpace()
	op, ok := p.op()
	if !ok {
		return Constraint{}, p.expected(wantOp)
	}
	if op == OpExists {
		return Constraint{Attr: name, Op: op}, nil
	}
	p.skipSpace()
	valStart := p.pos
	val, err := p.value()
	if err != nil {
		return Constraint{}, err
	}
	if op.IsStringOp() && val.Kind() != KindString {
		return Constraint{}, p.errorf(valStart, "operator %s needs a string value, found %s", op, val.Kind())
	}
	return Constraint{Attr: name, Op: op, Val: val}, nil
}

// op reads an operator: a symbol or a word.
func (p *parser) op() (Op, bool) {
	rest := p.text[p.pos:]
	for _, sym := range []string{"==", "!=", "<=", ">=", "<", ">"} {
		if strings.HasPrefix(rest, sym) {
			p.pos += len(sym)
			o, _ := ParseOp(sym)
			return o, true
		}
	}
	w := p.word()
	o, ok := ParseOp(w)
	if !ok || w == "" {
		return OpInvalid, false
	}
	p.pos += len(w)
	return o, true
}

func (p *parser) value() (Value, error) {
	if p.pos == len(p.text) {
		return Value{}, p.expected(wantValue)
	}
	switch c := p.text[p.pos]; {
	case c == '"' || c == '`':
		return p.stringLit()
	case c == '-' || c == '+' || c == '.' || '0' <= c && c <= '9':
		return p.number()
	}
	start := p.pos
	switch w := p.word(); w {
	case "true", "false":
		p.pos += len(w)
		return Bool(w == "true"), nil
	case "NaN", "Inf", "Infinity", "nan", "inf":
		return Value{}, p.errorf(start, "NaN and infinities are not allowed")
	}
	return Value{}, p.expected(wantValue)
}

func (p *parser) stringLit() (Value, error) {
	start := p.pos
	quote := p.text[start]
	i := start + 1
	for ; i < len(p.text); i++ {
		c := p.text[i]
		if c == '\\' && quote == '"' {
			i++
			continue
		}
		if c == quote {
			break
		}
	}
	if i >= len(p.text) {
		return Value{}, p.errorf(start, "unterminated string literal")
	}
	s, err := strconv.Unquote(p.text[start : i+1])
	if err != nil {
		return Value{}, p.errorf(start, "invalid string literal %s: bad escape or newline", p.text[start:i+1])
	}
	p.pos = i + 1
	return Str(s), nil
}

func (p *parser) number() (Value, error) {
	start := p.pos
	i := start
	if i < len(p.text) && (p.text[i] == '-' || p.text[i] == '+') {
		i++
	}
	for i < len(p.text) && isNumberByte(p.text[i], p.text[i-1]) {
		i++
	}
	lit := p.text[start:i]
	if !hasDigit(lit) {
		return Value{}, p.expected(wantValue)
	}
	v, err := parseNumber(lit)
	if err != nil {
		if _, ferr := strconv.ParseFloat(lit, 64); ferr != nil && !strings.Contains(ferr.Error(), "range") {
			return Value{}, p.errorf(start, "malformed number %q", lit)
		}
		return Value{}, p.errorf(start, "%v", err)
	}
	p.pos = i
	return v, nil
}

func isNumberByte(c, prev byte) bool {
	switch {
	case '0' <= c && c <= '9', c == '.', c == 'e', c == 'E':
		return true
	case c == '-' || c == '+':
		return prev == 'e' || prev == 'E'
	}
	return false
}

func hasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }

// word returns the run of name bytes at the current position, without
// consuming it.
func (p *parser) word() string {
	i := p.pos
	for i < len(p.text) && isNameByte(p.text[i]) {
		i++
	}
	return p.text[p.pos:i]
}

func (p *parser) skipSpace() {
	for p.pos < len(p.text) {
		switch p.text[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// found describes the token at the current position for error messages.
func (p *parser) found() string {
	if p.pos >= len(p.text) {
		return "the end of the filter"
	}
	rest := p.text[p.pos:]
	if w := p.word(); w != "" {
		return strconv.Quote(w)
	}
	end := strings.IndexAny(rest, " \t\r\n")
	if end < 0 {
		end = len(rest)
	}
	if end > 16 {
		end = 16
	}
	if _, size := utf8.DecodeRuneInString(rest); end < size {
		end = size
	}
	return strconv.Quote(rest[:end])
}

func (p *parser) expected(what string) error {
	return p.errorf(p.pos, "expected %s, found %s", what, p.found())
}

func (p *parser) errorf(offset int, format string, args ...any) error {
	return &ParseError{Col: utf8.RuneCountInString(p.text[:offset]) + 1, Msg: fmt.Sprintf(format, args...)}
}
