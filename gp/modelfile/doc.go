// Package modelfile saves trained gp models to, and loads them from, the
// versioned solvegp model-file format: one JSON document holding everything
// needed to predict — the variational family (SVGP, ODVGP or SOLVE-GP) and
// its parameterization, the kernel and the likelihood with their
// hyperparameters, the inducing inputs Z and orthogonal inducing inputs O,
// q(u) and q(v⊥) as the model's flat parameter vector together with its
// layout, and the standardization of inputs and targets. The format is
// documented field by field in docs/model-format.md.
//
// Round trips are exact: every float64 is written as the shortest decimal
// that parses back to the same bits, so a loaded model predicts bit-for-bit
// what the saved one did. SHA-256 digests of the parameter vector and of
// everything else that affects a prediction, the standardization included,
// detect corrupted or edited files (files of format versions 1 and 2 have only the
// first, and load with Bundle.Unchecked saying so); a file of a newer
// format version, or one that is not valid, is rejected with an error that says why (and, for syntax errors,
// where: line and column).
//
// Save writes atomically: the document goes to a temporary file in the
// destination's directory, is flushed to stable storage and then renamed
// over the destination, so a failure at any point leaves an earlier file of
// the same name intact; the file keeps its permissions. A symbolic link is
// written through to its target, and a device or FIFO (/dev/null, a pipe)
// is written directly, not replaced.
//
// Model options that a gp.Model does not expose — jitter policies, ODVGP
// column sampling, the random seed and thread count — are not stored; a
// loaded model uses the gp defaults for them, which affect predictions only
// through the jitter added to near-singular K_uu or C_vv.
//
// The format knows the kernels of package kernel (Stationary, Periodic,
// RationalQuadratic, Polynomial, Constant and White kernels, Active
// restrictions of any of them to input columns, and sums and products) and
// the likelihoods of package likelihood,
// the only ones it can rebuild on Load. Marshal and Save return an error
// for a model with any other kernel or likelihood — a type of your own,
// also as a part of a kernel.Sum or kernel.Product — and for an
// inter-domain kernel such as convgp's. Such a model can still predict in
// original units through a Bundle (Bundle.Predictor needs no file; with a
// likelihood of several latent functions, only for a target that is not
// standardized); to
// keep it, save its parameter vector (gp.Model.Params) and rebuild the
// model with the same constructor and SetParams. Marshal and Save also
// refuse a model whose kernel or likelihood had its parameters set
// directly rather than by gp.Model.SetParams (see gp.NewSVGP).
package modelfile
