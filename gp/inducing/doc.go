// Package inducing chooses initial inducing inputs for the sparse GP
// models: k-means++ seeding refined by Lloyd's iterations (KMeans) on a
// random subsample of the data, and Init, which splits the centres into
// the inducing inputs Z and the orthogonal inducing inputs O of SOLVE-GP.
package inducing
