package admin

import "strconv"

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }
