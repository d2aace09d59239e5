// Package convgp implements convolutional Gaussian-process kernels for image
// classification with the SVGP and SOLVE-GP models of package gp: the
// convolutional kernel of van der Wilk et al. (2017) and the
// translation-insensitive convolutional (TICK) kernel of Dutordoir et al.
// (2020).
//
// A convolutional GP is f(x) = Σ_p w_p g(x[p]), where x[p] is patch p of image
// x (cut by package patches), w_p a learnable weight per patch location and g
// a GP on patches with an RBF kernel k_g. Its inducing variables are values of
// g at inducing patches z (inter-domain inducing variables), so the model needs
//
//	k_u(z, z')  = k_g(z, z')                           (inducing × inducing)
//	k_uf(z, x)  = Σ_p w_p k_g(z, x[p])                 (inducing × image)
//	k_ff(x, x)  = Σ_{p,p'} w_p w_p' k_g(x[p], x[p'])   (image variance)
//
// The TICK kernel multiplies the patch kernel by a Matérn-3/2 kernel k_l on
// patch locations (output-grid row and column): inducing points then carry a
// patch and a location (z, l), k_uf((z,l), x) = Σ_p w_p k_g(z, x[p]) k_l(l, l_p)
// and k_ff(x, x) = Σ_{p,p'} w_p w_p' k_g(x[p], x[p']) k_l(l_p, l_p').
//
// Kernel implements gp.Kernel with the convention that the first argument of
// Matrix and MatrixGrad holds inducing points (rows of InducingDim columns:
// the patch in the column order of the patch geometry, then for TICK the
// location row and column) and the second holds images (rows of Dim columns,
// flattened in the geometry's layout); InducingMatrix and InducingMatrixGrad
// give the covariance among inducing points. All products of patches with
// inducing patches go through the level-3 BLAS of package blas, one image at
// a time per worker, so memory stays O(M·P) per worker for M inducing points
// and P patches per image; gradients with respect to images are formed on the
// patch matrix and summed back into the images with Col2Im, so that
// convolutional layers can be stacked. Kernel satisfies gp.InterDomainKernel,
// so the SVGP and SOLVE-GP models of package gp use it directly. Because a
// training step evaluates Matrix and Diag and then their gradients on the
// same images, the kernel keeps what the gradients need from the last calls
// (the per-patch exponentials of Matrix, the per-image gradient pieces of
// Diag), keyed by exact copies of the inputs and a parameter generation; the
// backward pass then computes no exponential, and results are bitwise the
// same with or without the cache.
//
// InitInducing initializes inducing patches as the SOLVE-GP paper does
// (k-means on (M + M₂)·100 patches of 1000 random images; random TICK
// locations).
//
// Deep is a (deep) convolutional GP classifier: hidden layers of
// patch-response GPs (one gp.Model per layer with C latent functions, one
// per output channel) whose sampled feature maps feed the next layer through
// im2col, and a convolutional or TICK output layer with a RobustMax
// likelihood, trained by doubly stochastic variational inference (Salimbeni &
// Deisenroth 2017) with SVGP or SOLVE-GP in every layer. Hidden layers can
// have a learnable linear mean function and start near-deterministic
// (DeepConfig.LinearMean, HiddenVariance, HiddenInitVar); the output layer
// can have a learnable mean per class, a constant or linear one
// (DeepConfig.OutputMean). Its Objective and
// gradient plug into gp/train.Fit; Evaluate gives accuracy and mean log
// predictive density. With no hidden layers it is the single-layer
// convolutional GP of the paper's Table 1.
package convgp
