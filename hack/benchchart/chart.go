package main

import (
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Layout sizes, in points.
const (
	panelWidth  = 300
	panelHeight = 230
	margin      = 14
	gap         = 12
	legendGap   = 28
	// logRatio is the largest over the smallest value from which an axis is
	// drawn on a log scale: below it a linear axis from zero reads better.
	logRatioX = 4
	logRatioY = 30
	// maxNodeTicks is the most Node counts labelled one by one on the x axis.
	maxNodeTicks = 8
)

// chart is a laid-out chart, ready to draw onto a canvas of its size.
type chart struct {
	width, height vg.Length
	header        []headerLine
	plots         [][]*plot.Plot
	legends       []plot.Legend
	legendHeight  vg.Length
}

// headerLine is one line of the title or caption.
type headerLine struct {
	text  string
	style text.Style
}

// seriesStyle is how one series is drawn in every panel.
type seriesStyle struct {
	line  draw.LineStyle
	glyph draw.GlyphStyle
}

// sansFont is the chart's typeface at a size.
func sansFont(size vg.Length) font.Font {
	return font.Font{Typeface: "Liberation", Variant: "Sans", Size: size}
}

// textStyle is a text style in the chart's typeface.
func textStyle(size vg.Length, c color.Color) text.Style {
	return text.Style{
		Color:   c,
		Font:    sansFont(size),
		XAlign:  draw.XCenter,
		YAlign:  draw.YTop,
		Handler: plot.DefaultTextHandler,
	}
}

// binaryColours are this CCM's and upstream's colours (colour-blind safe:
// blue and vermilion), then those of unknown binaries.
func binaryColours() []color.Color {
	return []color.Color{
		color.RGBA{R: 0x00, G: 0x72, B: 0xb2, A: 0xff},
		color.RGBA{R: 0xd5, G: 0x5e, B: 0x00, A: 0xff},
		color.RGBA{R: 0x00, G: 0x9e, B: 0x73, A: 0xff},
		color.RGBA{R: 0xcc, G: 0x79, B: 0xa7, A: 0xff},
		color.RGBA{R: 0xe6, G: 0x9f, B: 0x00, A: 0xff},
	}
}

// styles gives each series its style: the colour and glyph shape tell the
// binary, the dashes and whether the glyph is filled tell the flag set.
func styles(keys []seriesKey) map[seriesKey]seriesStyle {
	colours := binaryColours()
	binaryIndex := map[string]int{}
	flagsIndex := map[string]int{}
	for _, k := range keys {
		if _, ok := binaryIndex[k.Binary]; !ok {
			binaryIndex[k.Binary] = len(binaryIndex)
		}
		if _, ok := flagsIndex[k.Flags]; !ok {
			flagsIndex[k.Flags] = len(flagsIndex)
		}
	}
	dashes := [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(1.5), vg.Points(2.5)}, {vg.Points(6), vg.Points(2), vg.Points(1.5), vg.Points(2)}}
	type shapes struct{ filled, open draw.GlyphDrawer }
	glyphs := []shapes{
		{draw.CircleGlyph{}, draw.RingGlyph{}},
		{draw.BoxGlyph{}, draw.SquareGlyph{}},
		{draw.PyramidGlyph{}, draw.TriangleGlyph{}},
	}
	out := map[seriesKey]seriesStyle{}
	for _, k := range keys {
		b := binaryIndex[k.Binary]
		if k.Binary == binaryThis || k.Binary == binaryUpstream {
			b = rank(k.Binary, binaryThis, binaryUpstream)
		}
		f := flagsIndex[k.Flags]
		if k.Flags == flagsRendered || k.Flags == flagsDefaults {
			f = rank(k.Flags, flagsRendered, flagsDefaults)
		}
		c := colours[b%len(colours)]
		shape := glyphs[b%len(glyphs)].open
		if f == 0 {
			shape = glyphs[b%len(glyphs)].filled
		}
		radius := vg.Points(3)
		if b%len(glyphs) == 1 {
			// A square drawn over a circle at the same point stays visible.
			radius = vg.Points(4)
		}
		out[k] = seriesStyle{
			line:  draw.LineStyle{Color: c, Width: vg.Points(1.5), Dashes: dashes[f%len(dashes)]},
			glyph: draw.GlyphStyle{Color: c, Radius: radius, Shape: shape},
		}
	}
	return out
}

