//go:build !linux || !cgo

package sqliteconn

func arenaCap() int { return 0 }

func countArenas() int { return -1 }
