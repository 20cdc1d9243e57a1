package sim

import (
	"fmt"
	"io"
	"strings"
)

// writeTable renders rows under headers, columns right-aligned and separated
// by two spaces.
func writeTable(w io.Writer, headers []string, rows [][]string) error {
	width := make([]int, len(headers))
	for i, h := range headers {
		width[i] = len(h)
	}
	for _, row := range rows {
		for i, c := range row {
			width[i] = max(width[i], len(c))
		}
	}
	var b strings.Builder
	line := func(cells []string) {
		for i, c := range cells {
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(strings.Repeat(" ", width[i]-len(c)))
			b.WriteString(c)
		}
		b.WriteByte('\n')
	}
	line(headers)
	for _, row := range rows {
		line(row)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func f2(x float64) string { return fmt.Sprintf("%.2f", x) }
func f1(x float64) string { return fmt.Sprintf("%.1f", x) }