// newChart lays out the chart of d. title replaces the default first line;
// source names the results file in the caption.
func newChart(d chartData, l labels, title, source string) (*chart, error) {
	if len(d.panels) == 0 {
		return nil, fmt.Errorf("%w: scenario %q", ErrNoFigures, d.scenario)
	}
	st := styles(d.keys)
	rows, cols := grid(len(d.panels))
	ch := &chart{plots: make([][]*plot.Plot, rows)}
	for r := range ch.plots {
		ch.plots[r] = make([]*plot.Plot, cols)
	}
	for i, p := range d.panels {
		pl, err := newPanel(p, d.nodes, st, l)
		if err != nil {
			return nil, fmt.Errorf("panel %s: %w", p.fig.key, err)
		}
		ch.plots[i/cols][i%cols] = pl
	}

	if title == "" {
		title = "This CCM and upstream on the bench, against the Node count"
	}
	ch.header = append(ch.header, headerLine{text: title, style: textStyle(14, color.Black)})
	ch.header = append(ch.header, headerLine{
		text:  fmt.Sprintf("Scenario %q: %d runs from %s. Each point is one run; lines join the median at each Node count.", d.scenario, d.runs, source),
		style: textStyle(10, color.Gray{Y: 0x40}),
	})
	if len(d.absent) > 0 {
		ch.header = append(ch.header, headerLine{text: "Not measured: " + strings.Join(d.absent, "; ") + ".", style: textStyle(10, color.Gray{Y: 0x40})})
	}

	ch.legends = legends(d.keys, st, l)
	legendsWidth := vg.Length(0)
	for i := range ch.legends {
		r := ch.legends[i].Rectangle(draw.Canvas{})
		legendsWidth += r.Size().X
		if i > 0 {
			legendsWidth += legendGap
		}
		ch.legendHeight = max(ch.legendHeight, r.Size().Y)
	}

	headerWidth, headerHeight := vg.Length(0), vg.Length(0)
	for _, h := range ch.header {
		r := h.style.Rectangle(h.text)
		headerWidth = max(headerWidth, r.Size().X)
		headerHeight += r.Size().Y
	}
	ch.width = max(vg.Length(cols*panelWidth), legendsWidth, headerWidth) + 2*margin
	ch.height = margin + headerHeight + gap + vg.Length(rows*panelHeight) + gap + ch.legendHeight + margin
	return ch, nil
}

// grid chooses rows and columns for n panels: four as two by two, fewer in
// one row.
func grid(n int) (rows, cols int) {
	if n == 4 {
		return 2, 2
	}
	if n <= 3 {
		return 1, n
	}
	return (n + 2) / 3, 3
}

// legends builds one legend column per binary, in legend order.
func legends(keys []seriesKey, st map[seriesKey]seriesStyle, l labels) []plot.Legend {
	var out []plot.Legend
	var last string
	for i, k := range keys {
		if i == 0 || k.Binary != last {
			leg := plot.NewLegend()
			leg.TextStyle = textStyle(10, color.Black)
			leg.TextStyle.XAlign = draw.XLeft
			leg.TextStyle.YAlign = draw.YBottom
			leg.Top, leg.Left = true, true
			leg.ThumbnailWidth = vg.Points(30)
			leg.Padding = vg.Points(4)
			out = append(out, leg)
			last = k.Binary
		}
		s := st[k]
		out[len(out)-1].Add(l.series(k), &plotter.Line{LineStyle: s.line}, &plotter.Scatter{GlyphStyle: s.glyph})
	}
	return out
}

