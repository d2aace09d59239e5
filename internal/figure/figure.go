// Package figure draws the plots shared by the command-line tool and the
// benchmark programs: the posterior panels of the SOLVE-GP paper's Figure 3
// (Snelson's 1D data) and the tiled, atomically written PNG they go in.
package figure

import (
	"bytes"
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/solvegp/solvegp/internal/atomicfile"
)

// The palette of the project's figures.
var (
	ColourMean  = color.RGBA{R: 31, G: 119, B: 180, A: 255}
	ColourBand  = color.NRGBA{R: 31, G: 119, B: 180, A: 60}
	ColourData  = color.RGBA{R: 80, G: 80, B: 80, A: 255}
	ColourZ     = color.RGBA{R: 214, G: 39, B: 40, A: 255}
	ColourODVGP = color.RGBA{R: 30, G: 60, B: 220, A: 255}
	ColourSOLVE = color.RGBA{A: 255}
)

// Panel is one posterior panel: the predictive mean and standard deviation
// of y on a 1D grid, and the inducing inputs Z and O to mark.
type Panel struct {
	Title          string
	Grid, Mean, SD []float64
	Z, O           []float64
	// ODVGP marks O in ODVGP's colour instead of SOLVE-GP's.
	ODVGP bool
}

// Model is what a posterior panel needs of a one-dimensional model. It is
// a struct of values rather than a model type so that this package, which
// only draws, depends on no model package.
type Model struct {
	// PredictY returns the predictive mean and variance of y at the rows
	// of x (one column each).
	PredictY func(x mat.Matrix) (mean, variance *mat.Dense, err error)
	// Z and O are the inducing inputs to mark, one per row; O may be nil.
	Z, O *mat.Dense
	// ODVGP marks O in ODVGP's colour instead of SOLVE-GP's.
	ODVGP bool
}

// Posterior evaluates a one-dimensional model's predictive mean and
// standard deviation of y on the grid (one point per row) into a Panel.
func Posterior(model Model, grid *mat.Dense, title string) (Panel, error) {
	mean, variance, err := model.PredictY(grid)
	if err != nil {
		return Panel{}, err
	}
	n, _ := grid.Dims()
	pan := Panel{Title: title, Grid: mat.Col(nil, 0, grid), Mean: mat.Col(nil, 0, mean), SD: make([]float64, n),
		Z: mat.Col(nil, 0, model.Z), ODVGP: model.ODVGP}
	for i := range pan.SD {
		pan.SD[i] = math.Sqrt(math.Max(variance.At(i, 0), 0))
	}
	if model.O != nil {
		pan.O = mat.Col(nil, 0, model.O)
	}
	return pan, nil
}

// Layout arranges the posterior panels.
type Layout struct {
	// Cols is the number of panels per row; 0 puts them all in one row.
	Cols int
	// Width and Height are the image size; 0 means 4 × 3.4 inches per panel.
	Width, Height vg.Length
	// Legend adds a legend (and head room for it) to every panel.
	Legend bool
	// YLimit, if positive, clips the vertical range to [−YLimit, YLimit].
	YLimit float64
}

