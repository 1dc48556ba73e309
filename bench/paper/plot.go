package main

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"time"
)

// Panel geometry of plotGrid, in SVG user units.
const (
	panelW, panelH = 360, 240
	marginL        = 60
	marginT        = 50
	padR, padB     = 20, 50
)

// modeColour keeps each mode's colour the same in every plot.
var modeColour = map[string]string{"baseline": "#c0392b", "incremental": "#2471a3", "push": "#1e8449"}

// plotGrid draws a metric as the paper's figures do: one panel per change
// interval (rows) and synchronisation interval (columns), the Source's
// size on a log x axis, one line per mode; solid for A (viaduct reading
// the Source), dashed for B (reading A). Push Destinations do not poll:
// their line is the same in both columns. max is the y axis's top, or 0
// to fit the data.
func plotGrid(m matrix, res []outcome, title string, value func(metrics) float64, max float64) []byte {
	cols, rows := len(m.SyncIntervals), len(m.ChangeIntervals)
	w, h := cols*(panelW+marginL+padR), rows*(panelH+marginT+padB)+40
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/><text x="%d" y="22" font-size="16" text-anchor="middle">%s</text>`+"\n", w, h, w/2, html.EscapeString(title))
	top := max
	if top == 0 {
		for _, o := range res {
			if o.Failed == "" {
				top = math.Max(top, math.Max(value(o.A), value(o.B)))
			}
		}
		top = niceCeil(top)
	}
	for r, ci := range m.ChangeIntervals {
		for c, si := range m.SyncIntervals {
			x0, y0 := c*(panelW+marginL+padR)+marginL, r*(panelH+marginT+padB)+marginT+20
			panel(&b, m, res, x0, y0, ci, si, top, value)
		}
	}
	legend(&b, m, h-12)
	b.WriteString("</svg>\n")
	return b.Bytes()
}

func panel(b *bytes.Buffer, m matrix, res []outcome, x0, y0 int, ci, si time.Duration, top float64, value func(metrics) float64) {
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle">change every %v, sync every %v</text>`+"\n", x0+panelW/2, y0-8, ci, si)
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#444"/>`+"\n", x0, y0, panelW, panelH)
	lo, hi := math.Log10(float64(m.Sizes[0])), math.Log10(float64(m.Sizes[len(m.Sizes)-1]))
	if hi == lo {
		hi = lo + 1
	}
	px := func(n int) float64 { return float64(x0) + (math.Log10(float64(n))-lo)/(hi-lo)*panelW }
	py := func(v float64) float64 { return float64(y0+panelH) - math.Min(v/top, 1.05)*panelH }
	for _, n := range m.Sizes {
		fmt.Fprintf(b, `<text x="%.0f" y="%d" text-anchor="middle">%d</text>`+"\n", px(n), y0+panelH+16, n)
	}
	for i := 0; i <= 4; i++ {
		v := top * float64(i) / 4
		fmt.Fprintf(b, `<text x="%d" y="%.0f" text-anchor="end">%.3g</text><line x1="%d" x2="%d" y1="%.0f" y2="%.0f" stroke="#ddd"/>`+"\n",
			x0-6, py(v)+4, v, x0, x0+panelW, py(v), py(v))
	}
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle">resources</text>`+"\n", x0+panelW/2, y0+panelH+34)
	for _, mode := range m.Modes {
		for _, who := range []string{"A", "B"} {
			var pts bytes.Buffer
			for _, o := range res {
				if o.Failed != "" || o.Mode != mode || o.ChangeInterval != ci || (mode != "push" && o.SyncInterval != si) {
					continue
				}
				v := value(o.A)
				if who == "B" {
					v = value(o.B)
				}
				fmt.Fprintf(&pts, "%.1f,%.1f ", px(o.Size), py(v))
			}
			dash := ""
			if who == "B" {
				dash = ` stroke-dasharray="6 4"`
			}
			fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", pts.String(), modeColour[mode], dash)
		}
	}
}

func legend(b *bytes.Buffer, m matrix, y int) {
	x := 20
	for _, mode := range m.Modes {
		fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"/><text x="%d" y="%d">%s</text>`+"\n",
			x, x+24, y-4, y-4, modeColour[mode], x+30, y, mode)
		x += 130
	}
	fmt.Fprintf(b, `<text x="%d" y="%d">solid: viaduct reading the Source; dashed: a second viaduct reading the first</text>`+"\n", x, y)
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, f := range []float64{1, 2, 5, 10} {
		if f*p >= v {
			return f * p
		}
	}
	return 10 * p
}
