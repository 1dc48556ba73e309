package ports

import "testing"

func TestPlus(t *testing.T) {
	if got, err := Plus("127.0.0.1:19100", 49); err != nil || got != "127.0.0.1:19149" {
		t.Errorf("Plus(127.0.0.1:19100, 49) = %q, %v", got, err)
	}
	if _, err := Plus("127.0.0.1:http", 1); err == nil {
		t.Error("a port that is not a number was moved on")
	}
	if _, err := Plus("127.0.0.1", 1); err == nil {
		t.Error("an address without a port was accepted")
	}
}
