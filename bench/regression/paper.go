package main

// paperValue is one cell of the paper's tables: mean and standard error over
// 5 random splits.
type paperValue struct {
	Mean, SE float64
}

// paperCell holds the paper's test log-likelihood and RMSE of one model on
// one data set.
type paperCell struct {
	LL, RMSE paperValue
}

// paperN is the training-set size of each data set in the paper's tables
// (after the test and validation hold-outs).
var paperN = map[string]int{
	"elevators": 10623, "bike": 11122, "kin40k": 25600, "protein": 29267,
	"keggdirected": 31248, "keggundirected": 40708,
}

// paperResults are Tables 2 (test log-likelihood), 5 (test RMSE) and 6
// (Elevators and Bike) of the SOLVE-GP paper, keyed by model label and data
// set, for comparison with our runs.
var paperResults = map[string]map[string]paperCell{
	"SVGP 1024": {
		"elevators":      {paperValue{-0.516, 0.006}, paperValue{0.398, 0.004}},
		"bike":           {paperValue{-0.218, 0.006}, paperValue{0.283, 0.003}},
		"kin40k":         {paperValue{0.094, 0.003}, paperValue{0.193, 0.001}},
		"protein":        {paperValue{-0.963, 0.006}, paperValue{0.630, 0.004}},
		"keggdirected":   {paperValue{0.967, 0.005}, paperValue{0.098, 0.003}},
		"keggundirected": {paperValue{0.678, 0.004}, paperValue{0.123, 0.001}},
	},
	"SVGP 1536": {
		"elevators":      {paperValue{-0.511, 0.007}, paperValue{0.396, 0.004}},
		"bike":           {paperValue{-0.203, 0.006}, paperValue{0.279, 0.003}},
		"kin40k":         {paperValue{0.129, 0.003}, paperValue{0.182, 0.001}},
		"protein":        {paperValue{-0.949, 0.005}, paperValue{0.621, 0.004}},
		"keggdirected":   {paperValue{0.944, 0.006}, paperValue{0.098, 0.002}},
		"keggundirected": {paperValue{0.673, 0.004}, paperValue{0.123, 0.001}},
	},
	"ODVGP 1024+1024": {
		"elevators":      {paperValue{-0.518, 0.006}, paperValue{0.397, 0.004}},
		"bike":           {paperValue{-0.191, 0.006}, paperValue{0.272, 0.003}},
		"kin40k":         {paperValue{0.137, 0.003}, paperValue{0.183, 0.001}},
		"protein":        {paperValue{-0.956, 0.005}, paperValue{0.625, 0.004}},
		"keggdirected":   {paperValue{-0.199, 0.067}, paperValue{0.176, 0.012}},
		"keggundirected": {paperValue{0.105, 0.033}, paperValue{0.156, 0.004}},
	},
	"ODVGP 1024+8096": {
		"elevators":      {paperValue{-0.523, 0.006}, paperValue{0.399, 0.004}},
		"bike":           {paperValue{-0.186, 0.006}, paperValue{0.270, 0.003}},
		"kin40k":         {paperValue{0.144, 0.002}, paperValue{0.180, 0.001}},
		"protein":        {paperValue{-0.946, 0.005}, paperValue{0.618, 0.004}},
		"keggdirected":   {paperValue{-0.136, 0.063}, paperValue{0.157, 0.009}},
		"keggundirected": {paperValue{0.109, 0.033}, paperValue{0.157, 0.004}},
	},
	"SOLVE-GP 1024+1024": {
		"elevators":      {paperValue{-0.509, 0.007}, paperValue{0.395, 0.004}},
		"bike":           {paperValue{-0.189, 0.006}, paperValue{0.272, 0.003}},
		"kin40k":         {paperValue{0.187, 0.002}, paperValue{0.172, 0.001}},
		"protein":        {paperValue{-0.943, 0.005}, paperValue{0.618, 0.004}},
		"keggdirected":   {paperValue{0.973, 0.003}, paperValue{0.095, 0.002}},
		"keggundirected": {paperValue{0.680, 0.003}, paperValue{0.123, 0.001}},
	},
	"SVGP 2048": {
		"elevators":      {paperValue{-0.507, 0.007}, paperValue{0.395, 0.004}},
		"bike":           {paperValue{-0.193, 0.006}, paperValue{0.276, 0.003}},
		"kin40k":         {paperValue{0.137, 0.003}, paperValue{0.177, 0.001}},
		"protein":        {paperValue{-0.940, 0.005}, paperValue{0.615, 0.004}},
		"keggdirected":   {paperValue{0.907, 0.003}, paperValue{0.100, 0.003}},
		"keggundirected": {paperValue{0.665, 0.004}, paperValue{0.124, 0.001}},
	},
}
