package main

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/solvegp/solvegp/internal/figure"
)

// colourValid marks validation curves; the rest of the palette is figure's.
var colourValid = color.RGBA{R: 255, G: 127, B: 14, A: 255}

// plotCurves draws the training curves: the mean mini-batch bound per
// epoch and, when there was a validation set, the validation
// log-likelihood and RMSE or accuracy.
func plotCurves(path string, hist []epochRecord, title string) error {
	if len(hist) == 0 {
		return fmt.Errorf("no completed epoch to plot in %s", path)
	}
	bound := plot.New()
	bound.Title.Text = title + ": bound per epoch"
	bound.X.Label.Text = "epoch"
	bound.Y.Label.Text = "mean mini-batch ELBO"
	var pts plotter.XYs
	for _, h := range hist {
		if h.Bound != nil { // nil: every step of the epoch was rejected
			pts = append(pts, plotter.XY{X: float64(h.Epoch), Y: *h.Bound})
		}
	}
	if err := addLine(bound, pts, figure.ColourMean, "bound"); err != nil {
		return err
	}
	row := []*plot.Plot{bound}
	var ll, second plotter.XYs
	secondName := "validation RMSE"
	for _, h := range hist {
		if h.ValidLL != nil {
			ll = append(ll, plotter.XY{X: float64(h.Epoch), Y: *h.ValidLL})
		}
		switch {
		case h.ValidRMSE != nil:
			second = append(second, plotter.XY{X: float64(h.Epoch), Y: *h.ValidRMSE})
		case h.ValidAcc != nil:
			second = append(second, plotter.XY{X: float64(h.Epoch), Y: *h.ValidAcc})
			secondName = "validation accuracy"
		}
	}
	if len(ll) > 0 {
		p := plot.New()
		p.Title.Text = "validation log-likelihood"
		p.X.Label.Text = "epoch"
		p.Y.Label.Text = "mean log p(y | x)"
		if err := addLine(p, ll, colourValid, "log-lik"); err != nil {
			return err
		}
		row = append(row, p)
	}
	if len(second) > 0 {
		p := plot.New()
		p.Title.Text = secondName
		p.X.Label.Text = "epoch"
		if err := addLine(p, second, figure.ColourZ, secondName); err != nil {
			return err
		}
		row = append(row, p)
	}
	return figure.SavePNG(path, [][]*plot.Plot{row}, vg.Length(len(row))*4.5*vg.Inch, 3.5*vg.Inch)
}

func addLine(p *plot.Plot, pts plotter.XYs, c color.Color, name string) error {
	l, s, err := plotter.NewLinePoints(pts)
	if err != nil {
		return err
	}
	l.Color, s.Color, s.Radius = c, c, vg.Points(1.5)
	p.Add(l, s)
	p.Add(plotter.NewGrid())
	return nil
}
