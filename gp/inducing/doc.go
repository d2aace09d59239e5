// Package inducing chooses initial inducing inputs for the sparse GP
// models: k-means++ seeding refined by Lloyd's iterations (KMeans) on a
// random subsample of the data, and Init, which splits the centres into
// the inducing inputs Z and the orthogonal inducing inputs O of SOLVE-GP;
// and greedy conditional-variance selection of data points (Greedy, a
// partial pivoted Cholesky factorization of K_ff), with GreedyGiven, which
// chooses O by the residual variance of the orthogonal process given Z,
// and GreedyInit, its counterpart of Init.
package inducing