// Posteriors draws the panels — ±3 sd band, mean, training data (x, y),
// Z as + and O as triangles below the data — on a common vertical scale
// and writes them to path as a PNG, atomically.
func Posteriors(path string, panels []Panel, x *mat.Dense, y []float64, lay Layout) error {
	if len(panels) == 0 {
		return fmt.Errorf("figure: no panels for %s", path)
	}
	ylo, yhi := math.Inf(1), math.Inf(-1)
	for _, v := range y {
		ylo, yhi = math.Min(ylo, v), math.Max(yhi, v)
	}
	for _, p := range panels {
		for i := range p.Mean {
			ylo, yhi = math.Min(ylo, p.Mean[i]-3*p.SD[i]), math.Max(yhi, p.Mean[i]+3*p.SD[i])
		}
	}
	if lay.YLimit > 0 {
		ylo, yhi = math.Max(ylo, -lay.YLimit), math.Min(yhi, lay.YLimit)
	}
	span := yhi - ylo
	zRow, oRow := ylo-0.06*span, ylo-0.12*span
	cols := lay.Cols
	if cols <= 0 || cols > len(panels) {
		cols = len(panels)
	}
	rows := (len(panels) + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for r := range grid {
		grid[r] = make([]*plot.Plot, cols)
	}
	for k, pan := range panels {
		p, err := posteriorPlot(pan, x, y, zRow, oRow, lay.Legend)
		if err != nil {
			return err
		}
		p.Y.Min, p.Y.Max = oRow-0.05*span, yhi+0.02*span
		if lay.Legend {
			p.Y.Max = yhi + 0.3*span // room for the legend
		}
		grid[k/cols][k%cols] = p
	}
	w, h := lay.Width, lay.Height
	if w == 0 || h == 0 {
		w, h = vg.Length(cols)*4*vg.Inch, vg.Length(rows)*3.4*vg.Inch
	}
	return SavePNG(path, grid, w, h)
}

// posteriorPlot draws one panel.
func posteriorPlot(pan Panel, x *mat.Dense, y []float64, zRow, oRow float64, legend bool) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = pan.Title
	p.X.Label.Text = "x"
	band := make(plotter.XYs, 0, 2*len(pan.Grid))
	for i := range pan.Grid {
		band = append(band, plotter.XY{X: pan.Grid[i], Y: pan.Mean[i] + 3*pan.SD[i]})
	}
	for i := len(pan.Grid) - 1; i >= 0; i-- {
		band = append(band, plotter.XY{X: pan.Grid[i], Y: pan.Mean[i] - 3*pan.SD[i]})
	}
	poly, err := plotter.NewPolygon(band)
	if err != nil {
		return nil, err
	}
	poly.Color, poly.LineStyle.Width = ColourBand, 0
	ml := make(plotter.XYs, len(pan.Grid))
	for i := range pan.Grid {
		ml[i] = plotter.XY{X: pan.Grid[i], Y: pan.Mean[i]}
	}
	line, err := plotter.NewLine(ml)
	if err != nil {
		return nil, err
	}
	line.Color, line.Width = ColourMean, vg.Points(1.5)
	pts := make(plotter.XYs, len(y))
	for i := range y {
		pts[i] = plotter.XY{X: x.At(i, 0), Y: y[i]}
	}
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, err
	}
	sc.GlyphStyle.Color, sc.GlyphStyle.Radius, sc.GlyphStyle.Shape = ColourData, vg.Points(1.5), draw.CircleGlyph{}
	zsc, err := markers(pan.Z, zRow, ColourZ, vg.Points(4), draw.PlusGlyph{})
	if err != nil {
		return nil, err
	}
	p.Add(poly, line, sc, zsc)
	if legend {
		p.Legend.Add("mean", line)
		p.Legend.Add("±3 sd", poly)
		p.Legend.Add("Z", zsc)
	}
	if len(pan.O) > 0 {
		c := ColourSOLVE
		if pan.ODVGP {
			c = ColourODVGP
		}
		osc, err := markers(pan.O, oRow, c, vg.Points(2.5), draw.TriangleGlyph{})
		if err != nil {
			return nil, err
		}
		p.Add(osc)
		if legend {
			p.Legend.Add("O", osc)
		}
	}
	if legend {
		p.Legend.Top, p.Legend.Left, p.Legend.Padding = true, true, vg.Points(2)
	}
	p.X.Min, p.X.Max = pan.Grid[0], pan.Grid[len(pan.Grid)-1]
	return p, nil
}

// markers draws the inputs at as glyphs on the horizontal line y = row.
func markers(at []float64, row float64, c color.Color, r vg.Length, shape draw.GlyphDrawer) (*plotter.Scatter, error) {
	xy := make(plotter.XYs, len(at))
	for i, v := range at {
		xy[i] = plotter.XY{X: v, Y: row}
	}
	s, err := plotter.NewScatter(xy)
	if err != nil {
		return nil, err
	}
	s.GlyphStyle.Color, s.GlyphStyle.Radius, s.GlyphStyle.Shape = c, r, shape
	return s, nil
}

// SavePNG renders plots tiled in rows and columns (nil entries stay empty)
// into a w×h PNG and writes it to path atomically.
func SavePNG(path string, plots [][]*plot.Plot, w, h vg.Length) error {
	img := vgimg.New(w, h)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(plots), Cols: len(plots[0]), PadTop: vg.Points(6), PadBottom: vg.Points(6),
		PadLeft: vg.Points(6), PadRight: vg.Points(10), PadX: vg.Points(16), PadY: vg.Points(16)}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		for j, p := range plots[i] {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
		return fmt.Errorf("figure: rendering %s: %w", path, err)
	}
	return atomicfile.WriteFile(path, buf.Bytes(), 0o644)
}