// newPanel draws one figure's series against the Node count.
func newPanel(p panel, nodes []float64, st map[seriesKey]seriesStyle, l labels) (*plot.Plot, error) {
	pl := plot.New()
	pl.Title.Text = p.fig.title
	if len(p.missing) > 0 {
		names := make([]string, len(p.missing))
		for i, k := range p.missing {
			names[i] = l.series(k)
		}
		pl.Title.Text += "\nno data: " + strings.Join(names, "; ")
	}
	pl.Title.TextStyle = textStyle(11, color.Black)
	pl.Title.Padding = vg.Points(6)
	for _, a := range []*plot.Axis{&pl.X, &pl.Y} {
		a.Label.TextStyle.Font = sansFont(10)
		a.Tick.Label.Font = sansFont(9)
		a.Tick.Length = vg.Points(5)
	}

	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 0xe0}
	grid.Horizontal.Color = color.Gray{Y: 0xe0}
	pl.Add(grid)

	var values []float64
	for _, s := range p.series {
		for _, pt := range s.runs {
			values = append(values, pt.value)
		}
	}
	x, y := nodeAxis(nodes), valueAxis(values)
	for _, s := range p.series {
		style := st[s.key]
		if len(s.line) > 1 {
			line, err := plotter.NewLine(xys(s.line, x, y))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", l.series(s.key), err)
			}
			line.LineStyle = style.line
			pl.Add(line)
		}
		scatter, err := plotter.NewScatter(xys(s.runs, x, y))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.series(s.key), err)
		}
		scatter.GlyphStyle = style.glyph
		pl.Add(scatter)
	}

	x.apply(&pl.X)
	pl.X.Label.Text = "Nodes"
	if x.log {
		pl.X.Label.Text += " (log scale)"
	}
	y.apply(&pl.Y)
	pl.Y.Label.Text = p.fig.unit
	if y.log {
		pl.Y.Label.Text += " (log scale)"
	}
	return pl, nil
}

// xys are points in the axes' coordinates.
func xys(pts []point, x, y axisSpec) plotter.XYs {
	out := make(plotter.XYs, len(pts))
	for i, p := range pts {
		out[i] = plotter.XY{X: x.coord(p.nodes), Y: y.coord(p.value)}
	}
	return out
}

// axisSpec is an axis's range and ticks. A log axis is drawn as a linear
// axis over the values' base-10 logarithms, with ticks labelled with the
// values: gonum's LogScale places a centred axis label's glyph box at the
// linear midpoint of the range, which pads the plot as if the label stuck
// out past the top.
type axisSpec struct {
	// min and max are the range in values, not coordinates.
	min, max float64
	log      bool
	// ticks are in coordinates, labelled with values.
	ticks plot.Ticker
}

// coord turns a value into the axis's coordinate.
func (s axisSpec) coord(v float64) float64 {
	if s.log {
		return math.Log10(v)
	}
	return v
}

// apply sets a's range and ticks.
func (s axisSpec) apply(a *plot.Axis) {
	a.Min, a.Max = s.coord(s.min), s.coord(s.max)
	a.Tick.Marker = s.ticks
}

// nodeAxis is the x axis over the measured Node counts: log when they span
// a factor of logRatioX or more, with a labelled tick at each count.
func nodeAxis(nodes []float64) axisSpec {
	lo, hi := nodes[0], nodes[len(nodes)-1]
	s := axisSpec{log: hi/lo >= logRatioX}
	switch {
	case s.log:
		s.min, s.max = lo/1.6, hi*1.6
	case lo == hi:
		s.min, s.max = lo/2, hi*1.5
	default:
		pad := (hi - lo) * 0.1
		s.min, s.max = lo-pad, hi+pad
	}
	if len(nodes) <= maxNodeTicks {
		ticks := make(plot.ConstantTicks, len(nodes))
		for i, n := range nodes {
			ticks[i] = plot.Tick{Value: s.coord(n), Label: formatNumber(n)}
		}
		s.ticks = ticks
		return s
	}
	if s.log {
		s.ticks = logTicks{}
	} else {
		s.ticks = linearTicks{}
	}
	return s
}

// valueAxis is a y axis over values: log when all are positive and span a
// factor of logRatioY or more, else linear from zero.
func valueAxis(values []float64) axisSpec {
	lo, hi := math.Inf(1), 0.0
	for _, v := range values {
		lo, hi = min(lo, v), max(hi, v)
	}
	if lo > 0 && hi/lo >= logRatioY {
		return axisSpec{
			min:   math.Pow10(int(math.Floor(math.Log10(lo)))),
			max:   math.Pow10(int(math.Ceil(math.Log10(hi)))),
			log:   true,
			ticks: logTicks{},
		}
	}
	if hi == 0 {
		hi = 1
	}
	return axisSpec{min: 0, max: hi * 1.1, ticks: linearTicks{}}
}

