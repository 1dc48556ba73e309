package resourcesync

import (
	"fmt"
	"time"
)

// ParseTime reads a W3C datetime at every granularity the profile allows:
// YYYY, YYYY-MM, YYYY-MM-DD, YYYY-MM-DDThh:mmTZD, YYYY-MM-DDThh:mm:ssTZD and
// YYYY-MM-DDThh:mm:ss.sTZD with any number of fraction digits, TZD being Z,
// +hh:mm or -hh:mm. The result is in UTC. It is hand-written because it runs
// for every entry of every list.
func ParseTime(s string) (time.Time, error) {
	t, ok := parseW3C(s)
	if !ok {
		return time.Time{}, fmt.Errorf("datetime %q: not a W3C datetime (YYYY[-MM[-DD[Thh:mm[:ss[.s]]TZD]]])", s)
	}
	return t, nil
}

// parseW3C is generic so that the reader can parse text it holds as bytes
// without making a string of it first.
func parseW3C[T string | []byte](s T) (time.Time, bool) {
	year, ok := digits(s, 0, 4)
	if !ok {
		return time.Time{}, false
	}
	month, day := 1, 1
	if len(s) == 4 {
		return time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC), true
	}
	if s[4] != '-' {
		return time.Time{}, false
	}
	if month, ok = digits(s, 5, 2); !ok || month < 1 || month > 12 {
		return time.Time{}, false
	}
	if len(s) == 7 {
		return time.Date(year, time.Month(month), 1, 0, 0, 0, 0, time.UTC), true
	}
	if s[7] != '-' {
		return time.Time{}, false
	}
	if day, ok = digits(s, 8, 2); !ok || day < 1 || day > daysIn(year, month) {
		return time.Time{}, false
	}
	if len(s) == 10 {
		return time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC), true
	}
	if s[10] != 'T' {
		return time.Time{}, false
	}
	hour, ok1 := digits(s, 11, 2)
	if !ok1 || len(s) < 16 || s[13] != ':' {
		return time.Time{}, false
	}
	minute, ok2 := digits(s, 14, 2)
	if !ok2 || hour > 23 || minute > 59 {
		return time.Time{}, false
	}
	i, sec, nsec := 16, 0, 0
	if i < len(s) && s[i] == ':' {
		if sec, ok = digits(s, 17, 2); !ok || sec > 59 {
			return time.Time{}, false
		}
		i = 19
		if i < len(s) && s[i] == '.' {
			i++
			start, scale := i, 100_000_000
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				nsec += int(s[i]-'0') * scale
				scale /= 10
				i++
			}
			if i == start {
				return time.Time{}, false
			}
		}
	}
	offset, ok := parseTZD(s[i:])
	if !ok {
		return time.Time{}, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC)
	t = t.Add(-time.Duration(offset) * time.Second)
	if y := t.Year(); y < 0 || y > 9999 {
		// An offset moved the instant out of the four-digit years that
		// FormatTime can write back.
		return time.Time{}, false
	}
	return t, true
}

// parseTZD reads Z, +hh:mm or -hh:mm and returns the offset in seconds.
func parseTZD[T string | []byte](s T) (int, bool) {
	if len(s) == 1 && s[0] == 'Z' {
		return 0, true
	}
	if len(s) != 6 || (s[0] != '+' && s[0] != '-') || s[3] != ':' {
		return 0, false
	}
	h, ok1 := digits(s, 1, 2)
	m, ok2 := digits(s, 4, 2)
	if !ok1 || !ok2 || h > 23 || m > 59 {
		return 0, false
	}
	off := h*3600 + m*60
	if s[0] == '-' {
		off = -off
	}
	return off, true
}

func digits[T string | []byte](s T, at, n int) (int, bool) {
	if at+n > len(s) {
		return 0, false
	}
	v := 0
	for i := at; i < at+n; i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// FormatTime writes t the way this package publishes every time: UTC, "Z",
// as many fractional digits as the value needs and none for whole seconds.
func FormatTime(t time.Time) string {
	return string(appendTime(nil, t))
}

const w3cLayout = "2006-01-02T15:04:05.999999999Z07:00"

func appendTime(b []byte, t time.Time) []byte {
	return t.UTC().AppendFormat(b, w3cLayout)
}
