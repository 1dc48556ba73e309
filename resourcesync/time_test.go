package resourcesync

import (
	"testing"
	"time"
)

func TestParseTime(t *testing.T) {
	utc := func(y int, mo time.Month, d, h, mi, s, ns int) time.Time {
		return time.Date(y, mo, d, h, mi, s, ns, time.UTC)
	}
	for _, c := range []struct {
		in   string
		want time.Time
	}{
		{"2013", utc(2013, 1, 1, 0, 0, 0, 0)},
		{"2013-02", utc(2013, 2, 1, 0, 0, 0, 0)},
		{"2013-02-28", utc(2013, 2, 28, 0, 0, 0, 0)},
		{"2012-02-29", utc(2012, 2, 29, 0, 0, 0, 0)},
		{"2013-01-02T13:00Z", utc(2013, 1, 2, 13, 0, 0, 0)},
		{"2013-01-02T13:00+01:00", utc(2013, 1, 2, 12, 0, 0, 0)},
		{"2013-01-02T13:00:05Z", utc(2013, 1, 2, 13, 0, 5, 0)},
		{"2013-01-02T13:00:05-05:30", utc(2013, 1, 2, 18, 30, 5, 0)},
		{"2013-01-02T13:00:05.5Z", utc(2013, 1, 2, 13, 0, 5, 500_000_000)},
		{"2013-01-02T13:00:05.123456789Z", utc(2013, 1, 2, 13, 0, 5, 123456789)},
		{"2013-01-02T13:00:05.1234567891234Z", utc(2013, 1, 2, 13, 0, 5, 123456789)},
		{"2013-01-01T00:30:00+01:00", utc(2012, 12, 31, 23, 30, 0, 0)},
	} {
		got, err := ParseTime(c.in)
		if err != nil || !got.Equal(c.want) || got.Location() != time.UTC {
			t.Errorf("ParseTime(%q) = %v, %v; want %v UTC", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{
		"", "13", "2013-", "2013-13", "2013-00", "2013-02-29", "2013-04-31", "2013-1-01",
		"2013-01-02T13Z", "2013-01-02T13:00", "2013-01-02T24:00Z", "2013-01-02T13:60Z",
		"2013-01-02T13:00:61Z", "2013-01-02T13:00:00.Z", "2013-01-02T13:00:00+0100",
		"2013-01-02 13:00:00Z", "2013-01-02T13:00:00z", "2013-01-02T13:00:00ZZ",
		"0000-01-01T00:00:00+01:00", "+2013-01-01",
	} {
		if got, err := ParseTime(bad); err == nil {
			t.Errorf("ParseTime(%q) = %v, want an error", bad, got)
		}
	}
}

func TestFormatTime(t *testing.T) {
	paris := time.FixedZone("CET", 3600)
	for _, c := range []struct {
		in   time.Time
		want string
	}{
		{time.Date(2013, 1, 2, 13, 0, 0, 0, time.UTC), "2013-01-02T13:00:00Z"},
		{time.Date(2013, 1, 2, 14, 0, 0, 0, paris), "2013-01-02T13:00:00Z"},
		{time.Date(2013, 1, 2, 13, 0, 0, 500_000_000, time.UTC), "2013-01-02T13:00:00.5Z"},
		{time.Date(2013, 1, 2, 13, 0, 0, 1, time.UTC), "2013-01-02T13:00:00.000000001Z"},
	} {
		if got := FormatTime(c.in); got != c.want {
			t.Errorf("FormatTime(%v) = %q, want %q", c.in, got, c.want)
		}
		if back, err := ParseTime(c.want); err != nil || !back.Equal(c.in) {
			t.Errorf("ParseTime(%q) = %v, %v", c.want, back, err)
		}
	}
}
