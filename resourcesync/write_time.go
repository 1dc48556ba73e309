package resourcesync

import "time"

// appendW3C is appendTime without time.AppendFormat's layout walk: a list
// writes two or three times per entry, and this is several times faster.
// It writes the same bytes: UTC, "Z", the fraction's significant digits
// and none for whole seconds. Years outside 0000-9999, which the layout
// writes its own way, go to appendTime.
func appendW3C(b []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return appendTime(b, t)
	}
	hour, min, sec := t.Clock()
	b = append(b, byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-')
	b = append2(b, int(month))
	b = append(b, '-')
	b = append2(b, day)
	b = append(b, 'T')
	b = append2(b, hour)
	b = append(b, ':')
	b = append2(b, min)
	b = append(b, ':')
	b = append2(b, sec)
	if ns := t.Nanosecond(); ns != 0 {
		var frac [10]byte
		frac[0] = '.'
		for i := 9; i >= 1; i-- {
			frac[i] = byte('0' + ns%10)
			ns /= 10
		}
		n := 10
		for frac[n-1] == '0' {
			n--
		}
		b = append(b, frac[:n]...)
	}
	return append(b, 'Z')
}

// append2 writes n (0-99) in two digits.
func append2(b []byte, n int) []byte {
	return append(b, byte('0'+n/10), byte('0'+n%10))
}
