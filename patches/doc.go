// Package patches cuts images into patches for convolutional Gaussian
// processes (van der Wilk et al. 2017, and the TICK kernel of Dutordoir et
// al. 2020), which treat every image patch as an input point of a GP on
// patches: f(x) = sum_p w_p g(x[p]).
//
// A Geometry, built by New from a Config, describes a batch of images (height,
// width, channels >= 1, NHWC or NCHW layout) and how patches are taken from
// them: patch size, stride, dilation and VALID, SAME (TensorFlow's split) or
// explicit zero padding. Impossible configurations are errors wrapping
// ErrConfig; slices of the wrong length are errors wrapping ErrShape; nothing
// panics on bad input (except Location, Origin and Center for an index out of
// range, like a slice index).
//
// The patch matrix of a batch (Im2Col) is row-major, one row per (image,
// patch): row n*NumPatches+p holds patch p of image n, patches numbered
// row-major over the output grid (see Location). Its PatchLen =
// PatchHeight*PatchWidth*Channels columns are in a documented order that
// inducing patches must share: ColumnsHWC (tap row, tap column, channel;
// channel fastest) or ColumnsCHW (channel, tap row, tap column), by default
// the one matching the layout. Taps in the padding are zeros.
//
// Col2Im is the exact adjoint of Im2Col (it sums overlapping patches back
// into the images), for gradients with respect to the images of deep
// convolutional GPs; Col2ImAdd accumulates into existing gradients. PackRows
// writes any block of the patch matrix straight into the micro-panel layout of
// the GEMM kernels of package blas, so a kernel matrix between image patches and
// inducing patches can be formed without materializing the patch matrix.
// Locations and Centers give each patch's position for location kernels.
//
// Copies run on the strided block kernels of package internal/vecmath (AVX-512, AVX2 and
// NEON, with a pure-Go twin under the purego or noasm build tags), parallel
// over images on up to Config.Workers goroutines. New picks one of three copy
// plans by a cost model: blocks of patches with the same clipping, read from
// the image itself; one block over a zero-padded copy of each image; or, for
// Im2Col where padding clips patches only at the left and right edges, bands
// of patch rows copied as if unclipped (the clipped taps read the
// neighbouring image row) whose over-read taps are then zeroed. Values are
// moved bit for bit (NaN and Inf included) and results do not depend on the
// plan, the number of workers or the SIMD backend.
package patches
