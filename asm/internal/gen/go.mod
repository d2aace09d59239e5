module github.com/solvegp/solvegp/asm/internal/gen

go 1.24.0
