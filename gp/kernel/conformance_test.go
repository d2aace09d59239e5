package kernel_test

import (
	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/kernel"
)

// Every kernel satisfies gp.Kernel.
var (
	_ gp.Kernel = (*kernel.Stationary)(nil)
	_ gp.Kernel = (*kernel.Sum)(nil)
	_ gp.Kernel = (*kernel.Product)(nil)
)

// Every kernel can copy itself for gp.Predictor's snapshots.
var (
	_ gp.Cloner = (*kernel.Stationary)(nil)
	_ gp.Cloner = (*kernel.Sum)(nil)
	_ gp.Cloner = (*kernel.Product)(nil)
)
