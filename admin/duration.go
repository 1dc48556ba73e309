package admin

import (
	"fmt"
	"time"
)

// Duration is a span of time as the API writes it: a Go duration string
// to the millisecond ("9.076s", "3m12s"), which scripts parse with
// time.ParseDuration or its like, where a bare number would need a unit
// written elsewhere. Its String is the rounder form people read.
type Duration time.Duration

// MarshalText writes d to the millisecond.
func (d Duration) MarshalText() ([]byte, error) {
	return []byte(time.Duration(d).Round(time.Millisecond).String()), nil
}

// UnmarshalText reads what MarshalText wrote.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("reading a duration: %w", err)
	}
	*d = Duration(v)
	return nil
}

// String is HumanDuration of d.
func (d Duration) String() string { return HumanDuration(time.Duration(d)) }

// HumanDuration writes d rounded to what a person compares at a glance:
// tenths of a second below a minute ("9.1s"), seconds below an hour
// ("3m12s"), minutes below a day ("5h3m", "1h"), hours past it ("2d4h").
// Below a second it keeps milliseconds ("250ms").
func HumanDuration(d time.Duration) string {
	if d < 0 {
		return "-" + HumanDuration(-d)
	}
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	case d < time.Hour:
		d = d.Round(time.Second)
		if d%time.Minute == 0 {
			return fmt.Sprintf("%dm", d/time.Minute)
		}
		return d.String()
	case d < 24*time.Hour:
		d = d.Round(time.Minute)
		if d%time.Hour == 0 {
			return fmt.Sprintf("%dh", d/time.Hour)
		}
		return fmt.Sprintf("%dh%dm", d/time.Hour, d%time.Hour/time.Minute)
	}
	d = d.Round(time.Hour)
	days, hours := d/(24*time.Hour), (d%(24*time.Hour))/time.Hour
	if hours == 0 {
		return fmt.Sprintf("%dd", days)
	}
	return fmt.Sprintf("%dd%dh", days, hours)
}