// logTicks labels every power of ten, and 2 and 5 times it when the range
// spans at most two decades; the other integer multiples are minor ticks.
// Over more than maxMinorDecades decades only powers of ten are marked, and
// over more than maxLabelledDecades only every few are labelled. Its range
// and tick values are base-10 logarithms.
type logTicks struct{}

const (
	maxMinorDecades    = 6
	maxLabelledDecades = 8
)

// Ticks implements plot.Ticker.
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	first, last := int(math.Floor(lo)), int(math.Ceil(hi))
	decades := last - first
	few := decades <= 2
	every := max(1, (decades+maxLabelledDecades-1)/maxLabelledDecades)
	const eps = 1e-9
	var ticks []plot.Tick
	for e := first; e <= last; e++ {
		for m := 1; m <= 9; m++ {
			if m > 1 && decades > maxMinorDecades {
				break
			}
			v := float64(m) * math.Pow10(e)
			c := math.Log10(v)
			if c < lo-eps || c > hi+eps {
				continue
			}
			t := plot.Tick{Value: c}
			if (m == 1 && (e-first)%every == 0) || (few && (m == 2 || m == 5)) {
				t.Label = formatNumber(v)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// linearTicks are gonum's default ticks with thousands separated.
type linearTicks struct{}

// Ticks implements plot.Ticker.
func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i, t := range ticks {
		if t.Label != "" && math.Abs(t.Value) >= 1000 {
			ticks[i].Label = formatNumber(t.Value)
		}
	}
	return ticks
}

// formatNumber writes v with up to six significant digits, whole numbers
// from 1,000 to below 10^15 in full with thousands separators.
func formatNumber(v float64) string {
	if math.Abs(v) >= 1000 && math.Abs(v) < 1e15 && v == math.Trunc(v) {
		s := fmt.Sprintf("%.0f", math.Abs(v))
		var b strings.Builder
		if v < 0 {
			b.WriteByte('-')
		}
		for i, c := range s {
			if i > 0 && (len(s)-i)%3 == 0 {
				b.WriteByte(',')
			}
			b.WriteRune(c)
		}
		return b.String()
	}
	// Six significant digits round away binary noise such as
	// 0.30000000000000004.
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// draw draws the chart onto c, which must be of the chart's size.
func (ch *chart) draw(c vg.Canvas) {
	dc := draw.NewCanvas(c, ch.width, ch.height)
	dc.SetColor(color.White)
	dc.Fill(dc.Path())

	y := dc.Max.Y - margin
	for _, h := range ch.header {
		dc.FillText(h.style, vg.Point{X: dc.Center().X, Y: y}, h.text)
		y -= h.style.Rectangle(h.text).Size().Y
	}

	panels := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
		Min: vg.Point{X: margin, Y: margin + ch.legendHeight + gap},
		Max: vg.Point{X: ch.width - margin, Y: y - gap},
	}}
	tiles := draw.Tiles{Rows: len(ch.plots), Cols: len(ch.plots[0]), PadX: vg.Points(20), PadY: vg.Points(16)}
	canvases := plot.Align(ch.plots, tiles, panels)
	for r, row := range ch.plots {
		for col, pl := range row {
			if pl != nil {
				pl.Draw(canvases[r][col])
			}
		}
	}

	var total vg.Length
	widths := make([]vg.Length, len(ch.legends))
	for i := range ch.legends {
		widths[i] = ch.legends[i].Rectangle(draw.Canvas{}).Size().X
		total += widths[i]
	}
	total += vg.Length(len(ch.legends)-1) * legendGap
	x := dc.Center().X - total/2
	for i := range ch.legends {
		area := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x, Y: margin},
			Max: vg.Point{X: x + widths[i], Y: margin + ch.legendHeight},
		}}
		ch.legends[i].Draw(area)
		x += widths[i] + legendGap
	}
}
