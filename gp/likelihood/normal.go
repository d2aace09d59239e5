package likelihood

import "math"

const (
	invSqrt2   = 1 / math.Sqrt2
	invSqrt2Pi = 0.3989422804014327 // 1/√(2π)
	logSqrt2Pi = 0.9189385332046728 // log √(2π)
	tailCut    = -20.0              // below it Φ is evaluated by the Mills ratio
)

// normPDF returns the standard normal density φ(x).
func normPDF(x float64) float64 { return invSqrt2Pi * math.Exp(-0.5*x*x) }

// normCDF returns Φ(x).
func normCDF(x float64) float64 { return 0.5 * math.Erfc(-x*invSqrt2) }

// millsRatio returns R(t) = Φ(−t)/φ(t) for t ≥ −tailCut by Laplace's
// continued fraction R = 1/(t + 1/(t + 2/(t + 3/(t + …)))), evaluated from
// a fixed depth (ample for t ≥ 20, where the fraction converges fast).
func millsRatio(t float64) float64 {
	const depth = 60
	d := t
	for k := depth; k >= 1; k-- {
		d = t + float64(k)/d
	}
	return 1 / d
}

// logNormCDF returns log Φ(x) accurately for every x, without underflow.
func logNormCDF(x float64) float64 {
	switch {
	case x > 0:
		// Φ(x) = 1 − Φ(−x); log1p keeps the tiny tail exact.
		return math.Log1p(-0.5 * math.Erfc(x*invSqrt2))
	case x > tailCut:
		return math.Log(normCDF(x))
	default:
		// Φ(x) = φ(x) R(−x).
		return -0.5*x*x - logSqrt2Pi + math.Log(millsRatio(-x))
	}
}

// invMills returns λ(x) = φ(x)/Φ(x), the derivative of log Φ(x).
func invMills(x float64) float64 {
	if x > tailCut {
		return normPDF(x) / normCDF(x)
	}
	return 1 / millsRatio(-x)
}

// logNormCDFMills returns log Φ(x) and λ(x) = φ(x)/Φ(x) together, with one
// evaluation of Φ.
func logNormCDFMills(x float64) (logPhi, lambda float64) {
	if x <= tailCut {
		r := millsRatio(-x)
		return -0.5*x*x - logSqrt2Pi + math.Log(r), 1 / r
	}
	pdf := normPDF(x)
	if x > 0 {
		tail := 0.5 * math.Erfc(x*invSqrt2) // Φ(−x)
		return math.Log1p(-tail), pdf / (1 - tail)
	}
	phi := normCDF(x)
	return math.Log(phi), pdf / phi
}
