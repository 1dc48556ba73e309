package admin

import (
	"encoding/json"
	"testing"
	"time"
)

func TestHumanDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                                    "0s",
		250 * time.Millisecond:               "250ms",
		9075841778:                           "9.1s",
		3*time.Minute + 12*time.Second + 4e8: "3m12s",
		5*time.Hour + 3*time.Minute + 2e9:    "5h3m",
		52*time.Hour + 10*time.Minute:        "2d4h",
		48 * time.Hour:                       "2d",
		time.Hour + 12*time.Second:           "1h",
		3 * time.Minute:                      "3m",
		-1500 * time.Millisecond:             "-1.5s",
	} {
		if got := HumanDuration(d); got != want {
			t.Errorf("HumanDuration(%d) = %q, want %q", d, got, want)
		}
	}
}

// TestDurationJSON: the API writes a duration as a string a script can
// parse back, never as nanoseconds.
func TestDurationJSON(t *testing.T) {
	b, err := json.Marshal(struct {
		Lag Duration `json:"lag"`
	}{Duration(9075841778)})
	if err != nil || string(b) != `{"lag":"9.076s"}` {
		t.Fatalf("marshalled %s (%v)", b, err)
	}
	var back struct {
		Lag Duration `json:"lag"`
	}
	if err := json.Unmarshal(b, &back); err != nil || time.Duration(back.Lag) != 9076*time.Millisecond {
		t.Fatalf("read back %v (%v)", back.Lag, err)
	}
}
