package match

import "fmt"

// ValidAttrName reports whether s is an attribute name:
// [A-Za-z_][A-Za-z0-9_.-]*.
func ValidAttrName(s string) bool {
	if s == "" || !isNameStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isNameByte(s[i]) {
			return false
		}
	}
	return true
}

func checkAttrName(s string) error {
	if !ValidAttrName(s) {
		return fmt.Errorf("invalid attribute name %q: want [A-Za-z_][A-Za-z0-9_.-]*", s)
	}
	return nil
}

func isNameStart(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isNameByte(c byte) bool {
	return isNameStart(c) || '0' <= c && c <= '9' || c == '.' || c == '-'
}
