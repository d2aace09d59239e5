module github.com/solvegp/solvegp/internal/asmgen

go 1.24.0
