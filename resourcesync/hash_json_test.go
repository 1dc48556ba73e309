package resourcesync

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestHashesJSONIsTheAttributeForm(t *testing.T) {
	v := struct {
		Hash Hashes `json:"hash,omitempty"`
	}{Hashes{{MD5, "1584abdf8ebdc9802ac0c6a7402c03b6"}, {SHA256, "854f61290e2e197a11bc91063afce22e43f8ccc655237050ace766adc68dc784"}}}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"hash":"md5:1584abdf8ebdc9802ac0c6a7402c03b6 sha-256:854f61290e2e197a11bc91063afce22e43f8ccc655237050ace766adc68dc784"}`
	if string(b) != want {
		t.Fatalf("got %s\nwant %s", b, want)
	}
	v.Hash = nil
	if b, _ := json.Marshal(v); string(b) != `{}` {
		t.Errorf("no hashes: got %s, want {}", b)
	}
}

func TestHashesJSONRoundTrip(t *testing.T) {
	for _, hs := range []Hashes{
		nil,
		{{MD5, "1584abdf8ebdc9802ac0c6a7402c03b6"}},
		// Kept as read by ParseHashesLoose: not hex, not lowercased,
		// a colon in the digest, an algorithm this package does not know.
		{{SHA256, "f4OxZX_x_DFGFDgghgdfb6rtSx-iosjf6735432nklj"}, {"x-tiger", "a:b"}},
		{{MD5, ""}},
		{{"x-\"quoted\"\\", "\u00e9t\u00e9"}},
	} {
		b, err := json.Marshal(hs)
		if err != nil {
			t.Fatalf("%v: %v", hs, err)
		}
		var got Hashes
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if !reflect.DeepEqual(got, hs) {
			t.Errorf("%s read back as %#v, want %#v", b, got, hs)
		}
	}
}

func TestHashesJSONRefusesWhatWouldNotReadBack(t *testing.T) {
	for _, hs := range []Hashes{
		{{"", "abc"}},
		{{"md5:x", "abc"}},
		{{MD5, "a b"}},
	} {
		if b, err := json.Marshal(hs); err == nil {
			t.Errorf("%#v written as %s, want an error", hs, b)
		}
	}
}

// Messages and catalog rows written before the attribute form hold an
// array of objects; they read as they always did.
func TestHashesJSONReadsTheOlderForm(t *testing.T) {
	var v struct{ Hash Hashes }
	old := `{"Hash":[{"Alg":"md5","Value":"1955cb7393c1d3c0b9f9184ba2501972"},{"Alg":"sha-256","Value":"a64930daaf000d69ff874913a191660bdf1932389378c13f2ce53ae54cf40c14"}]}`
	if err := json.Unmarshal([]byte(old), &v); err != nil {
		t.Fatal(err)
	}
	want := Hashes{{MD5, "1955cb7393c1d3c0b9f9184ba2501972"}, {SHA256, "a64930daaf000d69ff874913a191660bdf1932389378c13f2ce53ae54cf40c14"}}
	if !reflect.DeepEqual(v.Hash, want) {
		t.Errorf("got %#v, want %#v", v.Hash, want)
	}
	for _, bad := range []string{`{"Hash":"md5"}`, `{"Hash":7}`, `{"Hash":[7]}`} {
		if err := json.Unmarshal([]byte(bad), &v); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
