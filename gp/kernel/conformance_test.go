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

// The kernels beyond the stationary family satisfy gp.Kernel and gp.Cloner too.
var (
	_ gp.Kernel = (*kernel.Periodic)(nil)
	_ gp.Kernel = (*kernel.RationalQuadratic)(nil)
	_ gp.Kernel = (*kernel.Polynomial)(nil)
	_ gp.Kernel = (*kernel.Constant)(nil)
	_ gp.Kernel = (*kernel.White)(nil)
	_ gp.Kernel = (*kernel.Active)(nil)
	_ gp.Cloner = (*kernel.Periodic)(nil)
	_ gp.Cloner = (*kernel.RationalQuadratic)(nil)
	_ gp.Cloner = (*kernel.Polynomial)(nil)
	_ gp.Cloner = (*kernel.Constant)(nil)
	_ gp.Cloner = (*kernel.White)(nil)
	_ gp.Cloner = (*kernel.Active)(nil)
)
