package resourcesync

import "time"

// parseTimeTolerant reads the near-W3C datetimes real Sources write, after
// the strict form has failed: no time zone at all (Python's isoformat of a
// naive datetime, as WEKO and resync-based Sources write it), read as UTC;
// a space in place of the T, an offset without its colon (+0900, Java's
// SimpleDateFormat "Z"), or a lowercase z. kind says which, for the
// reader's warning. Anything else is still refused.
func parseTimeTolerant(s []byte) (t time.Time, kind WarningKind, ok bool) {
	if len(s) < 16 || len(s) > 64 {
		return time.Time{}, "", false
	}
	var buf [72]byte
	b := append(buf[:0], s...)
	kind = WarnTimeForm
	if b[10] == ' ' {
		b[10] = 'T'
	}
	// The time of day runs from 11 over digits, colons and a fraction.
	end := 11
	for end < len(b) && (b[end] >= '0' && b[end] <= '9' || b[end] == ':' || b[end] == '.') {
		end++
	}
	switch zone := b[end:]; {
	case len(zone) == 0:
		b, kind = append(b, 'Z'), WarnZonelessTime
	case len(zone) == 1 && zone[0] == 'z':
		zone[0] = 'Z'
	case len(zone) == 5 && (zone[0] == '+' || zone[0] == '-'):
		b = append(b[:end+3], ':', zone[3], zone[4])
	case len(zone) == 3 && (zone[0] == '+' || zone[0] == '-'):
		b = append(b, ':', '0', '0')
	}
	t, ok = parseW3C(b)
	return t, kind, ok
}

// time reads a datetime value, strictly or, failing that, as a tolerant
// reader must, with a warning. name says where, for messages.
func (r *Reader) time(name string, v []byte) (time.Time, error) {
	if t, ok := parseW3C(v); ok {
		return t, nil
	}
	if t, kind, ok := parseTimeTolerant(v); ok {
		if kind == WarnZonelessTime {
			r.warn(kind, r.where(), "%s %q has no time zone: read as UTC", name, v)
		} else {
			r.warn(kind, r.where(), "%s %q is not a W3C datetime: read as %s", name, v, FormatTime(t))
		}
		return t, nil
	}
	_, err := ParseTime(string(v))
	return time.Time{}, err
}
