package resourcesync

import (
	"reflect"
	"strings"
	"testing"
)

// knownDifference reports the inputs on which the scanner is meant to
// differ from encoding/xml: names are checked against XML 1.0 fifth
// edition, which allows more non-ASCII characters than the first edition
// tables of encoding/xml.
func knownDifference(scan, ref outcome) bool {
	return scan.fatal == nil && ref.fatal != nil && strings.Contains(ref.fatal.Error(), "invalid XML name")
}

// compareOutcomes fails t when the scanner and encoding/xml disagree on
// whether data is well formed, where the reading stops, or on anything
// read up to there.
func compareOutcomes(t *testing.T, data []byte, scan, ref outcome) {
	t.Helper()
	if (scan.fatal == nil) != (ref.fatal == nil) {
		if knownDifference(scan, ref) {
			return
		}
		t.Fatalf("scanner fatal error %v, encoding/xml %v, on\n%q", scan.fatal, ref.fatal, data)
	}
	if scan.fatal != nil && scan.fatal.Limit != ref.fatal.Limit {
		t.Fatalf("scanner stopped at limit %q, encoding/xml at %q (%v / %v), on\n%q", scan.fatal.Limit, ref.fatal.Limit, scan.fatal, ref.fatal, data)
	}
	if (scan.header == nil) != (ref.header == nil) {
		t.Fatalf("header read by one only: scanner %v, encoding/xml %v, on\n%q", scan.fatal, ref.fatal, data)
	}
	if scan.header != nil && !reflect.DeepEqual(scan.header, ref.header) {
		t.Fatalf("headers differ:\nscanner      %+v\nencoding/xml %+v\non %q", scan.header, ref.header, data)
	}
	n := min(len(scan.entries), len(ref.entries))
	if scan.fatal == nil && len(scan.entries) != len(ref.entries) {
		t.Fatalf("scanner read %d entries, encoding/xml %d, on\n%q", len(scan.entries), len(ref.entries), data)
	}
	for i := 0; i < n; i++ {
		se, re := scan.errs[i], ref.errs[i]
		if (se == nil) != (re == nil) || se != nil && (se.Limit != re.Limit || se.Line != re.Line || se.Err.Error() != re.Err.Error()) {
			t.Fatalf("call %d of Next: scanner error %v, encoding/xml %v, on\n%q", i+1, se, re, data)
		}
		if !reflect.DeepEqual(scan.entries[i], ref.entries[i]) {
			t.Fatalf("entry %d differs:\nscanner      %+v\nencoding/xml %+v\non %q", i+1, scan.entries[i], ref.entries[i], data)
		}
	}
}

// FuzzScannerMatchesXML reads anything both with the scanner and with
// encoding/xml under the same reader: they must agree on what is well
// formed and, where both read, on every header and entry (and their
// lines).
func FuzzScannerMatchesXML(f *testing.F) {
	addSpecSeeds(f)
	f.Add([]byte(extDoc))
	for _, d := range scannerCases {
		f.Add([]byte(d))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		compareOutcomes(t, data, scanOutcome(data, fuzzLimits), xmlOutcome(data, fuzzLimits))
	})
}
